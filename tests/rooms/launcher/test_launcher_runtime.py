"""Clicking a launcher tab on the Room page runs the approved app in the sandboxed frame."""

import re

import pytest
from playwright.sync_api import expect

from tests.rooms.runtime_support import (
    APP_AREA,
    FRAME,
    approved_app,
    approved_unchecked_app,
    log_in,
    open_tab,
    snippet_files,
    status_lines,
    wait_state,
)

pytestmark = pytest.mark.django_db(transaction=True)


def test_standup_timer_opens_from_the_launcher_and_works(
    page, context, live_server_url, room, member, agent, files
):
    app = approved_app(room, agent, files, name="Standup timer")
    log_in(context, live_server_url, member)
    frame = open_tab(page, live_server_url, app)

    expect(frame.locator(".speaker")).to_have_text("Now speaking: Ada")
    wait_state(page, "mounted")
    assert page.locator(FRAME).get_attribute("sandbox") == "allow-scripts"
    tab = page.locator(f'[data-launcher] [data-instance-id="{app.pk}"]')
    expect(tab).to_have_attribute("aria-selected", "true")
    expect(frame.locator(".clock")).to_have_text("1:30")
    expect(frame.locator("h1")).to_have_css("text-align", "center")  # styles.css applied

    frame.get_by_role("button", name="Start").click()
    expect(frame.get_by_role("button", name="Pause")).to_be_visible()
    expect(frame.locator(".clock")).to_have_text("1:29", timeout=5000)
    frame.get_by_role("button", name="Pause").click()
    expect(frame.get_by_role("button", name="Start")).to_be_visible()
    frame.get_by_role("button", name="Next").click()
    expect(frame.locator(".speaker")).to_have_text("Now speaking: Grace")
    assert status_lines(page)[0].startswith("Running (compiled in ")

    page.locator("[data-app-close]").click()
    expect(page.locator(FRAME)).to_have_count(0)
    expect(page.locator(f"{APP_AREA} [data-app-placeholder]")).to_be_visible()


def test_syntax_error_is_shown_in_the_frame_and_reported_on_the_page(
    page, context, live_server_url, room, owner, agent
):
    app = approved_unchecked_app(room, agent, snippet_files("syntax"), name="Broken")
    log_in(context, live_server_url, owner)
    frame = open_tab(page, live_server_url, app)
    wait_state(page, "error")
    shown = frame.locator("#osf-error")
    expect(shown).to_contain_text("The app could not be compiled")
    expect(shown).to_contain_text("src/App.tsx:8:")
    (line,) = status_lines(page)
    assert re.match(r"Compile error in src/App\.tsx: src/App\.tsx:8:\d+: ", line), line


def test_unknown_package_is_refused_with_a_clear_message(
    page, context, live_server_url, room, owner, agent
):
    app = approved_unchecked_app(room, agent, snippet_files("unknown-package"), name="Left pad")
    log_in(context, live_server_url, owner)
    frame = open_tab(page, live_server_url, app)
    wait_state(page, "error")
    expect(frame.locator("#osf-error")).to_contain_text("module 'left-pad' is not available")
    assert status_lines(page) == ["Module error in src/App.tsx: module 'left-pad' is not available"]


def test_relative_imports_json_css_and_react_dom_resolve(
    page, context, live_server_url, room, owner, agent
):
    app = approved_app(room, agent, snippet_files("modules"), name="Modules")
    log_in(context, live_server_url, owner)
    frame = open_tab(page, live_server_url, app)
    wait_state(page, "mounted")
    expect(frame.locator("#result")).to_have_text("Totals: 6 / 42")
    expect(frame.locator(".badge")).to_have_text("badge: react 19")
    expect(frame.locator(".badge")).to_have_css("color", "rgb(0, 128, 0)")
    expect(frame.locator("#portal")).to_have_text("portal ok")


def test_runtime_errors_are_reported_as_text(page, context, live_server_url, room, owner, agent):
    app = approved_app(room, agent, snippet_files("crash"), name="Crash")
    log_in(context, live_server_url, owner)
    frame = open_tab(page, live_server_url, app)
    wait_state(page, "mounted")
    for name in ("Break handler", "Break promise", "Break render"):
        frame.get_by_role("button", name=name).click()
    expect(page.locator(f"{APP_AREA} .status-error")).to_have_count(3)
    text = " | ".join(status_lines(page))
    for needle in ("Handler failed on purpose", "Async failed on purpose", "Fragile broke"):
        assert f"Runtime error: Error: {needle}" in text or needle in text
    expect(frame.locator("#osf-error")).to_contain_text("Fragile broke on purpose")
    expect(frame.locator("text=All good")).to_have_count(0)


def test_a_tab_of_another_room_is_not_found(
    page, context, live_server_url, room, room_factory, agent, stranger, files
):
    app = approved_app(room, agent, files, name="Standup timer")
    other = room_factory(name="Elsewhere", room_owner=stranger)
    log_in(context, live_server_url, stranger)
    response = page.request.get(f"{live_server_url}/rooms/{other.pk}/apps/{app.pk}/files.json")
    assert response.status == 404
    response = page.request.get(f"{live_server_url}/rooms/{room.pk}/apps/{app.pk}/files.json")
    assert response.status == 404


def test_switching_tabs_runs_each_app_in_a_fresh_frame(
    page, context, live_server_url, room, owner, agent, files
):
    timer = approved_app(room, agent, files, name="Standup timer")
    modules = approved_app(room, agent, snippet_files("modules"), name="Modules")
    log_in(context, live_server_url, owner)
    frame = open_tab(page, live_server_url, timer)
    expect(frame.locator(".speaker")).to_have_text("Now speaking: Ada")
    page.locator(FRAME).evaluate("element => { element.dataset.usedBy = 'timer'; }")
    # The next frame is already loading, hidden and sandboxed like the others.
    standby = page.locator("iframe.osf-app-frame-standby")
    expect(standby).to_have_count(1)
    assert standby.get_attribute("sandbox") == "allow-scripts"
    assert standby.is_hidden()

    page.locator(f'[data-launcher] [data-instance-id="{modules.pk}"]').click()
    expect(frame.locator("#result")).to_have_text("Totals: 6 / 42")
    expect(page.locator(FRAME)).to_have_count(1)
    assert page.locator(FRAME).get_attribute("data-used-by") is None  # never reused
    expect(frame.locator(".speaker")).to_have_count(0)
