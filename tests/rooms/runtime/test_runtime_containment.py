"""Hostile apps stay inside the sandboxed frame: each escape is blocked or has no effect, also
with curated libraries loaded and tried as the means (tests/rooms/snippets/hostile-libraries),
and with a package from the npm registry doing the trying (tests/rooms/snippets/
hostile-packages, tests/rooms/packages/sneaky-lib)."""

import json
from pathlib import Path

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError
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
HOSTILE = snippet_files("hostile")
# The same app, its extra attempts made through d3, papaparse, three and zustand, with
# Tailwind's runtime loaded too.
WITH_LIBRARIES = HOSTILE | snippet_files("hostile-libraries")
LIBRARY_CHECKS = {
    "d3.json",
    "papaparse download",
    "three TextureLoader",
    "d3.select(parent)",
    "zustand persist",
}
LIBRARY_REFUSALS = (
    "connect-src {}/x-d3-json",
    "connect-src {}/x-papa.csv",
    "img-src {}/x-texture.png",
)


def run_hostile_preview(page, context, live_server_url, room, owner, agent, files=HOSTILE):
    proposal = propose(room, agent, files, name="Hostile")
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


@pytest.mark.parametrize("files", [HOSTILE, WITH_LIBRARIES], ids=["alone", "with libraries"])
def test_hostile_app_reaches_nothing_outside_its_frame(
    page, context, live_server_url, room, owner, agent, files
):
    # Run in the owner's preview: the most privileged session there is, and a pending
    # proposal a forged "approve" message would love to approve.
    proposal, results, frame_requests, popups = run_hostile_preview(
        page, context, live_server_url, room, owner, agent, files
    )
    with_libraries = files is WITH_LIBRARIES
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
    } | (LIBRARY_CHECKS if with_libraries else set())
    for check, result in results.items():
        if check not in SILENT:
            assert result.startswith("blocked"), f"{check}: {result}"
    # Every network attempt was refused by the frame's policy as it was made (the beacon
    # included, which reports nothing to its caller); the sandbox refused the rest at once.
    refused = page.frame_locator(f"[data-osf-preview] {FRAME}").locator("[data-refused]")
    for line in (
        "connect-src {}/x-fetch",
        "connect-src {}/x-xhr",
        "connect-src {}/x-beacon",
        "connect-src ws://{}/x-ws",
        "img-src {}/x-image.png",
        "frame-src {}",
        *(LIBRARY_REFUSALS if with_libraries else ()),
    ):
        origin = live_server_url.removeprefix("http://") if "ws://" in line else live_server_url
        expect(refused.filter(has_text=line.format(origin))).to_have_count(1)
    # No top navigation, no popup; the console page still has its frame.
    assert page.url == f"{live_server_url}/proposals/{proposal.pk}/"
    assert popups == []
    assert page.locator(FRAME).count() == 1
    # Nothing the app tried reached the server (fetch, xhr, beacon, image, form, websocket,
    # nested frame, popup, top navigation all aimed at /x-...).
    assert "/x-" not in live_server_url.access_log()
    # The frame's own requests (its page, the runtime scripts) never carried the session cookie.
    assert frame_requests
    loaded = {url.split("/libs/")[1].split("/")[0] for url, _ in frame_requests if "/libs/" in url}
    assert loaded == (
        {"d3", "papaparse", "three", "zustand", "tailwindcss"} if with_libraries else set()
    )
    for url, cookie in frame_requests:
        if "/static/" in url:
            assert cookie is None, url
    # The console's storage is untouched.
    assert page.evaluate("localStorage.getItem('osf:app:victim:notes')") == "secret"


SNEAKY_LIB = Path(__file__).parents[1] / "packages" / "sneaky-lib" / "index.js"
PACKAGE_CHECKS = {
    "package fetch",
    "package xhr",
    "package script",
    "package parent.document",
    "package localStorage",
    "package require('fs')",
}


