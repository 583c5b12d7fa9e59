"""Headless Chromium for the browser tests, and the live uvicorn server the console's browser
tests (tests/rooms, tests/agents) drive: one launcher, one sign-in.

The module-scoped fixtures `uvicorn_server` and `browser` are imported by the modules that use
them (each module gets its own server and browser); tests/rooms/conftest.py has a browser per
test on a session-wide server.
"""

import os
from contextlib import contextmanager
from pathlib import Path

import pytest
from django.conf import settings
from django.db import connection

from tests.servers import CHROMIUM, CHROMIUM_ARGS, database_url, start_uvicorn, stop_process

# Screenshots land in this git-ignored folder.
ARTIFACTS = Path(settings.BASE_DIR) / "artifacts"
# The password of the people the browser tests sign in (hashed with PBKDF2, which the live
# server checks).
PASSWORD = "pw-browser-4711"
TIMEOUT_MS = 15_000


def require_chromium() -> None:
    """Skip where Chromium is not installed; in CI, fail."""
    if not Path(CHROMIUM).exists():
        if os.environ.get("CI"):
            pytest.fail(f"{CHROMIUM} is required in CI; run `make browser`")
        pytest.skip(f"{CHROMIUM} is not installed; run `make browser`")


@contextmanager
def launch_chromium():
    """Headless Chromium through Playwright's sync API, closed on the way out.

    Playwright's sync API keeps an asyncio loop running in this thread, which Django's
    async-safety check takes for async code: a caller that makes ORM calls (really synchronous)
    while it runs sets DJANGO_ALLOW_ASYNC_UNSAFE for as long (monkeypatch, or
    sync_orm_allowed())."""
    require_chromium()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS
        )
        yield browser
        browser.close()


@contextmanager
def sync_orm_allowed():
    """DJANGO_ALLOW_ASYNC_UNSAFE=true inside, restored as it was on the way out: for browsers
    that outlive one test (monkeypatch is per test)."""
    previous = os.environ.get("DJANGO_ALLOW_ASYNC_UNSAFE")
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    try:
        yield
    finally:
        if previous is None:
            os.environ.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
        else:
            os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = previous


@pytest.fixture(scope="module")
def uvicorn_server(django_db_setup, django_db_blocker):
    """osfoundry.asgi:application under uvicorn on the test database, for one module (use
    transactional_db: the server sees committed rows only); its base URL."""
    with django_db_blocker.unblock():
        url = database_url(connection.settings_dict)
    env = {"DATABASE_URL": url, "STATIC_MANIFEST": "0", "LOG_LEVEL": "WARNING"}
    process, base_url = start_uvicorn(
        env=env,
        unset=["DJANGO_ALLOW_ASYNC_UNSAFE"],
        options=["--no-access-log"],
        cwd=settings.BASE_DIR,
    )
    yield base_url
    stop_process(process)


@pytest.fixture(scope="module")
def browser():
    """Chromium for one module, Playwright's `expect` waiting TIMEOUT_MS; the ORM calls the
    tests (and pytest-django's flush) make between browser steps are allowed meanwhile."""
    from playwright.sync_api import expect

    with sync_orm_allowed(), launch_chromium() as chromium:
        expect.set_options(timeout=TIMEOUT_MS)
        yield chromium


def give_browser_password(*users):
    """PASSWORD for `users`, hashed with PBKDF2: the live server checks passwords with the
    production hashers."""
    from django.contrib.auth.hashers import make_password

    for user in users:
        user.password = make_password(PASSWORD, hasher="pbkdf2_sha256")
        user.save(update_fields=["password"])


def sign_in(page, base, username):
    """Sign `username` in with PASSWORD on the login page; returns `page` on the inbox."""
    page.goto(f"{base}/accounts/login/")
    page.fill("#id_login", username)
    page.fill("#id_password", PASSWORD)
    page.get_by_role("button", name="Log in").click()
    page.wait_for_url(f"{base}/")
    return page


def screenshot(page, name, *, full_page=True):
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / name), full_page=full_page)
