"""In headless Chromium: the card shows what runs. Hidden characters as visible, named markers
with a banner, a long line one click away that scrolls inside its box or wraps on request (the
choice remembered), no page wider than a 390 px phone, and one question before approving files
not marked viewed. Screenshots (desktop 1280 and phone 390) land in artifacts/."""

import re
from pathlib import Path

import httpx
import pytest
from django.conf import settings
from playwright.sync_api import expect

from rooms.models import Proposal
from tests.rooms.corpus import case_files
from tests.rooms.runtime_support import approved_app, log_in, propose

pytestmark = pytest.mark.django_db(transaction=True)

ARTIFACTS = Path(settings.BASE_DIR) / "artifacts"
PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1280, "height": 900}
# Whatever a page's width, the document must not be wider than the screen.
FITS = "document.documentElement.scrollWidth <= window.innerWidth"
# Characters that must never reach the page as themselves, once the emoji sequences that use
# them as Unicode intends (a heart, the Scottish flag) are set aside.
INVISIBLE = r"/[\u200B\u2060\u3164\u00AD\uFE0F\u{E0000}-\u{E007F}]/u"
EMOJI = ["\u2764\ufe0f", "\U0001f3f4\U000e0067\U000e0062\U000e0073\U000e0063\U000e0074\U000e007f"]


def screenshot(page, name):
    ARTIFACTS.mkdir(exist_ok=True)
    page.evaluate("window.scrollTo(0, 0)")  # a sticky top bar is drawn where the page scrolled
    page.screenshot(path=str(ARTIFACTS / name), full_page=True)


def new_page(browser, live_server_url, user, viewport):
    expect.set_options(timeout=15000)  # others run tests on this machine too
    context = browser.new_context(viewport=viewport)
    context.set_default_timeout(15000)
    log_in(context, live_server_url, user)
    page = context.new_page()
    dialogs = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    page.dialogs = dialogs
    return page


def hidden_files():
    files = dict(case_files("zero-width"))
    files["src/util.ts"] = "export const joiner = 'x\u2060y';\n"
    files["src/auth.tsx"] = case_files("trojan-homoglyph")["src/App.tsx"]
    return files


def test_the_card_reveals_hidden_characters_as_named_markers_with_banners(
    browser, live_server_url, room, owner, agent
):
    proposal = propose(room, agent, hidden_files(), name="Hidden characters")
    for viewport, suffix in ((DESKTOP, "desktop"), (PHONE, "390")):
        page = new_page(browser, live_server_url, owner, viewport)
        page.goto(f"{live_server_url}/proposals/{proposal.pk}/")
        app = page.locator('[data-file][data-path="src/App.tsx"]')
        expect(app.locator("[data-reveal-banner]")).to_contain_text("13 hidden characters")
        expect(app.locator(".uc-hidden")).to_have_count(13)
        space = app.locator('.uc-hidden[data-codepoint="U+200B"]')
        expect(space).to_have_text("⟨U+200B⟩")
        expect(space).to_have_attribute("title", "U+200B ZERO WIDTH SPACE")
        expect(space).to_be_visible()
        # Keyboard users get the name too: focus shows it beside the marker.
        space.focus()
        tip = space.evaluate("el => getComputedStyle(el, '::after').content")
        assert tip == '"U+200B ZERO WIDTH SPACE"'
        auth = page.locator('[data-file][data-path="src/auth.tsx"]')
        expect(auth.locator("[data-reveal-banner]")).to_contain_text("2 words mix scripts")
        expect(auth.locator(".uc-mixed").first).to_contain_text("⟨Latin+Cyrillic⟩")
        panel = page.locator("[data-reveal-summary]")
        expect(panel.locator("[data-hidden-files]")).to_contain_text(
            "2 files contain hidden characters"
        )
        expect(panel.locator("[data-mixed-files]")).to_contain_text(
            "1 file has words that mix scripts"
        )
        code = page.locator(".review-main").evaluate("el => el.textContent")
        for emoji in EMOJI:
            code = code.replace(emoji, "")
        assert not page.evaluate(f"text => {INVISIBLE}.test(text)", code)
        assert page.evaluate(FITS)
        space.blur()
        screenshot(page, f"card-hidden-{suffix}.png")
        page.context.close()


def test_a_long_line_loads_in_one_click_scrolls_in_its_box_and_wraps_on_request(
    browser, live_server_url, room, owner, agent
):
    proposal = propose(room, agent, case_files("long-line"), name="Long line")
    page = new_page(browser, live_server_url, owner, DESKTOP)
    page.goto(f"{live_server_url}/proposals/{proposal.pk}/")
    words = page.locator('[data-file][data-path="src/words.ts"]')
    expect(words.locator("[data-large-note]")).to_have_text(
        "Not rendered yet: long line: 5,000 characters. Load file"
    )
    expect(words.locator(".file-meta")).to_have_text("1 line · 4.9\xa0KB")
    words.get_by_role("link", name="Load file").click()
    box = words.locator(".code")
    expect(box).to_be_visible()
    # The line scrolls inside its own box; the page stays as wide as the window.
    assert box.evaluate("el => el.scrollWidth > el.clientWidth + 1000")
    assert page.evaluate(FITS)
    page.get_by_label("Wrap lines").check()
    assert box.evaluate("el => el.scrollWidth <= el.clientWidth")
    screenshot(page, "card-long-line-desktop.png")
    page.reload()
    expect(page.get_by_label("Wrap lines")).to_be_checked()
    expect(page.locator("[data-review]")).to_have_class(re.compile(r"\bis-wrapped\b"))
    page.get_by_label("Wrap lines").uncheck()
    page.reload()
    expect(page.get_by_label("Wrap lines")).not_to_be_checked()
    page.context.close()


