"""Who may call what: the 401 challenge, the 403 for a missing scope, the resource metadata."""

import httpx

from tests.mcpclient import rpc

CHALLENGE = (
    'Bearer resource_metadata="{origin}/.well-known/oauth-protected-resource/api/v1/external-mcp", '
    'error="invalid_token", error_description="Connect osFoundry to continue", '
    'scope="osfoundry:read osfoundry:write"'
)


def list_rooms(server, token=None):
    return rpc(server.mcp_url, "tools/call", {"name": "list_rooms", "arguments": {}}, token=token)


def test_call_without_token_is_challenged_byte_for_byte(asgi_server, room):
    response = list_rooms(asgi_server)
    assert response.status_code == 401
    assert response.headers["www-authenticate"] == CHALLENGE.format(origin=asgi_server.url)
    assert "result" not in response.json()
    assert "Team Falcon" not in response.text


def test_call_without_token_tells_the_person_what_to_do(asgi_server, settings):
    # Clients that connected here without a token meet the 401 only now; some just mark the
    # server "needs auth". The JSON-RPC error answers the call, so the model can relay it.
    request_id = 4242
    response = httpx.post(
        asgi_server.mcp_url,
        json={
            "jsonrpc": "2.0",
            "id": request_id,
            "method": "tools/call",
            "params": {"name": "list_rooms", "arguments": {}},
        },
    )
    assert response.status_code == 401
    assert response.json() == {
        "jsonrpc": "2.0",
        "id": request_id,
        "error": {
            "code": -32001,
            "message": "Connect osFoundry to continue: in Claude Code run /mcp and choose "
            f"Authenticate, or add {asgi_server.url}/api/v1/mcp instead",
        },
    }
    settings.PUBLIC_ORIGIN = "https://rooms.example.com"
    message = list_rooms(asgi_server).json()["error"]["message"]
    assert message.endswith("or add https://rooms.example.com/api/v1/mcp instead")


def test_unknown_token_is_challenged(asgi_server, room):
    response = list_rooms(asgi_server, token="osf_not-a-real-token")
    assert response.status_code == 401
    assert response.headers["www-authenticate"] == CHALLENGE.format(origin=asgi_server.url)


def test_challenge_names_the_public_origin_when_set(asgi_server, settings):
    settings.PUBLIC_ORIGIN = "https://rooms.example.com"
    response = list_rooms(asgi_server)
    assert response.headers["www-authenticate"] == CHALLENGE.format(
        origin="https://rooms.example.com"
    )


READ_ONLY = (
    "This token can only read: it lacks the osfoundry:write scope; create a token with "
    "osfoundry:write"
)


def test_a_personal_token_without_write_scope_is_refused_in_the_tool_result(
    asgi_server, room, agent, token_factory, files
):
    # No client can widen a personal token, so a step-up challenge would only end the call in a
    # protocol error; the model reads this and tells its person. (An OAuth connection is
    # challenged: test_oauth_flow.py.)
    token = token_factory(agent, scopes="osfoundry:read")
    arguments = {
        "room_id": str(room.pk),
        "name": "Timer",
        "files": files,
        "idempotency_key": "key-00001",
    }
    response = rpc(
        asgi_server.mcp_url,
        "tools/call",
        {"name": "propose_room_snippet_app", "arguments": arguments},
        token=token,
    )
    assert response.status_code == 200
    assert "www-authenticate" not in response.headers
    result = response.json()["result"]
    assert result["isError"]
    assert result["structuredContent"] == {
        "error": {"code": "insufficient_scope", "message": READ_ONLY}
    }
    assert not room.proposals.exists()


def test_read_only_token_can_read(asgi_server, room, agent, token_factory):
    response = list_rooms(asgi_server, token=token_factory(agent, scopes="osfoundry:read"))
    assert response.status_code == 200
    assert not response.json()["result"]["isError"]


def test_initialize_and_tools_list_need_no_token(asgi_server):
    assert rpc(asgi_server.mcp_url, "initialize", {}).status_code == 200
    assert rpc(asgi_server.mcp_url, "tools/list").status_code == 200


def test_protected_resource_metadata(asgi_server):
    response = httpx.get(
        asgi_server.url + "/.well-known/oauth-protected-resource/api/v1/external-mcp"
    )
    assert response.status_code == 200
    assert response.json() == {
        "resource": asgi_server.mcp_url,
        "authorization_servers": [asgi_server.url],
        "scopes_supported": ["osfoundry:read", "osfoundry:write"],
        "bearer_methods_supported": ["header"],
        "resource_name": "osFoundry Rooms",
    }
