"""JSON-RPC envelopes that are well-formed JSON but not well-formed requests: each gets the
JSON-RPC error that names what is wrong, and messages that need no answer get 202."""

import logging

import httpx
import pytest

from osfoundry import asgi
from osfoundry.auth import READ
from osfoundry.mcp.protocol import EXTERNAL_MCP_PATH, MCPApp
from osfoundry.mcp.tooling import Tool
from osfoundry.schemas import Strict


def post(server, message, token=None):
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    return httpx.post(server.mcp_url, json=message, headers=headers, timeout=10)


@pytest.mark.parametrize(
    ("message", "error"),
    [
        (
            {"jsonrpc": "2.0", "id": 1.5, "method": "ping"},
            "Invalid request: method must be a string, id a string or integer",
        ),
        (
            {"jsonrpc": "2.0", "id": True, "method": "ping"},
            "Invalid request: method must be a string, id a string or integer",
        ),
        (
            {"jsonrpc": "2.0", "id": 1, "method": 7},
            "Invalid request: method must be a string, id a string or integer",
        ),
        ({"jsonrpc": "1.0", "id": 1, "method": "ping"}, 'Invalid request: send {"jsonrpc": "2.0"}'),
        ("ping", 'Invalid request: send {"jsonrpc": "2.0"}'),
    ],
    ids=["float-id", "boolean-id", "method-not-a-string", "jsonrpc-1.0", "not-an-object"],
)
def test_a_malformed_envelope_is_an_invalid_request(asgi_server, message, error):
    response = post(asgi_server, message)
    assert response.status_code == 400
    assert response.json() == {
        "jsonrpc": "2.0",
        "id": None,
        "error": {"code": -32600, "message": error},
    }


def test_params_that_are_not_an_object_are_invalid_params(asgi_server):
    response = post(asgi_server, {"jsonrpc": "2.0", "id": 3, "method": "tools/list", "params": []})
    assert response.status_code == 200
    assert response.json()["error"] == {"code": -32602, "message": "params must be an object"}


def test_arguments_that_are_not_an_object_are_invalid_params(asgi_server, agent, token_factory):
    message = {
        "jsonrpc": "2.0",
        "id": 4,
        "method": "tools/call",
        "params": {"name": "list_rooms", "arguments": ["x"]},
    }
    response = post(asgi_server, message, token_factory(agent))
    assert response.json()["error"] == {"code": -32602, "message": "arguments must be an object"}


@pytest.mark.parametrize(
    "message",
    [
        {"jsonrpc": "2.0", "id": 5, "result": {}},  # a client's answer to a server request
        {"jsonrpc": "2.0", "id": 6, "error": {"code": -1, "message": "no"}},
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}},
    ],
    ids=["client-result", "client-error", "notification"],
)
def test_messages_that_need_no_answer_get_202_and_no_body(asgi_server, message):
    response = post(asgi_server, message)
    assert (response.status_code, response.content) == (202, b"")


class NoArgs(Strict):
    pass


def broken(ctx, args):
    raise RuntimeError("a bug in a tool")


def test_a_tool_that_fails_answers_server_error_and_logs_it(
    asgi_server, agent, token_factory, monkeypatch, caplog
):
    tool = Tool(
        name="broken", description="x", arguments=NoArgs, scope=READ, annotations={}, handler=broken
    )
    app = MCPApp(tools=[tool], path=EXTERNAL_MCP_PATH, is_discovery_open=True)
    monkeypatch.setitem(asgi.mcp_apps, EXTERNAL_MCP_PATH, app)
    message = {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "broken"}}
    with caplog.at_level(logging.ERROR, logger="osfoundry.mcp.protocol"):
        response = post(asgi_server, message, token_factory(agent))
    result = response.json()["result"]
    assert result["isError"] is True
    assert result["structuredContent"] == {
        "error": {"code": "server_error", "message": "Unexpected error; it was logged"}
    }
    (record,) = [r for r in caplog.records if r.name == "osfoundry.mcp.protocol"]
    assert record.getMessage() == "MCP tool broken failed"
    assert "a bug in a tool" in str(record.exc_info[1])


def test_behind_a_tls_proxy_the_challenge_names_the_https_origin(asgi_server, settings):
    settings.BEHIND_TLS_PROXY = True
    message = {"jsonrpc": "2.0", "id": 8, "method": "tools/call", "params": {"name": "list_rooms"}}
    response = httpx.post(
        asgi_server.mcp_url,
        json=message,
        headers={"X-Forwarded-Proto": "https", "Host": f"127.0.0.1:{asgi_server.port}"},
    )
    assert response.status_code == 401
    expected = f"https://127.0.0.1:{asgi_server.port}/.well-known/oauth-protected-resource"
    assert (
        f'resource_metadata="{expected}/api/v1/external-mcp"'
        in response.headers["www-authenticate"]
    )
