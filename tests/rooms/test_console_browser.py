# ruff: noqa: F811 - the fixtures imported from tests/browser.py
"""End to end in headless Chromium against a live uvicorn server (osfoundry.asgi:application).

An agent proposes through the REST API; the owner's open inbox shows it live; the owner reviews
and decides on the card; the tab appears live in a member's open Room page. Screenshots land in
the git-ignored artifacts/ folder.
"""

import json
import re

import httpx
import pytest

from agents.tokens import create_access_token
from rooms.models import LauncherApp, Proposal
from tests.browser import (  # noqa: F401 - fixtures, and what the console's browser tests import
    ARTIFACTS,
    PASSWORD,
    TIMEOUT_MS,
    browser,
    give_browser_password,
    screenshot,
    sign_in,
    uvicorn_server,
)

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def people(owner, member, agent, room):
    give_browser_password(owner, member)
    return {"owner": owner, "member": member, "agent": agent, "room": room}


@pytest.fixture
def agent_token(people):
    return create_access_token(user=people["agent"], scopes="osfoundry:read osfoundry:write")[1]


def login(browser, base, username):
    context = browser.new_context(viewport={"width": 1360, "height": 900})
    context.set_default_timeout(TIMEOUT_MS)
    page = context.new_page()
    if not (ARTIFACTS / "login.png").exists():
        page.goto(f"{base}/accounts/login/")
        screenshot(page, "login.png")
    return sign_in(page, base, username)


def wait_for_feed(page):
    from playwright.sync_api import expect

    # A locator, not wait_for_function: Playwright evaluates a predicate string with eval(),
    # which the console's Content-Security-Policy refuses.
    expect(page.locator("html")).to_have_attribute("data-feeds-open", re.compile(r"^[1-9]"))


def propose_via_api(base, token, room, files, *, name="Standup timer", key="browser-key-1"):
    response = httpx.post(
        f"{base}/api/v1/rooms/{room.pk}/proposals/snippet",
        json={"name": name, "files": files, "idempotency_key": key},
        headers={"Authorization": f"Bearer {token}"},
        timeout=10,
    )
    assert response.status_code == 201, response.text
    return response.json()


def test_proposal_reaches_the_inbox_then_the_member_tab_bar_live(
    uvicorn_server, browser, people, agent_token, files
):
    from playwright.sync_api import expect

    room = people["room"]
    inbox = login(browser, uvicorn_server, "owner")
    wait_for_feed(inbox)
    room_page = login(browser, uvicorn_server, "member")
    room_page.goto(f"{uvicorn_server}/rooms/{room.pk}/")
    wait_for_feed(room_page)
    room_page.evaluate("window.__notReloaded = true")

    created = propose_via_api(uvicorn_server, agent_token, room, files)

    row = inbox.locator("[data-pending-rows] tr", has_text="Standup timer")
    expect(row).to_be_visible()
    expect(row).to_contain_text("Team Falcon")
    expect(row).to_contain_text("agent")
    expect(inbox.locator("[data-pending-count]").first).to_have_text("1")
    screenshot(inbox, "inbox.png")

    row.get_by_role("link", name="Standup timer").click()
    card = inbox
    expect(card.get_by_role("heading", name="Review all proposed files (2)")).to_be_visible()
    expect(card.locator(".file .hl")).to_have_count(2)
    card.locator("[data-viewed]").first.check()
    expect(card.locator("[data-viewed-count]")).to_have_text("1/2 viewed")
    expect(card.locator("[data-file]").first).to_have_class("file is-collapsed")
    card.get_by_role("button", name="Expand all").click()
    card.fill("[data-file-filter]", "styles")
    expect(card.locator("[data-file]:visible")).to_have_count(1)
    card.fill("[data-file-filter]", "")
    screenshot(card, "card.png")

    card.get_by_role("button", name="Approve and create").click()
    # One of the two files not marked viewed: the card asks once.
    confirm = card.locator("[data-approve-confirm]")
    expect(confirm.get_by_role("heading")).to_have_text("1 of 2 files not viewed — approve anyway?")
    confirm.get_by_role("button", name="Approve anyway").click()
    expect(card.locator("[data-decided]")).to_contain_text("Approved by owner on")

    tab = room_page.locator("[data-launcher] [role=tab]", has_text="Standup timer")
    expect(tab).to_be_visible()
    app = LauncherApp.objects.get(proposal_id=created["proposal_id"])
    expect(tab).to_have_attribute("data-instance-id", str(app.pk))
    assert room_page.evaluate("window.__notReloaded") is True
    expect(room_page.locator("[data-app-area]")).to_have_count(1)

    # The new row arrived live with the check the proposal passed as its build state.
    expect(room_page.locator(f'tr[data-instance-id="{app.pk}"] [data-build-state]')).to_have_text(
        "Ready"
    )
    card.goto(f"{uvicorn_server}/rooms/{room.pk}/")
    tab.click()
    screenshot(room_page, "room.png")
    screenshot(card, "room-owner.png")


