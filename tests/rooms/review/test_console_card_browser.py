# ruff: noqa: F811 - the fixtures imported from test_console_browser
"""A card that says where it stands, in Chromium: a decided card shows its decision first and
no buttons, in the decision's colour; approving files not marked viewed asks once; sent line
comments sit beside their lines and link to the list and back; a keyboard alone reviews,
comments and approves; a repository card requests changes like a snippet card, and its
version page leads back to it. Screenshots land in artifacts/."""

import pytest
from playwright.sync_api import expect

from rooms.models import Proposal
from rooms.review.revisions import propose_update, request_changes, revise_proposal
from rooms.services import approve_proposal
from tests.rooms.console_pages import SIZES, bottom, box, fits_the_width, open_page, shoot
from tests.rooms.helpers import changed, propose_version, stored_version
from tests.rooms.test_console_browser import (  # noqa: F401 - fixtures
    browser,
    people,
    uvicorn_server,
)

pytestmark = pytest.mark.django_db(transaction=True)

BAD, OK = "rgb(180, 35, 24)", "rgb(21, 115, 71)"


def three_files(files):
    return {**files, "src/util.ts": "export const minute = 60;\nexport const hour = 3600;\n"}


def propose(room, agent, files, name, key):
    from tests.rooms.runtime_support import propose as propose_off_loop

    return propose_off_loop(room, agent, files, name=name, key=key)


def card(page, base, proposal):
    page.goto(f"{base}/proposals/{proposal.pk}/")


@pytest.mark.parametrize("size", list(SIZES))
def test_a_decided_card_shows_its_decision_first_without_buttons(
    uvicorn_server, browser, people, files, size
):
    room, agent = people["room"], people["agent"]
    declined = propose(room, agent, files, "Declined app", f"decided-{size}-1")
    page = open_page(browser, uvicorn_server, "owner", size)
    card(page, uvicorn_server, declined)
    page.get_by_text("Decline…").click()
    page.fill("#decline-reason", "Please use the design tokens")
    page.locator("[data-decline]").click()

    banner = page.locator("[data-decision-banner]")
    expect(banner).to_be_visible()
    expect(banner.locator("[data-decided]")).to_contain_text("Declined by owner on")
    expect(banner).to_contain_text("Reason: Please use the design tokens")
    # At the top, before the files, in the decline's colour; nothing left to click.
    assert bottom(box(banner)) <= box(page.locator("[data-review]"))["y"]
    assert banner.evaluate("el => getComputedStyle(el).borderLeftColor") == BAD
    status = banner.locator("[data-decision-status]")
    expect(status).to_have_text("Declined")
    assert status.evaluate("el => getComputedStyle(el).color") == BAD
    expect(page.get_by_text("Declined", exact=True)).to_have_count(1)  # said once, in the banner
    flash = page.locator(".flash li")
    expect(flash).to_contain_text("Declined:")
    assert flash.evaluate("el => getComputedStyle(el).backgroundColor") == "rgb(253, 236, 234)"
    for gone in ("[data-approve]", "[data-decline]", "[data-request-changes]", "[data-viewed]"):
        expect(page.locator(gone)).to_have_count(0)
    expect(page.get_by_role("heading", name="Proposed files (2)")).to_be_visible()
    assert fits_the_width(page)
    shoot(page, f"card-declined-{size}.png", full_page=False)

    approved = propose(room, agent, changed(files, "ok"), "Approved app", f"decided-{size}-2")
    approve_proposal(owner=room.owner, proposal_id=approved.pk)
    card(page, uvicorn_server, approved)
    expect(banner.locator("[data-decided]")).to_contain_text("Approved by owner on")
    assert banner.evaluate("el => getComputedStyle(el).borderLeftColor") == OK
    # In the inbox, "Declined" is red and "Approved" green, as on the cards.
    page.goto(f"{uvicorn_server}/")
    outcome = page.locator("[data-decided-rows] [data-outcome]")
    expect(outcome).to_have_count(2)
    colours = {
        o.inner_text(): o.evaluate("el => getComputedStyle(el).color") for o in outcome.all()
    }
    assert colours == {"Approved": OK, "Declined": BAD}
    page.context.close()


