"""Hostile apps stay inside the sandboxed frame: each escape is blocked or has no effect."""

import json

import pytest
from playwright.sync_api import expect

from rooms.models import Proposal
from tests.rooms.runtime_support import (
    APP_AREA,
    FRAME,
    approved_app,
    log_in,
    open_tab,
    propose,
    snippet_files,
    status_lines,
    wait_state,
)

pytestmark = pytest.mark.django_db(transaction=True)

# These APIs report nothing useful to the caller (sendBeacon only says "queued", form.submit()
# and a blocked <iframe> fail silently): the server's access log proves they had no effect.
SILENT = {"sendBeacon", "form", "nested-frame", "messages"}


def run_hostile_preview(page, context, live_server_url, room, owner, agent):
    proposal = propose(room, agent, snippet_files("hostile"), name="Hostile")
    log_in(context, live_server_url, owner)
    requests = []
    page.on("request", lambda request: requests.append(request))
    popups = []
    context.on("page", lambda popup: popups.append(popup))
    page.goto(f"{live_server_url}/proposals/{proposal.pk}/")
    page.evaluate("localStorage.setItem('osf:app:victim:notes', 'secret')")
    page.get_by_role("button", name="Preview").click()
    frame = page.frame_locator(f"[data-osf-preview] {FRAME}")
    expect(frame.locator("#done")).to_have_text("done")
    results = {
        li.get_attribute("data-check"): li.text_content()
        for li in frame.locator("li[data-check]").all()
    }
    frame_requests = [
        (request.url, request.all_headers().get("cookie"))
        for request in requests
        if request.frame.parent_frame is not None
    ]
    return proposal, results, frame_requests, popups


def test_hostile_app_reaches_nothing_outside_its_frame(
    page, context, live_server_url, room, owner, agent
):
    # Run in the owner's preview: the most privileged session there is, and a pending
    # proposal a forged "approve" message would love to approve.
    proposal, results, frame_requests, popups = run_hostile_preview(
        page, context, live_server_url, room, owner, agent
    )
    print("\nhostile:", json.dumps(results, indent=1))
    assert set(results) >= SILENT | {
        "cookie",
        "set-cookie",
        "localStorage",
        "sessionStorage",
        "indexedDB",
        "parent.document",
        "parent.localStorage",
        "fetch",
        "xhr",
        "websocket",
        "image",
        "window.open",
        "top.location",
        "top.location.href",
    }
    for check, result in results.items():
        if check not in SILENT:
            assert result.startswith("blocked"), f"{check}: {result}"

    page.wait_for_timeout(500)  # give late beacons and navigations a chance to show up
    # No top navigation, no popup; the console page still has its frame.
    assert page.url == f"{live_server_url}/proposals/{proposal.pk}/"
    assert popups == []
    assert page.locator(FRAME).count() == 1
    # Nothing the app tried reached the server (fetch, xhr, beacon, image, form, websocket,
    # nested frame, popup, top navigation all aimed at /x-...).
    assert "/x-" not in live_server_url.access_log()
    # The frame's own requests (its page, the runtime scripts) never carried the session cookie.
    assert frame_requests
    for url, cookie in frame_requests:
        if "/static/" in url:
            assert cookie is None, url
    # The console's storage is untouched.
    assert page.evaluate("localStorage.getItem('osf:app:victim:notes')") == "secret"


def test_spoofed_approve_message_has_no_effect(page, context, live_server_url, room, owner, agent):
    proposal, _results, _requests, _popups = run_hostile_preview(
        page, context, live_server_url, room, owner, agent
    )
    page.wait_for_timeout(300)
    proposal.refresh_from_db()
    assert proposal.status == Proposal.Status.PENDING
    assert not room.apps.exists()
    # The forged error message is shown as text, never as HTML.
    lines = status_lines(page, "[data-osf-preview]")
    assert "Runtime error: <b id=injected>html</b>" in lines
    assert page.locator("#injected").count() == 0


def test_frame_that_navigates_itself_is_torn_down(
    page, context, live_server_url, room, owner, agent
):
    app = approved_app(room, agent, snippet_files("navigate"), name="Navigate")
    log_in(context, live_server_url, owner)
    frame = open_tab(page, live_server_url, app)
    expect(frame.locator("text=Leaving soon")).to_be_visible()
    wait_state(page, "error")
    expect(page.locator(FRAME)).to_have_count(0)
    assert status_lines(page)[-1] == "Stopped: The app tried to navigate away and was stopped."


def test_busy_loop_leaves_the_console_usable(page, context, live_server_url, room, owner, agent):
    app = approved_app(room, agent, snippet_files("busy"), name="Busy")
    log_in(context, live_server_url, owner)
    frame = open_tab(page, live_server_url, app)
    wait_state(page, "mounted")
    expect(frame.locator("text=Spinning soon")).to_be_visible()
    page.wait_for_timeout(500)  # the app starts its endless loop 200 ms after mounting
    # The sandboxed frame runs in its own renderer process: the console page still answers...
    assert page.evaluate("1 + 1") == 2
    # ...and its Close button stops the spinning app.
    page.locator("[data-app-close]").click()
    expect(page.locator(FRAME)).to_have_count(0)
    expect(page.locator(f"{APP_AREA} [data-app-placeholder]")).to_be_visible()
