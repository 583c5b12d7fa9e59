"""The Room owner previews a pending proposal in a marked, storage-less frame; nobody else can."""

import pytest
from playwright.sync_api import expect

from rooms.models import Proposal
from tests.rooms.runtime_support import (
    FRAME,
    log_in,
    propose,
    snippet_files,
    status_lines,
    unchecked_proposal,
)

pytestmark = pytest.mark.django_db(transaction=True)

CARD = "[data-osf-preview]"


def test_owner_previews_pending_code_in_a_marked_frame_and_stops_it(
    page, context, live_server_url, room, owner, agent, files
):
    proposal = propose(room, agent, files, name="Standup timer")
    log_in(context, live_server_url, owner)
    page.goto(f"{live_server_url}/proposals/{proposal.pk}/")
    expect(page.locator(FRAME)).to_have_count(0)  # nothing runs before an explicit click

    page.get_by_role("button", name="Preview").click()
    frame = page.frame_locator(f"{CARD} {FRAME}")
    expect(frame.locator(".speaker")).to_have_text("Now speaking: Ada")
    expect(page.locator(f"{CARD}")).to_have_attribute("data-state", "mounted")
    expect(page.locator(".preview-banner")).to_contain_text("Unapproved code")
    frame.get_by_role("button", name="Next").click()
    expect(frame.locator(".speaker")).to_have_text("Now speaking: Grace")

    page.get_by_role("button", name="Stop").click()
    expect(page.locator(FRAME)).to_have_count(0)
    expect(page.locator(".preview-box")).to_be_hidden()
    proposal.refresh_from_db()
    assert proposal.status == Proposal.Status.PENDING  # a preview is not a review


def test_preview_has_no_storage(page, context, live_server_url, room, owner, agent):
    proposal = propose(room, agent, snippet_files("storage"), name="Storage")
    log_in(context, live_server_url, owner)
    page.goto(f"{live_server_url}/proposals/{proposal.pk}/")
    page.get_by_role("button", name="Preview").click()
    frame = page.frame_locator(f"{CARD} {FRAME}")
    frame.get_by_role("button", name="Round trip").click()
    expect(frame.locator("li").last).to_have_text("error: Storage is off in preview")
    assert page.evaluate("localStorage.length") == 0


def test_preview_shows_a_syntax_error_as_text(page, context, live_server_url, room, owner, agent):
    proposal = unchecked_proposal(room, agent, snippet_files("syntax"), name="Broken")
    log_in(context, live_server_url, owner)
    page.goto(f"{live_server_url}/proposals/{proposal.pk}/")
    page.get_by_role("button", name="Preview").click()
    expect(page.locator(CARD)).to_have_attribute("data-state", "error")
    assert status_lines(page, CARD)[0].startswith("Compile error in src/App.tsx: src/App.tsx:8:")


@pytest.mark.parametrize("who", ["member", "agent"])
def test_members_and_the_proposer_get_no_preview(
    page, context, live_server_url, request, room, agent, files, who
):
    proposal = propose(room, agent, files, name="Standup timer")
    log_in(context, live_server_url, request.getfixturevalue(who))
    page.goto(f"{live_server_url}/proposals/{proposal.pk}/")
    expect(page.get_by_role("button", name="Preview")).to_have_count(0)
    response = page.request.get(f"{live_server_url}/proposals/{proposal.pk}/preview-files.json")
    assert response.status == 404
    assert "App.tsx" not in response.text()
