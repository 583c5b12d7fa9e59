"""Connected, end to end in headless Chromium against a live uvicorn server: the owner creates a
project-scoped token, copies it with the Copy button and revokes it; an MCP client connected by
OAuth (the official client) is disconnected on the Connected apps page and its next call gets
401. Each page is screenshotted at 1280 and 390 px, and nothing may widen the phone page."""

import asyncio
from concurrent.futures import ThreadPoolExecutor
from urllib.parse import parse_qs, urlencode, urlsplit

import httpx
import httpx2
import pytest
from mcp.client import Client
from mcp.client.streamable_http import streamable_http_client
from playwright.sync_api import expect

from agents.models import AccessToken
from agents.services import claim_connected_profile
from osfoundry.oauth import grant_key
from rooms.models import Project, Room
from tests.mcpclient import connect
from tests.osfoundry.oauth_helpers import AUTHORIZE, CHALLENGE, REGISTRATION, TOKEN, VERIFIER
from tests.osfoundry.test_oauth_flow import (
    Browser,
    Exchanges,
    MemoryStorage,
    logged_in_session,
    sdk_provider,
)
from tests.rooms.test_console_browser import (  # noqa: F401 - fixtures
    browser,
    login,
    people,
    propose_via_api,
    screenshot,
    uvicorn_server,
)

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def _live_server_passwords(settings):
    # tests/agents/conftest.py keeps MD5 only; the live server checks the login with PBKDF2.
    settings.PASSWORD_HASHERS = [
        "django.contrib.auth.hashers.MD5PasswordHasher",
        "django.contrib.auth.hashers.PBKDF2PasswordHasher",
    ]


def off_this_thread(function, *args):
    """Run async client code in a thread of its own: Playwright's sync API keeps a loop here."""
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(function, *args).result()


def both_widths(page, name):
    page.set_viewport_size({"width": 1280, "height": 900})
    screenshot(page, f"{name}-1280.png")
    page.set_viewport_size({"width": 390, "height": 844})
    screenshot(page, f"{name}-390.png")
    assert page.evaluate("document.documentElement.scrollWidth") <= 390, name
    page.set_viewport_size({"width": 1280, "height": 900})


def test_a_token_is_created_copied_and_revoked(
    uvicorn_server,  # noqa: F811 - the imported fixtures
    browser,  # noqa: F811
    people,  # noqa: F811
    files,
):
    owner, room = people["owner"], people["room"]
    other = Project.objects.create(name="Other")
    Room.objects.create(project=other, name="Elsewhere", owner=owner)
    page = login(browser, uvicorn_server, "owner")
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    page.get_by_role("link", name="Tokens", exact=True).click()
    expect(page.get_by_role("heading", name="Tokens", exact=True)).to_be_visible()
    page.fill("#token-name", "Codex laptop")
    page.select_option("#token-project", label=room.project.name)
    page.select_option("#token-expiry", label="90 days")
    page.get_by_role("button", name="Create token").click()

    secret = page.locator("[data-token-secret]").inner_text().strip()
    assert secret.startswith("osf_")
    page.get_by_role("button", name="Copy").click()
    expect(page.locator("[data-copy-status]")).to_contain_text("Copied")
    assert page.evaluate("navigator.clipboard.readText()") == secret
    both_widths(page, "connected-token-created")

    # It works, for its project only.
    auth = {"Authorization": f"Bearer {secret}"}
    listed = httpx.get(f"{uvicorn_server}/api/v1/rooms", headers=auth).json()["rooms"]
    assert [r["room_id"] for r in listed] == [str(room.pk)]
    token = AccessToken.objects.get(name="Codex laptop")
    assert token.project == room.project

    # What it proposes says which token sent it.
    propose_via_api(uvicorn_server, secret, room, files, name="Byline", key="byline-0001")
    page.goto(f"{uvicorn_server}/")
    row = page.locator("[data-pending-rows] tr", has_text="Byline")
    expect(row).to_contain_text("owner · Codex laptop")
    both_widths(page, "connected-inbox")

    # Shown once: the list no longer has the secret.
    page.goto(f"{uvicorn_server}/connected/tokens/")
    assert secret not in page.content()
    row = page.locator(f'tr[data-token-id="{token.pk}"]')
    expect(row).to_contain_text(room.project.name)
    expect(row).to_contain_text("just now")  # last used
    row.get_by_role("button", name="Revoke").click()
    expect(page.locator(".flash")).to_contain_text("Revoked")
    expect(page.locator(f'tr[data-token-id="{token.pk}"]')).to_contain_text("Revoked")
    both_widths(page, "connected-tokens")
    assert httpx.get(f"{uvicorn_server}/api/v1/rooms", headers=auth).status_code == 401


