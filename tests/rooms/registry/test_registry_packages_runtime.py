"""An app whose package.json names packages from the npm registry runs in the Room: proposed
(the server resolves, fetches and checks them from the test's own registry on 127.0.0.1),
previewed and approved by its owner in Chromium, opened from the launcher: what its packages
draw appears, and nothing logs an error. The frame gets the packages from this site only."""

import pytest
from playwright.sync_api import expect

from rooms.models import Proposal
from tests.rooms.registry_packages import app_files
from tests.rooms.runtime_support import (
    FRAME,
    log_in,
    off_the_browser_loop,
    open_tab,
    propose,
    wait_state,
)

pytestmark = pytest.mark.django_db(transaction=True)


def console_errors(page) -> list[str]:
    errors: list[str] = []
    page.on("console", lambda message: message.type == "error" and errors.append(message.text))
    page.on("pageerror", lambda error: errors.append(str(error)))
    return errors


@off_the_browser_loop
def app_of(proposal):
    return Proposal.objects.get(pk=proposal.pk).room.apps.get()


def test_a_package_json_app_is_previewed_approved_and_runs_with_its_registry_packages(
    page, context, live_server_url, room, owner, agent, npm_registry
):
    proposal = propose(room, agent, app_files(), name="Price tag")
    fetched = list(npm_registry.requests)
    log_in(context, live_server_url, owner)
    errors = console_errors(page)
    requests: list[str] = []
    page.on("request", lambda request: requests.append(request.url))

    # The owner reads the packages on the card, previews the app, then approves it.
    page.goto(f"{live_server_url}/proposals/{proposal.pk}/")
    rows = page.locator("[data-packages] [data-package]")
    expect(rows).to_have_count(4)
    expect(page.locator("#packages-title")).to_have_text("Third-party packages (4)")
    page.get_by_role("button", name="Preview").click()
    preview = page.frame_locator(f"[data-osf-preview] {FRAME}")
    expect(preview.locator("p.price")).to_have_text("$ 19.99")
    expect(preview.locator("span.ui-badge")).to_have_text("new")
    page.get_by_role("button", name="Approve and create").click()
    page.get_by_role("button", name="Approve anyway").click()  # no file was marked viewed
    expect(page.locator("[data-decided]")).to_contain_text("Approved by owner on")

    app = app_of(proposal)
    frame = open_tab(page, live_server_url, app)
    wait_state(page, "mounted")
    # tiny-format (an ES module) pads with tiny-pad 2 through its browser field; ui-badge's
    # own tiny-pad 3 sits nested; its CSS file is applied; React is the frame's.
    expect(frame.locator("p.price")).to_have_text("$ 19.99")
    frame.get_by_role("button", name="More").click()
    expect(frame.locator("p.price")).to_have_text("$ 20.00")
    expect(frame.locator("span.ui-badge")).to_have_attribute("data-pad", "3")
    expect(frame.locator("span.ui-badge")).to_have_css("border-radius", "9px")
    assert errors == []
    # Nothing was fetched from the registry after the proposal; the browser read the module
    # table from this site, and the frame itself requested nothing of it.
    assert npm_registry.requests == fetched
    assert not [url for url in requests if url.startswith(npm_registry.url)]
    tables = [url for url in requests if "/packages/" in url]
    assert tables and all(url.startswith(live_server_url) for url in tables)
