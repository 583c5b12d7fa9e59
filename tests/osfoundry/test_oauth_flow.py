"""The whole OAuth flow an MCP client runs, with the official SDK's OAuth client provider:
401 → protected-resource metadata → authorization-server metadata → dynamic registration (or a
client ID metadata document, test_sdk_signs_in_with_a_client_id_metadata_document) →
PKCE authorization (the consent page, driven here as the owner's browser) → token → the request
again. On /api/v1/mcp the 401 answers `initialize`; on /api/v1/external-mcp the first `tools/call`.
"""

import asyncio
import json
import re
from html import unescape
from urllib.parse import parse_qs, urlsplit

import httpx
import httpx2
import pytest
from django.test import Client as DjangoClient
from mcp.client import Client
from mcp.client.auth import OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import (
    AuthorizationCodeResult,
    OAuthClientInformationFull,
    OAuthClientMetadata,
    OAuthToken,
)

from agents.models import AgentProfile
from osfoundry.auth import authenticate_bearer
from tests.mcpclient import rpc
from tests.osfoundry.oauth_helpers import TOKEN, VERIFIER

REDIRECT_URI = "http://127.0.0.1:9/callback"  # never contacted: the test reads the redirect


class MemoryStorage:
    def __init__(self):
        self.tokens: OAuthToken | None = None
        self.client_info: OAuthClientInformationFull | None = None

    async def get_tokens(self):
        return self.tokens

    async def set_tokens(self, tokens):
        self.tokens = tokens

    async def get_client_info(self):
        return self.client_info

    async def set_client_info(self, client_info):
        self.client_info = client_info


class Browser:
    """The Room owner's logged-in browser: opens the authorization URL and clicks Connect."""

    def __init__(self, session_cookie: str, *, action: str = "grant"):
        self.cookies = {"sessionid": session_cookie}
        self.action = action
        self.consent_page = ""
        self.consent_policy = ""
        self.callback: dict = {}

    async def open(self, url: str) -> None:
        async with httpx.AsyncClient(cookies=self.cookies) as browser:
            page = await browser.get(url)
            assert page.status_code == 200, page.text[:500]
            self.consent_page = page.text
            self.consent_policy = page.headers["content-security-policy"]
            form = {
                "csrfmiddlewaretoken": field(page.text, "csrfmiddlewaretoken"),
                "request": field(page.text, "request"),
                "scopes": re.findall(r'name="scopes" value="([^"]+)"', page.text),
                "action": self.action,
            }
            action_url = str(page.url.copy_with(query=None))
            done = await browser.post(action_url, data=form, headers={"Referer": str(page.url)})
            assert done.status_code == 302, done.text[:500]
            self.callback = parse_qs(urlsplit(done.headers["location"]).query)

    async def code(self) -> AuthorizationCodeResult:
        first = {name: values[0] for name, values in self.callback.items()}
        return AuthorizationCodeResult(
            code=first["code"], state=first.get("state"), iss=first.get("iss")
        )


def field(html: str, name: str) -> str:
    match = re.search(rf'name="{name}" value="([^"]*)"', html) or re.search(
        rf'value="([^"]*)" name="{name}"', html
    )
    assert match, f"no {name} field on the page"
    return unescape(match.group(1))


def logged_in_session(user) -> str:
    client = DjangoClient()
    client.force_login(user)
    return client.cookies["sessionid"].value


class Exchanges:
    """An httpx response hook: each JSON-RPC method posted to `url`, with the status it got."""

    def __init__(self, url: str):
        self.url = url
        self.seen: list[tuple[str, int]] = []

    async def __call__(self, response) -> None:
        request = response.request
        if request.method == "POST" and str(request.url) == self.url:
            self.seen.append((json.loads(request.content)["method"], response.status_code))


def sdk_provider(url: str, browser: Browser, storage: MemoryStorage) -> OAuthClientProvider:
    return OAuthClientProvider(
        server_url=url,
        client_metadata=OAuthClientMetadata(
            client_name="Test agent",
            redirect_uris=[REDIRECT_URI],
            grant_types=["authorization_code", "refresh_token"],
            response_types=["code"],
            token_endpoint_auth_method="none",
        ),
        storage=storage,
        redirect_handler=browser.open,
        callback_handler=browser.code,
    )