def mcp_statuses(url: str, token: str) -> list[tuple[str, int]]:
    """Call list_rooms with the official client and a bare bearer token; the statuses seen."""
    exchanges = Exchanges(url)

    async def run():
        hooks = {"response": [exchanges]}
        headers = {"Authorization": f"Bearer {token}"}
        async with httpx2.AsyncClient(headers=headers, timeout=30, event_hooks=hooks) as http:
            async with Client(streamable_http_client(url, http_client=http), mode="legacy") as c:
                await c.call_tool("list_rooms", {})

    try:
        off_this_thread(asyncio.run, run())
    except Exception:  # the client raises (in a group) on a 401: the statuses tell
        pass
    return exchanges.seen


def test_disconnecting_an_app_ends_its_access_on_the_next_call(
    uvicorn_server,  # noqa: F811 - the imported fixtures
    browser,  # noqa: F811
    people,  # noqa: F811
):
    owner = people["owner"]
    url = f"{uvicorn_server}/api/v1/external-mcp"
    storage = MemoryStorage()

    async def connect():
        auth = sdk_provider(url, Browser(logged_in_session(owner)), storage)
        async with httpx2.AsyncClient(auth=auth, timeout=30) as http:
            async with Client(streamable_http_client(url, http_client=http), mode="legacy") as c:
                return await c.call_tool("list_rooms", {})

    assert not off_this_thread(asyncio.run, connect()).is_error
    access = storage.tokens.access_token
    key = grant_key(storage.client_info.client_id, owner.pk)
    claim_connected_profile(user=owner, connection_key=key, handle="owner-claude")
    assert ("tools/call", 200) in mcp_statuses(url, access)

    page = login(browser, uvicorn_server, "owner")
    page.goto(f"{uvicorn_server}/connected/apps/")
    row = page.locator("[data-client-id]", has_text="Test agent")
    expect(row).to_contain_text("self-declared")
    expect(row).to_contain_text("127.0.0.1:9")
    expect(row).to_contain_text("write")
    both_widths(page, "connected-apps")
    row.get_by_role("button", name="Disconnect").click()
    expect(page.locator(".flash")).to_contain_text("Disconnected")
    expect(page.locator("[data-client-id]")).to_have_count(0)

    assert ("tools/call", 401) in mcp_statuses(url, access)
    assert ("tools/call", 200) not in mcp_statuses(url, access)

    page.goto(f"{uvicorn_server}/connected/agents/")
    row = page.locator('[data-handle="owner-claude"]')
    expect(row).to_contain_text("Test agent via OAuth")
    expect(row).to_contain_text("No access")
    expect(row).to_contain_text("just now")  # last seen: its calls before the disconnect
    both_widths(page, "connected-agents")


def test_the_consent_page_confines_an_app_to_the_chosen_project(
    uvicorn_server,  # noqa: F811
    browser,  # noqa: F811
    people,  # noqa: F811
):
    owner, room = people["owner"], people["room"]
    other = Project.objects.create(name="Other")
    Room.objects.create(project=other, name="Elsewhere", owner=owner)
    resource = f"{uvicorn_server}/api/v1/external-mcp"
    redirect_uri = "http://127.0.0.1:9/callback"
    registered = httpx.post(
        f"{uvicorn_server}{REGISTRATION}",
        json={
            "client_name": "Codex",
            "redirect_uris": [redirect_uri],
            "token_endpoint_auth_method": "none",
        },
        timeout=30,
    )
    client_id = registered.json()["client_id"]
    query = {
        "response_type": "code",
        "client_id": client_id,
        "redirect_uri": redirect_uri,
        "code_challenge": CHALLENGE,
        "code_challenge_method": "S256",
        "scope": "osfoundry:read osfoundry:write",
        "state": "s-1",
        "resource": resource,
    }
    page = login(browser, uvicorn_server, "owner")
    callbacks = []

    def callback(route):
        callbacks.append(route.request.url)
        route.fulfill(status=200, body="done")

    page.route("http://127.0.0.1:9/**", callback)
    page.goto(f"{uvicorn_server}{AUTHORIZE}?{urlencode(query)}")
    expect(page.get_by_role("heading", name="Connect osFoundry")).to_be_visible()
    both_widths(page, "connected-consent")
    page.select_option("#consent-project", label=room.project.name)
    page.get_by_role("button", name="Connect").click()
    expect(page.locator("body")).to_have_text("done")

    code = parse_qs(urlsplit(callbacks[0]).query)["code"][0]
    token = httpx.post(
        f"{uvicorn_server}{TOKEN}",
        data={
            "grant_type": "authorization_code",
            "client_id": client_id,
            "redirect_uri": redirect_uri,
            "code": code,
            "code_verifier": VERIFIER,
            "resource": resource,
        },
        timeout=30,
    ).json()["access_token"]

    async def rooms():
        async with connect(resource, token) as mcp:
            return await mcp.call_tool("list_rooms", {})

    listed = off_this_thread(asyncio.run, rooms()).structured_content["rooms"]
    assert [r["room_id"] for r in listed] == [str(room.pk)]
    page.goto(f"{uvicorn_server}/connected/apps/")
    expect(page.locator(f'[data-client-id="{client_id}"]')).to_contain_text(room.project.name)
