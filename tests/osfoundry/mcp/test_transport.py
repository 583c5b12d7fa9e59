"""The Streamable HTTP transport, spoken raw: what every MCP client relies on."""

import base64

import httpx

from osfoundry import asgi
from osfoundry.mcp.jsonrpc import encode_cursor
from osfoundry.mcp.protocol import EXTERNAL_MCP_PATH
from tests.mcpclient import rpc


def test_initialize_announces_tools_and_the_local_data_rule(asgi_server):
    response = rpc(asgi_server.mcp_url, "initialize", {"protocolVersion": "2025-11-25"})
    assert response.status_code == 200
    result = response.json()["result"]
    assert result["protocolVersion"] == "2025-11-25"
    assert result["capabilities"] == {"tools": {"listChanged": False}}
    assert "Local-only data is unavailable to cloud clients." in result["instructions"]
    assert "mcp-session-id" not in response.headers  # stateless


def test_initialize_counter_offers_our_revision_for_an_unknown_one(asgi_server):
    response = rpc(asgi_server.mcp_url, "initialize", {"protocolVersion": "1999-01-01"})
    assert response.json()["result"]["protocolVersion"] == "2025-11-25"


def test_ping_answers_an_empty_result(asgi_server):
    response = rpc(asgi_server.mcp_url, "ping")
    assert response.json() == {"jsonrpc": "2.0", "id": response.json()["id"], "result": {}}


def test_notifications_are_accepted_without_a_body(asgi_server):
    response = httpx.post(
        asgi_server.mcp_url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}
    )
    assert response.status_code == 202
    assert response.content == b""


def test_get_and_delete_are_not_allowed(asgi_server):
    for method in ("GET", "DELETE"):
        response = httpx.request(method, asgi_server.mcp_url)
        assert response.status_code == 405
        assert response.headers["allow"] == "POST"
        assert response.headers["x-ratelimit-limit"] == "2000"


def test_a_batch_is_a_json_rpc_error(asgi_server):
    batch = [{"jsonrpc": "2.0", "id": 1, "method": "ping"}]
    response = httpx.post(asgi_server.mcp_url, json=batch)
    assert response.status_code == 400
    assert response.json()["error"]["code"] == -32600
    assert "one JSON-RPC message per POST" in response.json()["error"]["message"]


def test_body_that_is_not_json_is_a_parse_error(asgi_server):
    response = httpx.post(
        asgi_server.mcp_url, content=b"{nope", headers={"content-type": "application/json"}
    )
    assert response.status_code == 400
    assert response.json()["error"]["code"] == -32700


def test_foreign_origin_is_forbidden(asgi_server):
    response = rpc(asgi_server.mcp_url, "ping", headers={"Origin": "https://evil.example"})
    assert response.status_code == 403
    assert "evil.example" in response.json()["error"]["message"]


def test_own_origin_is_allowed(asgi_server):
    response = rpc(asgi_server.mcp_url, "ping", headers={"Origin": asgi_server.url})
    assert response.status_code == 200


def test_foreign_host_is_forbidden(asgi_server):
    # DNS rebinding: a page on evil.example resolved to this server sends its own Host.
    response = rpc(
        asgi_server.mcp_url,
        "ping",
        headers={"Host": "evil.example", "Origin": "http://evil.example"},
    )
    assert response.status_code == 403


def test_unsupported_protocol_version_header_is_a_bad_request(asgi_server):
    response = rpc(asgi_server.mcp_url, "ping", headers={"MCP-Protocol-Version": "2030-01-01"})
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == -32022
    assert "2025-11-25" in error["data"]["supported"]


def test_supported_protocol_version_header_is_accepted(asgi_server):
    response = rpc(asgi_server.mcp_url, "ping", headers={"MCP-Protocol-Version": "2025-11-25"})
    assert response.status_code == 200


def test_unknown_method_is_method_not_found(asgi_server):
    response = rpc(asgi_server.mcp_url, "resources/list")
    assert response.json()["error"]["code"] == -32601


def test_unknown_tool_is_invalid_params(asgi_server, agent, token_factory):
    response = rpc(
        asgi_server.mcp_url,
        "tools/call",
        {"name": "delete_room", "arguments": {}},
        token=token_factory(agent),
    )
    error = response.json()["error"]
    assert error["code"] == -32602
    assert "delete_room" in error["message"]


def test_tools_list_pages_with_a_cursor(asgi_server, monkeypatch):
    monkeypatch.setattr(asgi.mcp_apps[EXTERNAL_MCP_PATH], "page_size", 3)
    names, cursor, pages = [], None, 0
    while True:
        params = {"cursor": cursor} if cursor else {}
        result = rpc(asgi_server.mcp_url, "tools/list", params).json()["result"]
        names += [tool["name"] for tool in result["tools"]]
        pages += 1
        cursor = result.get("nextCursor")
        if not cursor:
            break
    assert names == [tool.name for tool in asgi.mcp_apps[EXTERNAL_MCP_PATH].tools]
    assert pages == -(-len(names) // 3)


def test_bad_cursor_is_invalid_params(asgi_server):
    response = rpc(asgi_server.mcp_url, "tools/list", {"cursor": "not-a-cursor"})
    assert response.json()["error"]["code"] == -32602


def test_other_paths_still_reach_django(asgi_server):
    response = httpx.get(asgi_server.url + "/api/v1/rooms")
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "invalid_token"


def test_oversized_body_is_refused_and_points_to_repositories(asgi_server, settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1_000
    response = rpc(asgi_server.mcp_url, "tools/list", {"cursor": "x" * 2_000})
    assert response.status_code == 413
    assert "repository version" in response.json()["error"]["message"]


def test_a_cursor_past_the_last_page_or_of_another_kind_is_invalid_params(asgi_server):
    for cursor in (encode_cursor(10_000), base64.urlsafe_b64encode(b"x:0").decode()):
        response = rpc(asgi_server.mcp_url, "tools/list", {"cursor": cursor})
        assert response.status_code == 200
        error = response.json()["error"]
        assert error["code"] == -32602
        assert error["message"] == "Invalid cursor: pass nextCursor from the previous page"