def test_no_page_is_wider_than_a_390px_phone(browser, live_server_url, room, owner, agent, files):
    approved_app(room, agent, files, name="Standup timer")
    long_line = propose(room, agent, case_files("long-line"), name="Long line")
    propose(room, agent, case_files("large-file"), name="Large file")
    page = new_page(browser, live_server_url, owner, PHONE)

    page.goto(f"{live_server_url}/")
    expect(page.locator("[data-pending-rows] tr")).to_have_count(2)
    assert page.evaluate(FITS), page.evaluate("document.documentElement.scrollWidth")
    screenshot(page, "inbox-390.png")

    page.goto(f"{live_server_url}/proposals/{long_line.pk}/")
    page.get_by_role("link", name="Load file").click()
    expect(page.locator('[data-path="src/words.ts"] .code')).to_be_visible()
    assert page.evaluate(FITS), page.evaluate("document.documentElement.scrollWidth")
    screenshot(page, "card-long-line-390.png")

    page.goto(f"{live_server_url}/rooms/{room.pk}/")
    expect(page.locator("[data-launcher] [role=tab]")).to_have_count(1)
    assert page.evaluate(FITS), page.evaluate("document.documentElement.scrollWidth")
    screenshot(page, "room-390.png")
    page.context.close()

    desktop = new_page(browser, live_server_url, owner, DESKTOP)
    for path, name in (("/", "inbox-desktop.png"), (f"/rooms/{room.pk}/", "room-desktop.png")):
        desktop.goto(f"{live_server_url}{path}")
        assert desktop.evaluate(FITS)
        screenshot(desktop, name)
    desktop.context.close()


def test_approving_asks_once_naming_the_files_not_viewed(
    browser, live_server_url, room, owner, agent
):
    proposal = propose(room, agent, case_files("large-file"), name="Large file")
    page = new_page(browser, live_server_url, owner, DESKTOP)
    page.goto(f"{live_server_url}/proposals/{proposal.pk}/")
    page.get_by_role("button", name="Approve and create").click()
    # The page's own question, naming the files not viewed and why the large one never showed.
    question = page.locator("[data-approve-confirm]")
    expect(question.get_by_role("heading")).to_have_text(
        re.compile(r"^\d+ of \d+ files not viewed — approve anyway\?$")
    )
    expect(question.locator("li", has_text="src/data.ts")).to_have_text(
        "src/data.ts (not loaded: large file: 180 KB)"
    )
    question.get_by_role("button", name="Keep reviewing").click()
    expect(page.locator("[data-approve]")).to_be_enabled()
    assert page.dialogs == []
    proposal.refresh_from_db()
    assert proposal.status == Proposal.Status.PENDING

    data = page.locator('[data-file][data-path="src/data.ts"]')
    data.get_by_role("link", name="Load file").click()
    expect(data.locator(".code")).to_be_visible()
    for viewed in page.locator("[data-viewed]").all():
        viewed.check()
    page.get_by_role("button", name="Approve and create").click()
    expect(page.locator("[data-decided]")).to_contain_text("Approved by owner on")
    assert page.dialogs == []
    proposal.refresh_from_db()
    assert proposal.status == Proposal.Status.APPROVED
    page.context.close()


def test_a_name_arriving_live_is_isolated_with_its_hidden_characters_shown(
    browser, live_server_url, room, owner, agent, files, token_factory
):
    page = new_page(browser, live_server_url, owner, DESKTOP)
    page.goto(f"{live_server_url}/")
    expect(page.locator("html[data-feeds-open='1']")).to_have_count(1)
    # Through the live server's API: its process publishes the event the page's feed follows.
    response = httpx.post(
        f"{live_server_url}/api/v1/rooms/{room.pk}/proposals/snippet",
        json={
            "name": "Ti\u200bmer \u05e9\u05dc\u05d5\u05dd",
            "files": files,
            "idempotency_key": "live-name-01",
        },
        headers={"Authorization": f"Bearer {token_factory(agent)}"},
        timeout=10,
    )
    assert response.status_code == 201, response.text
    row = page.locator("[data-pending-rows] tr")
    expect(row).to_have_count(1)
    expect(row.locator("a bdi")).to_have_text("Ti⟨U+200B⟩mer \u05e9\u05dc\u05d5\u05dd")
    expect(row.locator("td").first.locator("bdi")).to_have_text("Team Falcon")
    page.context.close()