def test_sdk_signs_in_at_the_initialize_401_on_the_mcp_path(asgi_server, room, owner):
    url = asgi_server.url + "/api/v1/mcp"
    browser = Browser(logged_in_session(owner))
    storage = MemoryStorage()
    exchanges = Exchanges(url)

    async def run():
        hooks = {"response": [exchanges]}
        auth = sdk_provider(url, browser, storage)
        async with httpx2.AsyncClient(auth=auth, timeout=30, event_hooks=hooks) as http:
            async with Client(
                streamable_http_client(url, http_client=http), mode="legacy"
            ) as client:
                return await client.list_tools()

    tools = asyncio.run(run())
    assert "list_rooms" in [tool.name for tool in tools.tools]
    # The very first answer is the challenge; the client signed in and initialized again,
    # without a tool call.
    assert exchanges.seen[:2] == [("initialize", 401), ("initialize", 200)]
    assert ("tools/list", 200) in exchanges.seen
    assert all(method != "tools/call" for method, _ in exchanges.seen)
    assert "Connect osFoundry" in browser.consent_page
    principal = authenticate_bearer(storage.tokens.access_token, resource=url)
    assert principal.user == owner and principal.kind == "oauth"


def test_sdk_oauth_flow_ends_in_a_successful_tool_call(asgi_server, room, owner):
    browser = Browser(logged_in_session(owner))
    storage = MemoryStorage()
    exchanges = Exchanges(asgi_server.mcp_url)

    async def run():
        hooks = {"response": [exchanges]}
        auth = sdk_provider(asgi_server.mcp_url, browser, storage)
        async with httpx2.AsyncClient(auth=auth, timeout=30, event_hooks=hooks) as http:
            transport = streamable_http_client(asgi_server.mcp_url, http_client=http)
            async with Client(transport, mode="legacy") as client:
                return await client.call_tool("list_rooms", {})

    result = asyncio.run(run())
    assert not result.is_error
    assert [r["room_id"] for r in result.structured_content["rooms"]] == [str(room.pk)]
    # SPEC §6's path: initialize answers without a token, the tool call meets the challenge.
    challenged = [status for _, status in exchanges.seen].index(401)
    assert exchanges.seen[0] == ("initialize", 200)
    assert exchanges.seen[challenged : challenged + 2] == [("tools/call", 401), ("tools/call", 200)]
    assert "Connect osFoundry" in browser.consent_page
    # The consent form's answer redirects to the client: its policy lets it (and only it) go.
    assert "; form-action 'self' http://127.0.0.1:9;" in browser.consent_policy
    # The token carries our scopes, and is bound to the MCP endpoint alone.
    token = storage.tokens.access_token
    assert set(storage.tokens.scope.split()) >= {"osfoundry:read", "osfoundry:write"}
    principal = authenticate_bearer(token, resource=asgi_server.mcp_url)
    assert principal.user == owner and principal.kind == "oauth"
    assert authenticate_bearer(token, resource="http://elsewhere.example/mcp") is None
    assert authenticate_bearer(token) is None  # the REST API takes personal tokens only


def test_discovery_documents_list_our_scopes_and_pkce(asgi_server):
    for path in ("/.well-known/oauth-authorization-server", "/.well-known/openid-configuration"):
        data = httpx.get(asgi_server.url + path).json()
        assert data["issuer"] == asgi_server.url
        assert {"osfoundry:read", "osfoundry:write"} <= set(data["scopes_supported"])
        assert data["code_challenge_methods_supported"] == ["S256"]
        # MCP 2026-07-28: a client ID may be a metadata document's URL; registration stays.
        assert data["client_id_metadata_document_supported"] is True
        assert data["registration_endpoint"].startswith(asgi_server.url)


class Requests:
    """An httpx request hook: every URL the client asked for."""

    def __init__(self):
        self.urls: list[str] = []

    async def __call__(self, request) -> None:
        self.urls.append(str(request.url))


