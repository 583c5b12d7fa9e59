"""Revision 2026-07-28 spoken raw, beside the handshake revisions: server/discover, the
per-request _meta, the headers that must agree with the body, resultType on every result, and
the revision's errors (SPEC §6)."""

import base64

import httpx
import pytest

from osfoundry import asgi
from osfoundry.mcp.protocol import EXTERNAL_MCP_PATH, MCP_PATH
from tests.mcpclient import modern_rpc, rpc

SERVER_INFO = {"name": "osfoundry", "title": "osFoundry Rooms", "version": "0.1.0"}


def test_discover_names_the_revisions_the_server_and_the_local_data_rule(asgi_server):
    response = modern_rpc(asgi_server.mcp_url, "server/discover")
    assert response.status_code == 200
    result = response.json()["result"]
    assert result["resultType"] == "complete"
    assert result["supportedVersions"] == ["2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26"]
    assert result["capabilities"]["tools"] == {"listChanged": False}
    assert "Local-only data is unavailable to cloud clients." in result["instructions"]
    assert result["_meta"]["io.modelcontextprotocol/serverInfo"] == SERVER_INFO
    assert (result["ttlMs"], result["cacheScope"]) == (3_600_000, "public")
    assert "mcp-session-id" not in response.headers


def test_discover_and_tools_list_need_a_token_only_behind_the_closed_door(
    asgi_server, agent, token_factory
):
    closed = asgi_server.url + MCP_PATH
    for method in ("server/discover", "tools/list"):
        refused = modern_rpc(closed, method)
        assert refused.status_code == 401
        assert 'resource_metadata="' in refused.headers["www-authenticate"]
        assert modern_rpc(closed, method, token=token_factory(agent)).status_code == 200
        assert modern_rpc(asgi_server.mcp_url, method).status_code == 200


def test_tools_list_is_cacheable_and_in_the_same_order_as_the_handshake_era(asgi_server):
    modern = modern_rpc(asgi_server.mcp_url, "tools/list").json()["result"]
    legacy = rpc(asgi_server.mcp_url, "tools/list").json()["result"]
    assert modern["tools"] == legacy["tools"]
    assert [tool["name"] for tool in modern["tools"]] == [
        tool.name for tool in asgi.mcp_apps[EXTERNAL_MCP_PATH].tools
    ]
    assert (modern["resultType"], modern["ttlMs"], modern["cacheScope"]) == (
        "complete",
        3_600_000,
        "public",
    )
    assert "resultType" not in legacy and "ttlMs" not in legacy


def test_a_tool_call_answers_todays_result_with_its_result_type(
    asgi_server, room, agent, token_factory
):
    params = {"name": "read_room", "arguments": {"room_id": str(room.pk)}}
    response = modern_rpc(asgi_server.mcp_url, "tools/call", params, token=token_factory(agent))
    result = response.json()["result"]
    assert result["resultType"] == "complete"
    assert result["isError"] is False
    assert result["structuredContent"]["name"] == "Team Falcon"
    assert result["_meta"]["io.modelcontextprotocol/serverInfo"] == SERVER_INFO


def test_a_base64_tool_name_header_matches_its_body(asgi_server, agent, token_factory):
    encoded = "=?base64?" + base64.b64encode(b"list_rooms").decode() + "?="
    response = modern_rpc(
        asgi_server.mcp_url,
        "tools/call",
        {"name": "list_rooms", "arguments": {}},
        token=token_factory(agent),
        headers={"Mcp-Name": encoded},
    )
    assert response.status_code == 200
    assert response.json()["result"]["isError"] is False


@pytest.mark.parametrize(
    ("headers", "says"),
    [
        ({"Mcp-Method": "tools/list"}, "Mcp-Method header value 'tools/list' does not match"),
        ({"Mcp-Method": None}, "send the Mcp-Method header"),
        ({"Mcp-Name": "read_room"}, "Mcp-Name header value 'read_room' does not match"),
        ({"Mcp-Name": None}, "send the Mcp-Name header (params.name is 'list_rooms')"),
        ({"MCP-Protocol-Version": "2025-11-25"}, "MCP-Protocol-Version header value '2025-11-25'"),
    ],
    ids=["method-differs", "method-missing", "name-differs", "name-missing", "version-differs"],
)
def test_a_header_that_disagrees_with_the_body_is_a_bad_request(
    asgi_server, agent, token_factory, headers, says
):
    response = modern_rpc(
        asgi_server.mcp_url,
        "tools/call",
        {"name": "list_rooms", "arguments": {}},
        token=token_factory(agent),
        headers=headers,
    )
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == -32020
    assert says in error["message"]


def test_a_modern_request_without_its_meta_is_invalid_params(asgi_server):
    response = rpc(
        asgi_server.mcp_url,
        "tools/list",
        {},
        headers={"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/list"},
    )
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == -32602
    assert "io.modelcontextprotocol/clientCapabilities" in error["message"]


def test_an_unknown_revision_in_meta_names_the_ones_spoken(asgi_server):
    response = modern_rpc(
        asgi_server.mcp_url,
        "server/discover",
        {"_meta": {"io.modelcontextprotocol/protocolVersion": "2027-01-01"}},
        headers={"MCP-Protocol-Version": "2027-01-01"},
    )
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == -32022
    assert error["data"] == {
        "supported": ["2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26"],
        "requested": "2027-01-01",
    }


@pytest.mark.parametrize("path", [EXTERNAL_MCP_PATH, MCP_PATH])
def test_an_unsupported_revision_in_the_header_is_answered_with_the_requests_id(
    asgi_server, agent, token_factory, path
):
    meta = {"io.modelcontextprotocol/protocolVersion": "v999.0.0"}
    response = httpx.post(
        asgi_server.url + path,
        json={"jsonrpc": "2.0", "id": 301, "method": "server/discover", "params": {"_meta": meta}},
        headers={
            "MCP-Protocol-Version": "v999.0.0",
            "Mcp-Method": "server/discover",
            "Authorization": f"Bearer {token_factory(agent)}",
        },
    )
    assert response.status_code == 400
    assert response.json()["id"] == 301
    assert response.json()["error"]["code"] == -32022


@pytest.mark.parametrize("method", ["ping", "initialize", "resources/list", "tasks/list"])
def test_a_method_the_revision_lacks_is_not_found(asgi_server, method):
    response = modern_rpc(asgi_server.mcp_url, method)
    assert response.status_code == 404
    assert response.json()["error"]["code"] == -32601