def test_decline_path(uvicorn_server, browser, people, agent_token, files):
    from playwright.sync_api import expect

    inbox = login(browser, uvicorn_server, "owner")
    wait_for_feed(inbox)
    created = propose_via_api(uvicorn_server, agent_token, people["room"], files, key="decline-1")
    link = inbox.locator("[data-pending-rows] a", has_text="Standup timer")
    expect(link).to_be_visible()
    link.click()
    inbox.get_by_text("Decline…").click()
    inbox.fill("#decline-reason", "Please use the design tokens")
    inbox.get_by_role("button", name="Decline").click()
    expect(inbox.locator("[data-decided]")).to_contain_text("Declined by owner on")
    expect(inbox.get_by_text("Reason: Please use the design tokens")).to_be_visible()
    proposal = Proposal.objects.get(pk=created["proposal_id"])
    assert proposal.status == Proposal.Status.DECLINED
    read = httpx.get(
        f"{uvicorn_server}/api/v1/proposals/{proposal.pk}",
        headers={"Authorization": f"Bearer {agent_token}"},
    )
    assert read.json()["decline_reason"] == "Please use the design tokens"
    inbox.goto(f"{uvicorn_server}/")
    expect(inbox.get_by_text("Nothing is waiting for you.")).to_be_visible()


def test_html_and_script_in_a_proposal_render_inert(
    uvicorn_server, browser, people, agent_token, files
):
    from playwright.sync_api import expect

    payload = '<img src=x onerror="window.__xss=1"><script>window.__xss=1</script>'
    # Runnable code that carries the payload: a proposal that cannot run is never stored.
    evil = {
        **files,
        f"src/{payload}.tsx": f"export const html = {json.dumps(payload)};\n",
        "src/App.tsx": files["src/App.tsx"] + f"\n// {payload}\n",
    }
    inbox = login(browser, uvicorn_server, "owner")
    dialogs = []
    inbox.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    wait_for_feed(inbox)
    room_page = login(browser, uvicorn_server, "member")
    room_page.goto(f"{uvicorn_server}/rooms/{people['room'].pk}/")
    wait_for_feed(room_page)

    propose_via_api(
        uvicorn_server, agent_token, people["room"], evil, name=payload, key="xss-00001"
    )
    row = inbox.locator("[data-pending-rows] tr", has_text="window.__xss")
    expect(row).to_be_visible()
    assert inbox.locator("[data-pending-rows] img").count() == 0
    row.get_by_role("link").click()
    expect(inbox.get_by_role("heading", name="Review all proposed files (3)")).to_be_visible()
    expect(inbox.locator(".file-path", has_text="<img src=x")).to_have_count(1)
    assert inbox.locator(".review-main img, .review-main script").count() == 0
    inbox.get_by_role("button", name="Approve and create").click()
    inbox.get_by_role("button", name="Approve anyway").click()
    expect(inbox.locator("[data-decided]")).to_be_visible()
    expect(room_page.locator("[role=tab]", has_text="<img src=x")).to_be_visible()
    assert room_page.locator("[data-launcher] img").count() == 0
    for page in (inbox, room_page):
        assert page.evaluate("window.__xss") is None
    assert dialogs == []


def test_many_files_card_navigates_and_loads_large_files_on_demand(
    uvicorn_server, browser, people, agent_token, files
):
    from playwright.sync_api import expect

    many = dict(files)
    for index in range(19):
        many[f"src/components/Part{index:02}.tsx"] = (
            f"import {{ useState }} from 'react';\n\nexport function Part{index}() {{\n"
            f"  const [n, setN] = useState<number[]>([]);\n"
            f"  return <button onClick={{() => setN([...n, {index}])}}>{{n.length}}</button>;\n}}\n"
        )
    many["src/data.ts"] = "export const data = [\n" + "  1,\n" * 30_000 + "];\n"
    created = propose_via_api(uvicorn_server, agent_token, people["room"], many, key="many-00001")
    card = login(browser, uvicorn_server, "owner")
    card.goto(f"{uvicorn_server}/proposals/{created['proposal_id']}/")
    expect(card.get_by_role("heading", name="Review all proposed files (22)")).to_be_visible()
    expect(card.locator("[data-repo-warning]")).to_contain_text("belongs in a repository")
    expect(card.locator("[data-file-list] li[data-path]")).to_have_count(22)
    card.get_by_role("button", name="Collapse all").click()
    expect(card.locator("[data-file].is-collapsed")).to_have_count(22)
    card.get_by_role("button", name="Expand all").click()
    screenshot(card, "card-many.png")
    large = card.locator('[data-file][data-path="src/data.ts"]')
    expect(large.locator("[data-large-note]")).to_contain_text(
        "Not rendered yet: large file: 147 KB."
    )
    large.get_by_role("link", name="Load file").click()
    # Rendering 147 KB takes seconds on a loaded machine: a wait, not a timing assertion.
    expect(large.locator(".hl")).to_be_visible(timeout=60_000)


def test_member_cannot_open_a_pending_card(uvicorn_server, browser, people, agent_token, files):
    created = propose_via_api(uvicorn_server, agent_token, people["room"], files, key="member-01")
    page = login(browser, uvicorn_server, "member")
    response = page.goto(f"{uvicorn_server}/proposals/{created['proposal_id']}/")
    assert response.status == 404
    assert "Standup timer" not in page.content()