def test_approving_with_files_not_viewed_asks_once_naming_them(
    uvicorn_server, browser, people, files
):
    room, agent = people["room"], people["agent"]
    proposal = propose(room, agent, three_files(files), "Three files", "unviewed-0001")
    page = open_page(browser, uvicorn_server, "owner")
    card(page, uvicorn_server, proposal)
    page.locator('[data-file][data-path="src/App.tsx"] [data-viewed]').check()
    page.get_by_role("button", name="Approve and create").click()

    dialog = page.locator("[data-approve-confirm]")
    expect(dialog).to_be_visible()
    expect(dialog.get_by_role("heading")).to_have_text("2 of 3 files not viewed — approve anyway?")
    expect(dialog.locator("[data-approve-confirm-files] li")).to_have_text(
        ["src/styles.css", "src/util.ts"]
    )
    shoot(page, "card-approve-unviewed.png", full_page=False)
    dialog.get_by_role("button", name="Keep reviewing").click()
    expect(dialog).to_be_hidden()
    # Back to the first file not viewed, its "Viewed" box in focus.
    expect(page.locator('[data-file][data-path="src/styles.css"] [data-viewed]')).to_be_focused()
    proposal.refresh_from_db()
    assert proposal.is_pending

    page.get_by_role("button", name="Approve and create").click()
    dialog.get_by_role("button", name="Approve anyway").click()
    expect(page.locator("[data-decided]")).to_contain_text("Approved by owner on")
    proposal.refresh_from_db()
    assert proposal.status == Proposal.Status.APPROVED
    assert page.native_dialogs == []  # the page's own question, once per approval

    # Every file viewed: no question.
    other = propose(room, agent, changed(files, "all"), "All viewed", "unviewed-0002")
    card(page, uvicorn_server, other)
    for checkbox in page.locator("[data-viewed]").all():
        checkbox.check()
    expect(page.locator("[data-viewed-count]")).to_have_text("2/2 viewed")
    page.get_by_role("button", name="Approve and create").click()
    expect(page.locator("[data-decided]")).to_contain_text("Approved by owner on")
    page.context.close()


def test_line_comments_sit_beside_their_lines_and_link_to_the_list_and_back(
    uvicorn_server, browser, people, files
):
    room, agent, owner = people["room"], people["agent"], people["owner"]
    first = propose(room, agent, files, "Commented", "comments-0001")
    request_changes(
        owner=owner,
        proposal_id=first.pk,
        summary="",
        comments=[{"path": "src/App.tsx", "line_start": 2, "line_end": 3, "body": "Why here?"}],
    )
    # The revision changes the end of the file: lines 2–3 read the same, the comment stays.
    revision = revise_proposal(
        caller=agent,
        proposal_id=str(first.pk),
        files=changed(files, "v2"),
        idempotency_key="comments-0002",
    ).proposal
    page = open_page(browser, uvicorn_server, "owner")
    card(page, uvicorn_server, revision)
    code = page.locator('[data-file][data-path="src/App.tsx"]').last
    inline = code.locator(".inline-comment")
    expect(inline).to_have_count(1)
    expect(inline).to_contain_text("owner on lines 2–3")
    expect(inline).to_contain_text("Why here?")
    anchor = code.get_attribute("data-anchor")
    after_line = "id => document.getElementById(id).closest('.line').nextElementSibling"
    assert page.evaluate(f"{after_line}.matches('.inline-comment')", f"{anchor}-3")
    # The list's "lines 2–3" leads to it, past the sticky toolbar and file header.
    item = page.locator("[data-comment]")
    item.get_by_role("link", name="lines 2–3").click()
    expect(page).to_have_url(f"{uvicorn_server}/proposals/{revision.pk}/#comment-1-inline")
    toolbar, head = box(page.locator("[data-toolbar]")), box(code.locator(".file-head"))
    assert box(inline)["y"] >= max(bottom(toolbar), bottom(head)) - 1
    # ... and it leads back.
    inline.get_by_role("link", name="in the review comments").click()
    expect(page).to_have_url(f"{uvicorn_server}/proposals/{revision.pk}/#comment-1")
    shoot(page, "card-inline-comment.png", full_page=False)

    # On an update's card the comment sits under its row of the diff.
    app = approve_proposal(
        owner=owner, proposal_id=propose(room, agent, changed(files, "a"), "Diffed", "d-1").pk
    )
    update = propose_update(
        caller=agent,
        room_id=str(room.pk),
        instance_id=str(app.pk),
        files=changed(changed(files, "a"), "b"),
        idempotency_key="comments-0003",
    ).proposal
    last = update.files["src/App.tsx"].count("\n")  # the added "// b" line
    request_changes(
        owner=owner,
        proposal_id=update.pk,
        comments=[{"path": "src/App.tsx", "line_start": last, "line_end": last, "body": "Drop it"}],
    )
    card(page, uvicorn_server, update)
    row = page.locator(f'.diff-unified tr[data-path="src/App.tsx"][data-line="{last}"]')
    expect(row).to_have_count(1)
    assert row.evaluate("tr => tr.nextElementSibling.matches('[data-inline-comment]')")
    expect(page.locator(".inline-comment-row")).to_contain_text("Drop it")
    page.context.close()