def test_sdk_signs_in_with_a_client_id_metadata_document(asgi_server, room, owner, document_server):
    # The SDK uses the document's URL as its client ID because the metadata says the server
    # takes one, and registers nothing. Its document lists http://localhost/callback, as Claude
    # Code's does, and it listens on a port of its own.
    document_url = document_server.serve_document("/oauth/client.json")
    url = asgi_server.url + "/api/v1/mcp"
    browser = Browser(logged_in_session(owner))
    storage = MemoryStorage()
    requests = Requests()

    async def run():
        auth = OAuthClientProvider(
            server_url=url,
            client_metadata=OAuthClientMetadata(
                client_name="Test agent",
                redirect_uris=["http://localhost:9/callback"],
                grant_types=["authorization_code", "refresh_token"],
                response_types=["code"],
                token_endpoint_auth_method="none",
            ),
            storage=storage,
            redirect_handler=browser.open,
            callback_handler=browser.code,
            client_metadata_url=document_url,
        )
        hooks = {"request": [requests]}
        async with httpx2.AsyncClient(auth=auth, timeout=30, event_hooks=hooks) as http:
            transport = streamable_http_client(url, http_client=http)
            async with Client(transport, mode="legacy") as client:
                return await client.call_tool("list_rooms", {})

    result = asyncio.run(run())
    assert not result.is_error
    assert [r["room_id"] for r in result.structured_content["rooms"]] == [str(room.pk)]
    assert storage.client_info.client_id == document_url
    assert not [seen for seen in requests.urls if "/identity/o/api/clients" in seen]
    assert document_server.hits["/oauth/client.json"] == 1
    page = " ".join(unescape(re.sub(r"<[^>]+>", "", browser.consent_page)).split())
    assert "An app that calls itself “Test agent” asks to act for owner" in page
    host = f"127.0.0.1:{document_server.port}"
    assert f"Its name and where it sends you are published by {host}." in page
    assert "Connecting will send you to localhost:9, a program on this computer." in page
    principal = authenticate_bearer(storage.tokens.access_token, resource=url)
    assert principal.user == owner and principal.name == "Test agent via OAuth"


def test_registration_is_open_and_grants_our_scopes(asgi_server):
    config = httpx.get(asgi_server.url + "/.well-known/oauth-authorization-server").json()
    response = httpx.post(
        config["registration_endpoint"],
        json={
            "client_name": "Some MCP client",
            "redirect_uris": [REDIRECT_URI],
            "token_endpoint_auth_method": "none",
        },
    )
    assert response.status_code == 201, response.text
    from allauth.idp.oidc.models import Client as OAuthClient

    client = OAuthClient.objects.get(id=response.json()["client_id"])
    assert {"osfoundry:read", "osfoundry:write"} <= set(client.get_scopes())
    assert client.get_default_scopes() == ["osfoundry:read", "osfoundry:write"]


def register(server, redirect_uri: str = REDIRECT_URI) -> str:
    response = httpx.post(
        server.url + "/identity/o/api/clients",
        json={"redirect_uris": [redirect_uri], "token_endpoint_auth_method": "none"},
    )
    assert response.status_code == 201, response.text
    return response.json()["client_id"]


def authorize_url(server, client_id: str, resource: str, redirect_uri: str = REDIRECT_URI) -> str:
    query = httpx.QueryParams(
        response_type="code",
        client_id=client_id,
        redirect_uri=redirect_uri,
        code_challenge="E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
        code_challenge_method="S256",
        scope="osfoundry:read",
        state="s-1",
        resource=resource,
    )
    return f"{server.url}/identity/o/authorize?{query}"


@pytest.mark.parametrize(
    "resource",
    ["http://elsewhere.example/mcp", "{origin}/api/v1/other-mcp", "http://elsewhere.example"],
)
def test_authorization_for_another_resource_is_refused(asgi_server, owner, resource):
    client_id = register(asgi_server)
    cookies = {"sessionid": logged_in_session(owner)}
    url = authorize_url(asgi_server, client_id, resource.format(origin=asgi_server.url))
    page = httpx.get(url, cookies=cookies)
    assert "Connect osFoundry" not in page.text
    assert "issues tokens only for" in page.text


@pytest.mark.parametrize("path", ["/api/v1/mcp", "/api/v1/external-mcp"])
def test_authorization_for_either_mcp_path_is_granted(asgi_server, owner, path):
    client_id = register(asgi_server)
    cookies = {"sessionid": logged_in_session(owner)}
    page = httpx.get(authorize_url(asgi_server, client_id, asgi_server.url + path), cookies=cookies)
    assert "Connect osFoundry" in page.text


