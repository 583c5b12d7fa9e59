"""Review as a loop, end to end in headless Chromium against a live uvicorn server.

An agent (the official MCP client) proposes v1, the owner approves it; the agent proposes an
update; the owner reads the diff, comments on line 5 and requests changes; the agent reads the
comment and revises; the owner sees "Changes since your last review" with the comment outdated
and approves. A member's open Room page shows the new code in the same tab with its stored data;
the owner rolls back, then removes and restores the tab.
"""

from concurrent.futures import ThreadPoolExecutor

import pytest
from playwright.sync_api import expect

from rooms.models import LauncherApp
from tests.mcpclient import call_tool
from tests.rooms.test_console_browser import (  # noqa: F401 - fixtures
    agent_token,
    browser,
    login,
    people,
    screenshot,
    uvicorn_server,
    wait_for_feed,
)

pytestmark = pytest.mark.django_db(transaction=True)

FRAME = "iframe.osf-app-frame"

COUNTER = """import { useEffect, useState } from "react";
const storage = (window as any).osfoundry.storage;
export default function App() {
  const [count, setCount] = useState<number | null>(null);
  useEffect(() => { storage.get("count").then((v: number | null) => setCount(v ?? 0)); }, []);
  async function bump() {
    const next = (count ?? 0) + 1;
    await storage.set("count", next);
    setCount(next);
  }
  return (
    <div>
      <h1>Counter VERSION</h1>
      <p>{count === null ? "loading" : "count " + count}</p>
      <button onClick={bump}>Add one</button>
    </div>
  );
}
"""
LINE_5_V2 = '  useEffect(() => { storage.get("count").then((v: any) => setCount(v || 0)); }, []);'
LINE_5_V3 = (
    '  useEffect(() => { storage.get("count").then((v: unknown) => '
    'setCount(typeof v === "number" ? v : 0)); }, []);'
)


def counter(version: str, line5: str | None = None) -> dict[str, str]:
    lines = COUNTER.replace("VERSION", version).split("\n")
    if line5:
        lines[4] = line5
    return {"src/App.tsx": "\n".join(lines)}


def mcp(server, token, name, arguments):
    """A tools/call off this thread: Playwright's sync API keeps its own loop here."""
    with ThreadPoolExecutor(max_workers=1) as pool:
        result = pool.submit(call_tool, f"{server}/api/v1/mcp", token, name, arguments).result()
    assert not result.is_error, result.content
    return result.structured_content


def approve_on_card(page, url, button):
    page.goto(url)
    page.get_by_role("button", name=button).click()
    # No file marked viewed: the card asks once.
    page.get_by_role("button", name="Approve anyway").click()
    expect(page.locator("[data-decided]")).to_contain_text("Approved by owner on")


def both_widths(page, name):
    """A desktop and a 390 px screenshot; on the phone nothing may widen the page."""
    screenshot(page, f"{name}.png")
    size = page.viewport_size
    page.set_viewport_size({"width": 390, "height": 844})
    # Two frames: the new width is laid out and painted before the picture.
    page.evaluate("() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")
    screenshot(page, f"{name}-390.png")
    assert page.evaluate("document.documentElement.scrollWidth") <= 390, name
    page.set_viewport_size(size)


def running(page, text):
    expect(page.frame_locator(FRAME).locator("h1")).to_have_text(text)


