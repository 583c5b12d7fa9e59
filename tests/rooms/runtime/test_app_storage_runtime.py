"""An app's storage stays in the browser of the person using the tab: per app and per user."""

import pytest
from playwright.sync_api import expect

from tests.rooms.runtime_support import (
    approved_app,
    log_in,
    open_tab,
    snippet_files,
    wait_state,
)

pytestmark = pytest.mark.django_db(transaction=True)

ROUND_TRIP = [
    'get: {"text":"Buy milk","count":3}',
    'keys: ["notes"]',
    "missing: null",
    "after remove: null",
    "done",
]


def round_trip(page, live_server_url, app) -> list[str]:
    frame = open_tab(page, live_server_url, app)
    wait_state(page, "mounted")
    frame.get_by_role("button", name="Round trip").click()
    expect(frame.locator("li").last).to_have_text("done")
    return frame.locator("li").all_text_contents()


def test_storage_is_kept_per_app_and_per_user_in_this_browser(
    page, context, live_server_url, room, owner, member, agent
):
    notes = approved_app(room, agent, snippet_files("storage"), name="Notes")
    other = approved_app(room, agent, snippet_files("storage"), name="Other notes")

    log_in(context, live_server_url, owner)
    assert round_trip(page, live_server_url, notes) == ROUND_TRIP
    frame = page.frame_locator("iframe.osf-app-frame")
    frame.get_by_role("button", name="Too big").click()
    expect(frame.locator("li").last).to_have_text("big: Storage value is larger than 100 KB")
    # The same app again: what it kept is there ("kept" from the first round trip).
    second = round_trip(page, live_server_url, notes)
    assert second[1] == 'keys: ["kept","notes"]'
    # Another app, same user: a separate store.
    assert round_trip(page, live_server_url, other) == ROUND_TRIP
    # Another user in the same browser: a separate store too.
    log_in(context, live_server_url, member)
    assert round_trip(page, live_server_url, notes) == ROUND_TRIP

    everything = page.evaluate("({...localStorage})")
    # The apps' stores; the console keeps its own notes beside them (the Room's last app, per
    # person), never under an app's prefix.
    stored = {key: value for key, value in everything.items() if key.startswith("osf:app:")}
    assert set(everything) - set(stored) == {
        f"osf-last-app:{room.pk}.user-{owner.pk}",
        f"osf-last-app:{room.pk}.user-{member.pk}",
    }
    assert stored == {
        f"osf:app:room-{room.pk}.app-{notes.pk}.user-{owner.pk}:kept": "[1,2,3]",
        f"osf:app:room-{room.pk}.app-{other.pk}.user-{owner.pk}:kept": "[1,2,3]",
        f"osf:app:room-{room.pk}.app-{notes.pk}.user-{member.pk}:kept": "[1,2,3]",
    }


def test_the_page_validates_every_storage_request_itself(
    page, context, live_server_url, room, owner, agent
):
    # This app skips the frame runtime's own checks and posts raw requests to the page.
    app = approved_app(room, agent, snippet_files("bridge"), name="Bridge")
    log_in(context, live_server_url, owner)
    frame = open_tab(page, live_server_url, app)
    wait_state(page, "mounted")
    expect(frame.locator("li", has_text="waiting")).to_have_count(0)
    answers = dict(line.split(": ", 1) for line in frame.locator("li").all_text_contents())
    assert answers["long-key"].startswith("error: Storage key must be a string")
    assert answers["empty-key"].startswith("error: Storage key must be a string")
    assert answers["number-key"].startswith("error: Storage key must be a string")
    assert answers["bad-op"] == "error: Unknown storage operation"
    assert answers["too-big"] == "error: Storage value is larger than 100 KB"
    assert answers["not-json"] == "error: Storage value must be JSON-serialisable"
    assert answers["ok-max-key"] == "ok"
    prefix = f"osf:app:room-{room.pk}.app-{app.pk}.user-{owner.pk}:"
    keys = page.evaluate("Object.keys(localStorage)")
    assert [key for key in keys if key.startswith("osf:app:")] == [prefix + "k" * 200]
