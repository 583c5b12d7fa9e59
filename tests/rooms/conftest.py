"""Browser-test fixtures: a live uvicorn server on the test database, and headless Chromium;
an npm registry of the tests' own."""

from pathlib import Path

import pytest
from django.conf import settings
from django.db import connection

from rooms.models import Repository
from tests import npmregistry
from tests.browser import launch_chromium
from tests.rooms import registry_packages
from tests.servers import database_url, start_uvicorn, stop_process


@pytest.fixture(scope="session")
def live_server_url(django_db_setup, tmp_path_factory):
    """osfoundry.asgi:application under uvicorn, on the test database (use transactional_db:
    the server sees committed rows only). Its access log is at `.access_log`."""
    log_path = tmp_path_factory.mktemp("uvicorn") / "server.log"
    env = {
        "DATABASE_URL": database_url(connection.settings_dict),
        "SECRET_KEY": settings.SECRET_KEY,  # the sessions the tests create must be valid there
        "STATIC_MANIFEST": "0",
        "DEBUG": "0",
        "CONN_MAX_AGE": "0",  # no idle connection outlives a request: the test DB can be dropped
    }
    process, url = start_uvicorn(env=env, log_path=log_path, unset=["DJANGO_ALLOW_ASYNC_UNSAFE"])
    yield LiveServer(url, log_path)
    stop_process(process)


class LiveServer(str):
    def __new__(cls, url, log_path):
        server = super().__new__(cls, url)
        server.log_path = Path(log_path)
        return server

    def access_log(self) -> str:
        return self.log_path.read_text()


@pytest.fixture
def browser(live_server_url, monkeypatch):
    """Chromium for one test. Playwright's sync API keeps an asyncio loop running in this
    thread, which Django's async-safety check takes for async code: allow sync ORM calls
    for this test only (they really are synchronous)."""
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    with launch_chromium() as chromium:
        yield chromium


@pytest.fixture
def context(browser):
    context = browser.new_context()
    context.set_default_timeout(15000)
    yield context
    context.close()


@pytest.fixture
def page(context):
    page = context.new_page()
    page.console_messages = []
    page.on("console", lambda message: page.console_messages.append(message.text))
    return page


@pytest.fixture
def repository(project):
    return Repository.objects.create(project=project, name="timer")


@pytest.fixture
def npm_registry(settings):
    """The test's own npm registry on 127.0.0.1 with the packages of registry_packages.py,
    configured as the Room's."""
    registry = npmregistry.NpmRegistry().start()
    registry_packages.publish_all(registry)
    settings.NPM_REGISTRY_URL = registry.url
    yield registry
    registry.stop()
