"""/api/v1/mcp: the same tools as /api/v1/external-mcp, but every request needs a token, so a
client meets the 401 at `initialize` and signs in as it connects."""

import httpx
import pytest

from tests.mcpclient import rpc

PATH = "/api/v1/mcp"
CHALLENGE = (
    'Bearer resource_metadata="{origin}/.well-known/oauth-protected-resource/api/v1/mcp", '
    'error="invalid_token", error_description="Connect osFoundry to continue", '
    'scope="osfoundry:read osfoundry:write"'
)
SIGN_IN = "Connect osFoundry to continue: in Claude Code run /mcp and choose Authenticate"


def post(server, body: bytes | str, *, token: str | None = None, **headers) -> httpx.Response:
    headers = {"Content-Type": "application/json", **headers}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    return httpx.post(server.url + PATH, content=body, headers=headers, timeout=30)


def test_initialize_without_token_is_challenged_byte_for_byte(asgi_server):
    response = rpc(asgi_server.url + PATH, "initialize", {"protocolVersion": "2025-11-25"})
    assert response.status_code == 401
    assert response.headers["www-authenticate"] == CHALLENGE.format(origin=asgi_server.url)
    assert response.json() == {
        "jsonrpc": "2.0",
        "id": None,
        "error": {"code": -32001, "message": SIGN_IN},
    }
    # Counted against the caller's address, like every answer.
    assert "x-ratelimit-limit" in response.headers


@pytest.mark.parametrize(
    "body",
    [
        '{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}',
        '{"jsonrpc": "2.0", "id": 1, "method": "ping"}',
        '{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "list_rooms"}}',
        '{"jsonrpc": "2.0", "method": "notifications/initialized"}',
        '{"jsonrpc": "2.0", "id": 1, "method": "no/such/method"}',
        "{not json",
    ],
    ids=["tools-list", "ping", "tools-call", "notification", "unknown-method", "malformed"],
)
def test_every_request_without_a_token_is_challenged(asgi_server, room, body):
    response = post(asgi_server, body)
    assert response.status_code == 401
    assert response.headers["www-authenticate"] == CHALLENGE.format(origin=asgi_server.url)
    assert "result" not in response.json()
    assert "list_rooms" not in response.text and "Team Falcon" not in response.text


def test_unknown_token_is_challenged(asgi_server):
    response = rpc(asgi_server.url + PATH, "tools/list", token="osf_not-a-real-token")
    assert response.status_code == 401
    assert response.headers["www-authenticate"] == CHALLENGE.format(origin=asgi_server.url)


def test_challenge_names_the_public_origin_when_set(asgi_server, settings):
    settings.PUBLIC_ORIGIN = "https://rooms.example.com"
    response = rpc(asgi_server.url + PATH, "initialize", {})
    assert response.headers["www-authenticate"] == CHALLENGE.format(
        origin="https://rooms.example.com"
    )


def test_a_token_answers_initialize_and_tools_list_like_the_other_path(
    asgi_server, agent, token_factory
):
    token = token_factory(agent)
    for method in ("initialize", "tools/list"):
        ours = rpc(asgi_server.url + PATH, method, {}, token=token)
        theirs = rpc(asgi_server.mcp_url, method, {})
        assert ours.status_code == 200
        assert ours.json()["result"] == theirs.json()["result"]
        assert "x-ratelimit-limit" in ours.headers


def test_a_personal_token_without_write_scope_is_refused_in_the_tool_result_here_too(
    asgi_server, room, agent, token_factory, files
):
    token = token_factory(agent, scopes="osfoundry:read")
    arguments = {"room_id": str(room.pk), "name": "Timer", "files": files}
    response = rpc(
        asgi_server.url + PATH,
        "tools/call",
        {
            "name": "propose_room_snippet_app",
            "arguments": {**arguments, "idempotency_key": "k-0001"},
        },
        token=token,
    )
    assert response.status_code == 200
    assert response.json()["result"]["structuredContent"]["error"] == {
        "code": "insufficient_scope",
        "message": "This token can only read: it lacks the osfoundry:write scope; create a "
        "token with osfoundry:write",
    }
    assert not room.proposals.exists()


def test_a_foreign_origin_is_refused_before_any_token_is_asked_for(asgi_server):
    response = rpc(asgi_server.url + PATH, "initialize", {}, headers={"Origin": "http://evil.test"})
    assert response.status_code == 403
    assert "www-authenticate" not in response.headers


def test_get_is_not_allowed(asgi_server):
    response = httpx.get(asgi_server.url + PATH)
    assert response.status_code == 405
    assert response.headers["allow"] == "POST"


@pytest.mark.parametrize(
    ("metadata_path", "resource_path"),
    [
        ("/.well-known/oauth-protected-resource/api/v1/mcp", "/api/v1/mcp"),
        ("/.well-known/oauth-protected-resource/api/v1/external-mcp", "/api/v1/external-mcp"),
        # Without a suffix, as before there were two paths: the one SPEC §6 names.
        ("/.well-known/oauth-protected-resource", "/api/v1/external-mcp"),
    ],
)
def test_each_path_has_its_own_protected_resource_metadata(
    asgi_server, metadata_path, resource_path
):
    response = httpx.get(asgi_server.url + metadata_path)
    assert response.status_code == 200
    assert response.json() == {
        "resource": asgi_server.url + resource_path,
        "authorization_servers": [asgi_server.url],
        "scopes_supported": ["osfoundry:read", "osfoundry:write"],
        "bearer_methods_supported": ["header"],
        "resource_name": "osFoundry Rooms",
    }