def oauth_token(server, user, resource: str) -> str:
    """An access token bound to `resource`, through registration, consent and the token
    endpoint."""
    client_id = register(server)
    browser = Browser(logged_in_session(user))
    asyncio.run(browser.open(authorize_url(server, client_id, resource)))
    response = httpx.post(
        server.url + TOKEN,
        data={
            "grant_type": "authorization_code",
            "client_id": client_id,
            "redirect_uri": REDIRECT_URI,
            "code": browser.callback["code"][0],
            "code_verifier": VERIFIER,
            "resource": resource,
        },
    )
    assert response.status_code == 200, response.text
    return response.json()["access_token"]


@pytest.mark.parametrize("bound_to", ["/api/v1/mcp", "/api/v1/external-mcp"])
def test_a_token_bound_to_either_mcp_path_works_on_both(asgi_server, room, owner, bound_to):
    # One protected resource behind two paths (osfoundry/oauth.py, same_resource).
    token = oauth_token(asgi_server, owner, asgi_server.url + bound_to)
    for path in ("/api/v1/mcp", "/api/v1/external-mcp"):
        params = {"name": "list_rooms", "arguments": {}}
        response = rpc(asgi_server.url + path, "tools/call", params, token=token)
        assert response.status_code == 200, (path, response.text)
        assert not response.json()["result"]["isError"]
    # Still bound: no other origin's MCP endpoint, and not the REST API.
    for elsewhere in ("http://elsewhere.example/api/v1/mcp", asgi_server.url + "/api/v1/rooms"):
        assert authenticate_bearer(token, resource=elsewhere) is None
    assert authenticate_bearer(token) is None


@pytest.mark.parametrize("path", ["/api/v1/mcp", "/api/v1/external-mcp"])
def test_a_connection_granted_only_read_is_challenged_to_ask_for_write(asgi_server, owner, path):
    # MCP's step-up authorization: the client signs in again for the scope the challenge names.
    # (A personal token, which no client can widen, is refused in the tool result instead.)
    token = oauth_token(asgi_server, owner, asgi_server.url + path)
    params = {"name": "claim_connected_profile", "arguments": {"handle": "owner-claude"}}
    response = rpc(asgi_server.url + path, "tools/call", params, token=token)
    message = (
        "This connection can only read: it lacks the osfoundry:write scope; connect again and "
        "allow osfoundry:write"
    )
    assert response.status_code == 403
    assert response.headers["www-authenticate"] == (
        f'Bearer resource_metadata="{asgi_server.url}/.well-known/oauth-protected-resource'
        f'{path}", error="insufficient_scope", error_description="{message}", '
        'scope="osfoundry:read osfoundry:write"'
    )
    assert response.json()["error"]["message"] == message
    assert not AgentProfile.objects.exists()


def test_cancel_on_the_consent_page_grants_nothing(asgi_server, owner):
    client_id = register(asgi_server)
    browser = Browser(logged_in_session(owner), action="cancel")
    asyncio.run(browser.open(authorize_url(asgi_server, client_id, asgi_server.mcp_url)))
    assert browser.callback["error"] == ["access_denied"]
    assert "code" not in browser.callback


@pytest.mark.parametrize(
    ("redirect_uri", "source"),
    [
        ("https://agent.example/oauth/callback", "https://agent.example"),
        ("http://[::1]:8976/callback", "http://[::1]:8976"),
    ],
)
def test_the_consent_page_lets_its_form_reach_only_its_clients_callback(
    asgi_server, owner, redirect_uri, source
):
    client_id = register(asgi_server, redirect_uri)
    cookies = {"sessionid": logged_in_session(owner)}
    url = authorize_url(asgi_server, client_id, asgi_server.mcp_url, redirect_uri)
    page = httpx.get(url, cookies=cookies)
    assert "Connect osFoundry" in page.text
    policy = page.headers["content-security-policy"]
    assert f"; form-action 'self' {source};" in policy
    assert "script-src 'self';" in policy and "default-src 'self';" in policy
    # Another client's callback is not in it, and other pages keep form-action 'self' alone.
    assert "127.0.0.1:9" not in policy
    login = httpx.get(asgi_server.url + "/accounts/login/")
    assert "; form-action 'self';" in login.headers["content-security-policy"]