def test_update_review_revise_approve_rollback_remove_restore(
    uvicorn_server,  # noqa: F811 - the imported fixtures
    browser,  # noqa: F811
    people,  # noqa: F811
    agent_token,  # noqa: F811
):
    room = people["room"]
    base = uvicorn_server
    v1 = mcp(
        base,
        agent_token,
        "propose_room_snippet_app",
        {
            "room_id": str(room.pk),
            "name": "Counter",
            "files": counter("v1"),
            "idempotency_key": "e2e-v1-0001",
        },
    )
    owner = login(browser, base, "owner")
    approve_on_card(owner, v1["review_url"], "Approve and create")
    app = LauncherApp.objects.get(room=room)

    # A member uses the app: the count is stored in this browser, under the app's storage key.
    member = login(browser, base, "member")
    member.goto(f"{base}/rooms/{room.pk}/apps/{app.pk}/")
    wait_for_feed(member)
    running(member, "Counter v1")
    frame = member.frame_locator(FRAME)
    frame.get_by_role("button", name="Add one").click()
    frame.get_by_role("button", name="Add one").click()
    expect(frame.locator("p")).to_have_text("count 2")

    update = mcp(
        base,
        agent_token,
        "propose_room_app_update",
        {
            "room_id": str(room.pk),
            "instance_id": str(app.pk),
            "files": counter("v2", LINE_5_V2),
            "idempotency_key": "e2e-v2-0001",
        },
    )
    owner.goto(update["review_url"])
    expect(owner.get_by_text("Changes since the approved version (v1)")).to_be_visible()
    expect(owner.locator('.diff-row.diff-add[data-line="13"]')).to_contain_text("Counter v2")
    both_widths(owner, "update-card")
    owner.locator('.diff-row.diff-add[data-line="5"] .diff-num').last.click()
    owner.get_by_role("textbox", name="Comment on src/App.tsx, line 5").fill(
        "Keep the type: v is a number or null"
    )
    owner.get_by_role("button", name="Add comment").click()
    expect(owner.locator("[data-draft-comments] li")).to_have_count(1)
    owner.fill("#request-summary", "One thing before this goes in")
    owner.get_by_role("button", name="Request changes (1 comment)").click()
    expect(owner.locator("[data-decision-status]")).to_have_text("Changes requested")

    review = mcp(base, agent_token, "read_room_proposal", {"proposal_id": update["proposal_id"]})
    assert review["status"] == "changes_requested"
    (comment,) = review["comments"]
    assert (comment["line_start"], comment["outdated"]) == (5, False)
    assert comment["body"] == "Keep the type: v is a number or null"
    revised = mcp(
        base,
        agent_token,
        "revise_room_proposal",
        {
            "proposal_id": update["proposal_id"],
            "files": counter("v3", LINE_5_V3),
            "idempotency_key": "e2e-v3-0001",
        },
    )
    owner.goto(revised["review_url"])
    expect(owner.get_by_text("Changes since your last review (revision 1)")).to_be_visible()
    expect(owner.locator("[data-comment][data-outdated='1']")).to_contain_text("line 5")
    expect(owner.locator("[data-outdated-label]")).to_have_text("outdated")
    both_widths(owner, "revised-card")
    approve_on_card(owner, revised["review_url"], "Approve as v2, replacing v1")

    # The member's open tab is not yanked: it says so, and runs the new code when asked, in the
    # same place, with what was stored.
    expect(member.locator("[data-app-updated]")).to_be_visible()
    member.get_by_role("button", name="Reload").click()
    running(member, "Counter v3")
    expect(member.frame_locator(FRAME).locator("p")).to_have_text("count 2")
    expect(member.locator("[data-launcher] [role=tab]").first).to_have_attribute(
        "data-instance-id", str(app.pk)
    )
    assert LauncherApp.objects.filter(room=room).count() == 1
    both_widths(member, "room-updated")

    owner.goto(f"{base}/rooms/{room.pk}/apps/{app.pk}/revisions/")
    both_widths(owner, "revisions")
    owner.get_by_role("button", name="Roll back to v1").click()
    expect(owner.locator(".flash")).to_contain_text("is now v3, the content of v1")
    expect(member.locator("[data-app-updated]")).to_be_visible()
    member.get_by_role("button", name="Reload").click()
    running(member, "Counter v1")
    expect(member.frame_locator(FRAME).locator("p")).to_have_text("count 2")

    owner.goto(f"{base}/rooms/{room.pk}/")
    owner.get_by_role("button", name="Remove “Counter” from the launcher").click()
    expect(owner.locator(".flash")).to_contain_text("left the launcher")
    expect(member.locator("[data-launcher] [role=tab]")).to_have_count(0)
    expect(member.locator("[data-app-area]")).to_have_attribute("data-state", "closed")
    owner.get_by_role("button", name="Restore").click()
    expect(owner.locator(".flash")).to_contain_text("is back in the launcher")
    expect(member.locator("[data-launcher] [role=tab]")).to_have_count(1)
    both_widths(owner, "room-owner-tabs")


