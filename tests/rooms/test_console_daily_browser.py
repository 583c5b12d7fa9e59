"""The console for daily use in Chromium: review from the keyboard, every page at 390 px, dark
mode. Screenshots land in artifacts/ (desktop, phone, dark)."""

import re

import pytest
from playwright.sync_api import expect

from tests.browser import sign_in
from tests.rooms.test_console_browser import (  # noqa: F401 - fixtures
    ARTIFACTS,
    agent_token,
    browser,
    people,
    screenshot,
    uvicorn_server,
)

pytestmark = pytest.mark.django_db(transaction=True)

CURRENT = re.compile(r"\bis-current\b")


def page_for(chromium, base, username, *, width=1360, height=900, dark=False):
    context = chromium.new_context(
        viewport={"width": width, "height": height}, color_scheme="dark" if dark else "light"
    )
    return sign_in(context.new_page(), base, username)


def many_files(files):
    out = dict(files)
    for index in (1, 2, 10, 11):
        out[f"src/w/W{index}.ts"] = f"export const w{index} = {index};\n"
    return out


def propose(room, agent, files, name, key):
    from tests.rooms.runtime_support import propose as propose_off_loop

    return propose_off_loop(room, agent, files, name=name, key=key)


def test_review_from_the_keyboard(uvicorn_server, browser, people, files):  # noqa: F811
    proposal = propose(people["room"], people["agent"], many_files(files), "Keys", "keys-0001")
    page = page_for(browser, uvicorn_server, "owner")
    page.goto(f"{uvicorn_server}/proposals/{proposal.pk}/")
    tree = page.locator("[data-file-list] li[data-path]")
    expect(tree).to_have_count(6)
    assert tree.all_text_contents()[0].startswith("W1.ts")  # folders first, natural order
    page.keyboard.press("j")
    first = page.locator("[data-file]").nth(0)
    expect(first).to_have_class(CURRENT)
    page.keyboard.press("j")
    second = page.locator("[data-file]").nth(1)
    expect(second).to_have_class(CURRENT)
    expect(page.locator("[data-file-list] li.current")).to_have_attribute(
        "data-path", second.get_attribute("data-path")
    )
    page.keyboard.press("v")
    expect(second.locator("[data-viewed]")).to_be_checked()
    page.keyboard.press("k")
    expect(first).to_have_class(CURRENT)
    page.keyboard.press("t")
    expect(page.locator("[data-file-filter]")).to_be_focused()
    page.keyboard.type("W1")
    expect(page.locator("[data-file]:visible")).to_have_count(3)  # W1, W10, W11
    expect(page.locator("[data-file-list] li[data-dir]:visible")).to_have_count(2)
    page.keyboard.press("Escape")
    page.keyboard.press("?")
    expect(page.locator("[data-keys-help]")).to_be_visible()
    screenshot(page, "card-keys.png")


PAGES = ["/", "/proposals/{proposal}/", "/rooms/{room}/", "/no/such/page/", "/api/v1/docs"]


@pytest.mark.parametrize("dark", [False, True], ids=["light", "dark"])
def test_every_page_fits_a_phone(uvicorn_server, browser, people, files, dark):  # noqa: F811
    proposal = propose(people["room"], people["agent"], files, "Phone", f"phone-{dark:d}-01")
    page = page_for(browser, uvicorn_server, "owner", width=390, height=844, dark=dark)
    for path in PAGES:
        page.goto(uvicorn_server + path.format(proposal=proposal.pk, room=people["room"].pk))
        width = page.evaluate("document.documentElement.scrollWidth")
        assert width <= page.evaluate("window.innerWidth"), (path, width)
        name = path.strip("/").replace("/", "-").split("-")[0] or "inbox"
        screenshot(page, f"phone-{name}{'-dark' if dark else ''}.png")
    # The account menu opens on a phone and holds what the bar has no room for.
    page.goto(uvicorn_server + "/")
    page.locator("[data-usermenu] summary").click()
    expect(page.get_by_role("link", name="Two-factor")).to_be_visible()
    expect(page.get_by_role("link", name="Password")).to_be_visible()
    # The card's decision is a bar at the bottom, and approving from it works.
    page.goto(f"{uvicorn_server}/proposals/{proposal.pk}/")
    bar = page.locator("[data-decision-bar]")
    expect(bar).to_be_visible()
    bar.get_by_role("button", name="Approve").click()
    page.get_by_role("button", name="Approve anyway").click()  # no file was marked viewed
    expect(page.locator("[data-decision-status]")).to_have_text("Approved")
    assert (ARTIFACTS / "phone-proposals.png").exists()