def test_a_registry_package_reaches_nothing_outside_the_frame(
    page, context, live_server_url, room, owner, agent, npm_registry
):
    npm_registry.publish(
        "sneaky-lib",
        "1.0.0",
        {
            "index.js": SNEAKY_LIB.read_text(),
            "registry.json": json.dumps({"url": npm_registry.url}),
        },
    )
    files = HOSTILE | snippet_files("hostile-packages")
    asked = len(npm_registry.requests)
    _proposal, results, frame_requests, popups = run_hostile_preview(
        page, context, live_server_url, room, owner, agent, files
    )
    assert len(npm_registry.requests) > asked  # resolved when proposed, from the test's registry
    asked = list(npm_registry.requests)
    print("\nhostile package:", json.dumps(results, indent=1))
    assert set(results) >= PACKAGE_CHECKS
    for check, result in results.items():
        if check not in SILENT:
            assert result.startswith("blocked"), f"{check}: {result}"
    refused = page.frame_locator(f"[data-osf-preview] {FRAME}").locator("[data-refused]")
    for line in (
        "connect-src {}/x-package-fetch",
        "connect-src {}/x-package-xhr",
        "script-src-elem {}/x-package-script.js",
    ):
        expect(refused.filter(has_text=line.format(npm_registry.url))).to_have_count(1)
    # Neither the registry nor this site heard from the package; the frame itself requested
    # nothing of either (the page fetched the module table, with the files).
    assert npm_registry.requests == asked
    assert "/x-" not in live_server_url.access_log()
    assert not [url for url, _cookie in frame_requests if "/packages/" in url]
    assert popups == []
    assert page.evaluate("localStorage.getItem('osf:app:victim:notes')") == "secret"


def test_spoofed_approve_message_has_no_effect(page, context, live_server_url, room, owner, agent):
    console_requests = []
    page.on("request", lambda request: console_requests.append(request.url))
    proposal, _results, _requests, _popups = run_hostile_preview(
        page, context, live_server_url, room, owner, agent
    )
    # The app posts its forged "approve" messages before a forged error: the page handles
    # messages in order, so once the error shows (as text, never as HTML) the approvals had
    # their chance.
    status = page.locator("[data-osf-preview] .app-status li")
    expect(status.filter(has_text="Runtime error: <b id=injected>html</b>")).to_have_count(1)
    assert page.locator("#injected").count() == 0
    assert not [url for url in console_requests if "/approve/" in url]
    proposal.refresh_from_db()
    assert proposal.status == Proposal.Status.PENDING
    assert not room.apps.exists()


def test_frame_that_navigates_itself_is_torn_down(
    page, context, live_server_url, room, owner, agent
):
    app = approved_app(room, agent, snippet_files("navigate"), name="Navigate")
    log_in(context, live_server_url, owner)
    frame = open_tab(page, live_server_url, app)
    wait_state(page, "mounted")
    frame.get_by_role("button", name="Leave").click()  # the app replaces its own document
    wait_state(page, "error")
    expect(page.locator(FRAME)).to_have_count(0)
    assert status_lines(page)[-1] == "Stopped: The app tried to navigate away and was stopped."


def test_busy_loop_leaves_the_console_usable(page, context, live_server_url, room, owner, agent):
    app = approved_app(room, agent, snippet_files("busy"), name="Busy")
    log_in(context, live_server_url, owner)
    frame = open_tab(page, live_server_url, app)
    wait_state(page, "mounted")
    # The app stops yielding (for 20 s). A synthetic click: a real one waits for the renderer
    # to acknowledge the input, which a spinning renderer never does.
    frame.get_by_role("button", name="Spin").dispatch_event("click")
    # The frame no longer answers: its renderer is spinning...
    with pytest.raises(PlaywrightTimeoutError):
        frame.locator("button").evaluate("button => button.textContent", timeout=1000)
    # ...while the console page, in its own renderer process, still does...
    assert page.evaluate("1 + 1") == 2
    # ...and its Close button stops the spinning app.
    page.locator("[data-app-close]").click()
    expect(page.locator(FRAME)).to_have_count(0)
    expect(page.locator(f"{APP_AREA} [data-app-placeholder]")).to_be_visible()