def test_viewed_marks_hold_for_unchanged_files_and_reset_for_changed_ones(
    uvicorn_server,  # noqa: F811 - the imported fixtures
    browser,  # noqa: F811
    people,  # noqa: F811
    agent_token,  # noqa: F811
):
    room = people["room"]
    files = {**counter("v1"), "src/util.ts": "export const step = 1;\n"}
    first = mcp(
        uvicorn_server,
        agent_token,
        "propose_room_snippet_app",
        {
            "room_id": str(room.pk),
            "name": "Counter",
            "files": files,
            "idempotency_key": "e2e-vm-01",
        },
    )
    owner = login(browser, uvicorn_server, "owner")
    owner.goto(first["review_url"])
    for checkbox in owner.locator("[data-file] [data-viewed]").all():
        checkbox.check()
    expect(owner.locator("[data-viewed-count]")).to_have_text("2/2 viewed")
    owner.get_by_text("Request changes…").click()
    owner.fill("#request-summary", "Count by two")
    owner.get_by_role("button", name="Request changes").click()
    expect(owner.locator("[data-decision-status]")).to_have_text("Changes requested")

    revised = mcp(
        uvicorn_server,
        agent_token,
        "revise_room_proposal",
        {
            "proposal_id": first["proposal_id"],
            "files": {**files, "src/util.ts": "export const step = 2;\n"},
            "idempotency_key": "e2e-vm-02",
        },
    )
    owner.goto(revised["review_url"])
    expect(owner.get_by_text("Changes since your last review (revision 1)")).to_be_visible()
    full = owner.locator("section.file[data-anchor]")
    expect(full.filter(has_text="src/App.tsx").locator("[data-viewed]")).to_be_checked()
    expect(full.filter(has_text="src/util.ts").locator("[data-viewed]")).not_to_be_checked()
    # The changed file is on the card twice (its diff and in full): one mark for both.
    owner.locator(".diff-file [data-viewed]").check()
    expect(full.filter(has_text="src/util.ts").locator("[data-viewed]")).to_be_checked()
    expect(owner.locator("[data-viewed-count]")).to_have_text("2/2 viewed")
    screenshot(owner, "revised-new-app-card.png")


def test_tab_bar_keys_addresses_and_a_dragged_comment_range(
    uvicorn_server,  # noqa: F811 - the imported fixtures
    browser,  # noqa: F811
    people,  # noqa: F811
):
    from tests.rooms.runtime_support import approved_app, propose

    room = people["room"]
    first = approved_app(room, people["agent"], counter("one"), name="One")
    second = approved_app(room, people["agent"], counter("two"), name="Two")
    member = login(browser, uvicorn_server, "member")
    member.goto(f"{uvicorn_server}/rooms/{room.pk}/")
    tabs = member.locator("[data-launcher] [role=tab]")
    expect(tabs.nth(0)).to_have_attribute("tabindex", "0")
    expect(tabs.nth(1)).to_have_attribute("tabindex", "-1")
    tabs.nth(0).focus()
    member.keyboard.press("ArrowRight")
    expect(tabs.nth(1)).to_be_focused()
    member.keyboard.press("Home")
    expect(tabs.nth(0)).to_be_focused()
    member.keyboard.press("End")
    expect(tabs.nth(1)).to_be_focused()
    member.keyboard.press("Enter")
    expect(tabs.nth(1)).to_have_attribute("aria-selected", "true")
    assert member.url == f"{uvicorn_server}/rooms/{room.pk}/apps/{second.pk}/"
    running(member, "Counter two")
    member.reload()  # the address keeps the tab open
    expect(member.locator("[data-launcher] [role=tab]").nth(1)).to_have_attribute(
        "aria-selected", "true"
    )
    running(member, "Counter two")
    member.go_back()
    expect(member.locator("[data-launcher] [role=tab]").nth(0)).to_have_attribute(
        "aria-selected", "false"
    )
    assert first.pk != second.pk

    pending = propose(room, people["agent"], counter("three"), name="Three")
    owner = login(browser, uvicorn_server, "owner")
    owner.goto(f"{uvicorn_server}/proposals/{pending.pk}/")
    numbers = owner.locator("section.file[data-anchor] .linenos")
    numbers.nth(1).hover()
    owner.mouse.down()
    numbers.nth(3).hover()
    owner.mouse.up()
    box = owner.get_by_role("textbox", name="Comment on src/App.tsx, lines 2–4")
    box.fill("These three lines")
    owner.get_by_role("button", name="Add comment").click()
    expect(owner.locator("[data-draft-comments] li")).to_have_text(
        "src/App.tsx:2–4 These three lines remove"
    )