def test_a_keyboard_alone_reviews_comments_and_approves(uvicorn_server, browser, people, files):
    room, agent = people["room"], people["agent"]
    commented = propose(room, agent, files, "By keyboard", "keys-only-0001")
    page = open_page(browser, uvicorn_server, "owner")
    keyboard = page.keyboard
    card(page, uvicorn_server, commented)
    keyboard.press("j")  # the first file, its path in focus
    expect(page.locator("[data-file]").first.locator(".file-path")).to_be_focused()
    keyboard.press("Tab")  # its "Viewed" box
    keyboard.press("Tab")  # its first line number
    focused = page.evaluate("document.activeElement.getAttribute('href')")
    assert focused.endswith("-1"), focused
    # Focus shows: an outline in the accent colour.
    outline = page.evaluate("getComputedStyle(document.activeElement).outlineStyle")
    assert outline == "solid"
    keyboard.press("Enter")
    expect(page.locator("[data-line-composer] textarea")).to_be_focused()
    keyboard.type("Name this import")
    keyboard.press("Tab")
    keyboard.press("Enter")  # Add comment
    expect(page.locator("[data-draft-comments] li")).to_have_count(1)
    assert page.evaluate("document.activeElement.getAttribute('href')") == focused
    keyboard.press("d")
    expect(page.locator("[data-approve]")).to_be_focused()
    keyboard.press("Tab")  # "Request changes…", open with the draft in it
    keyboard.press("Tab")  # the draft's "remove"
    keyboard.press("Tab")  # the summary
    expect(page.locator("#request-summary")).to_be_focused()
    keyboard.type("One thing")
    keyboard.press("Tab")
    expect(page.get_by_role("button", name="Request changes (1 comment)")).to_be_focused()
    keyboard.press("Enter")
    expect(page.locator("[data-decided]")).to_contain_text("Changes requested by owner")
    commented.refresh_from_db()
    assert commented.status == Proposal.Status.CHANGES_REQUESTED
    assert [c.body for c in commented.comments.all()] == ["Name this import"]

    approved = propose(room, agent, three_files(files), "Approved by keyboard", "keys-only-0002")
    card(page, uvicorn_server, approved)
    for _file in range(3):
        keyboard.press("j")
        keyboard.press("v")
    expect(page.locator("[data-viewed-count]")).to_have_text("3/3 viewed")
    keyboard.press("d")
    expect(page.locator("[data-approve]")).to_be_focused()
    keyboard.press("Enter")
    expect(page.locator("[data-decided]")).to_contain_text("Approved by owner on")
    approved.refresh_from_db()
    assert approved.status == Proposal.Status.APPROVED
    page.context.close()


def test_a_repository_card_requests_changes_and_its_version_page_leads_back(
    uvicorn_server, browser, people, files
):
    room, agent = people["room"], people["agent"]
    version = stored_version(room.project, files, "d" * 40)
    proposal = propose_version(room, agent, version, "repo-browser-01", name="Timer from git")
    page = open_page(browser, uvicorn_server, "owner")
    card(page, uvicorn_server, proposal)
    page.get_by_role("link", name="Review repository code before approving").click()
    back = page.locator("[data-back-to-card]")
    expect(back).to_have_text("← Back to the card “Timer from git”")
    page.get_by_role("link", name="styles.css").click()  # the tree keeps the way back
    back.click()
    expect(page).to_have_url(f"{uvicorn_server}/proposals/{proposal.pk}/")

    code = page.locator('[data-file][data-path="src/App.tsx"]')
    code.locator(".linenos", has_text="4").first.click()
    page.locator("[data-line-composer] textarea").fill("Read the tokens here")
    page.get_by_role("button", name="Add comment").click()
    page.fill("#request-summary", "Close")
    page.get_by_role("button", name="Request changes (1 comment)").click()
    expect(page.locator("[data-decided]")).to_contain_text("Changes requested by owner")
    expect(page.locator(".inline-comment")).to_contain_text("Read the tokens here")
    proposal.refresh_from_db()
    assert proposal.status == Proposal.Status.CHANGES_REQUESTED
    (comment,) = proposal.comments.all()
    assert (comment.path, comment.line_start) == ("src/App.tsx", 4)
    shoot(page, "card-repo-changes-requested.png", full_page=False)
    page.context.close()
