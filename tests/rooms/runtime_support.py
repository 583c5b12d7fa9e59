"""Shared pieces of the browser tests of the Room app runtime (tests/rooms/test_*_runtime.py)."""

from concurrent.futures import ThreadPoolExecutor
from functools import wraps
from pathlib import Path

from django.conf import settings
from django.db import connections
from django.test import Client
from playwright.sync_api import expect

from rooms.services import approve_proposal, propose_snippet
from tests.rooms.helpers import stored_unchecked

SNIPPETS = Path(__file__).parent / "snippets"
FRAME = "iframe.osf-app-frame"
APP_AREA = "[data-app-area]"


def snippet_files(name: str) -> dict[str, str]:
    folder = SNIPPETS / name
    return {
        path.relative_to(folder).as_posix(): path.read_text()
        for path in sorted(folder.rglob("*"))
        if path.is_file()
    }


def off_the_browser_loop(function):
    """Run `function` in a worker thread. Playwright's sync API keeps an asyncio loop running in
    the test's thread, where services could not publish their events (async_to_sync refuses)."""

    def call_and_close(*args, **kwargs):
        try:
            return function(*args, **kwargs)
        finally:
            connections.close_all()  # this thread's connections; the test DB must stay droppable

    @wraps(function)
    def wrapper(*args, **kwargs):
        with ThreadPoolExecutor(max_workers=1) as pool:
            return pool.submit(call_and_close, *args, **kwargs).result()

    return wrapper


@off_the_browser_loop
def propose(room, agent, files, *, name="App", key=None):
    return propose_snippet(
        caller=agent,
        room_id=str(room.pk),
        name=name,
        files=files,
        idempotency_key=key or f"key-{name.lower().replace(' ', '-')}-0001",
    ).proposal


@off_the_browser_loop
def approved_app(room, agent, files, *, name="App"):
    proposal = propose.__wrapped__(room, agent, files, name=name)
    return approve_proposal(owner=room.owner, proposal_id=proposal.pk)


@off_the_browser_loop
def unchecked_proposal(room, agent, files, *, name="App"):
    """An app that cannot run, as a proposal stored before proposals were checked for running:
    for the tests of how the frame reports compile and module errors (see helpers.py)."""
    return stored_unchecked(room, agent, files=files, name=name)


@off_the_browser_loop
def approved_unchecked_app(room, agent, files, *, name="App"):
    proposal = stored_unchecked(room, agent, files=files, name=name)
    return approve_proposal(owner=room.owner, proposal_id=proposal.pk)


@off_the_browser_loop
def log_in_client(user):
    client = Client()
    client.force_login(user)
    return client.cookies[settings.SESSION_COOKIE_NAME]


def log_in(context, base_url: str, user) -> None:
    cookie = log_in_client(user)
    context.add_cookies(
        [{"name": cookie.key, "value": cookie.value, "url": base_url, "httpOnly": True}]
    )


def open_tab(page, base_url: str, app):
    """Open the Room page and click the app's launcher tab; returns the frame locator."""
    page.goto(f"{base_url}/rooms/{app.room_id}/")
    page.locator(f'[data-launcher] [data-instance-id="{app.pk}"]').click()
    return page.frame_locator(FRAME)


def wait_state(page, state: str, selector: str = APP_AREA, timeout: float = 15000):
    expect(page.locator(selector)).to_have_attribute("data-state", state, timeout=timeout)


def status_lines(page, selector: str = APP_AREA) -> list[str]:
    return page.locator(f"{selector} .app-status li").all_text_contents()
