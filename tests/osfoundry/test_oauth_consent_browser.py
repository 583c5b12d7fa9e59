"""The consent page in headless Chromium, on a desktop and a 390 px wide phone: a person can read
who asks, where Connect leads, and reach both buttons. Screenshots land in the git-ignored
artifacts/ folder."""

from pathlib import Path

import httpx
import pytest
from django.conf import settings
from django.test import Client as DjangoClient

from tests.browser import launch_chromium
from tests.osfoundry.oauth_helpers import CHALLENGE

ARTIFACTS = Path(settings.BASE_DIR) / "artifacts"
REDIRECT_URI = "https://evil.example/steal"


@pytest.fixture
def chromium(monkeypatch):
    # Playwright's sync API keeps an asyncio loop in this thread; Django's async-safety check
    # would take the test's plain ORM calls for async code.
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    with launch_chromium() as browser:
        yield browser


def consent_url(server) -> str:
    registered = httpx.post(
        server.url + "/identity/o/api/clients",
        json={
            "client_name": "Claude Code",
            "redirect_uris": [REDIRECT_URI],
            "token_endpoint_auth_method": "none",
        },
    )
    assert registered.status_code == 201, registered.text
    query = httpx.QueryParams(
        response_type="code",
        client_id=registered.json()["client_id"],
        redirect_uri=REDIRECT_URI,
        code_challenge=CHALLENGE,
        code_challenge_method="S256",
        scope="osfoundry:read osfoundry:write",
        state="s-1",
        resource=server.mcp_url,
    )
    return f"{server.url}/identity/o/authorize?{query}"


@pytest.mark.parametrize(
    ("width", "name"), [(1280, "consent-desktop.png"), (390, "consent-390.png")]
)
def test_consent_page_reads_well_on_desktop_and_phone(asgi_server, owner, chromium, width, name):
    from playwright.sync_api import expect

    url = consent_url(asgi_server)
    session = DjangoClient()
    session.force_login(owner)
    context = chromium.new_context(viewport={"width": width, "height": 900})
    context.set_default_timeout(15_000)
    context.add_cookies(
        [{"name": "sessionid", "value": session.cookies["sessionid"].value, "url": asgi_server.url}]
    )
    page = context.new_page()

    page.goto(url)

    card = page.locator(".consent")
    expect(card).to_contain_text("An app that calls itself “Claude Code” asks to act for owner")
    expect(card).to_contain_text("Connecting will send you to evil.example")
    expect(page.get_by_role("button", name="Connect")).to_be_visible()
    expect(page.get_by_role("button", name="Cancel")).to_be_visible()
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / name), full_page=True)
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    context.close()


@pytest.mark.parametrize(
    ("width", "name"),
    [(1280, "consent-document-desktop.png"), (390, "consent-document-390.png")],
)
def test_a_metadata_document_consent_page_reads_well_on_desktop_and_phone(
    asgi_server, owner, chromium, document_server, width, name
):
    from playwright.sync_api import expect

    document_url = document_server.serve_document("/oauth/claude-code-client-metadata")
    query = httpx.QueryParams(
        response_type="code",
        client_id=document_url,
        redirect_uri="http://localhost:53412/callback",
        code_challenge=CHALLENGE,
        code_challenge_method="S256",
        scope="osfoundry:read osfoundry:write",
        state="s-1",
        resource=asgi_server.mcp_url,
    )
    session = DjangoClient()
    session.force_login(owner)
    context = chromium.new_context(viewport={"width": width, "height": 900})
    context.set_default_timeout(15_000)
    context.add_cookies(
        [{"name": "sessionid", "value": session.cookies["sessionid"].value, "url": asgi_server.url}]
    )
    page = context.new_page()

    page.goto(f"{asgi_server.url}/identity/o/authorize?{query}")

    card = page.locator(".consent")
    expect(card).to_contain_text("An app that calls itself “Test agent” asks to act for owner")
    expect(card).to_contain_text(
        f"Its name and where it sends you are published by 127.0.0.1:{document_server.port}."
    )
    expect(card).to_contain_text("Connecting will send you to localhost:53412")
    expect(page.get_by_role("button", name="Connect")).to_be_visible()
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / name), full_page=True)
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    context.close()
