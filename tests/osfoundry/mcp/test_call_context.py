"""What the protocol promises a tool: after_response runs only once the answer was written, and a
parked call learns that its client went away (and is cancelled) without waiting for its timeout."""

import asyncio
import json
import socket
import threading

import pytest
from pydantic import BaseModel, ConfigDict

from osfoundry import asgi
from osfoundry.auth import READ
from osfoundry.mcp.protocol import EXTERNAL_MCP_PATH, MCPApp
from osfoundry.mcp.tooling import Tool
from tests.mcpclient import rpc


class NoArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Probe:
    def __init__(self):
        self.delivered = threading.Event()
        self.parked = threading.Event()
        self.gone = threading.Event()
        self.finished = threading.Event()
        self.saw_disconnect = None

    def quick(self, ctx, args):
        ctx.after_response(self.delivered.set)
        return {"ok": True}

    async def park(self, ctx, args):
        ctx.after_response(self.delivered.set)
        self.parked.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            self.saw_disconnect = ctx.is_disconnected()
            self.gone.set()
            raise

    def tools(self):
        common = {
            "description": "test",
            "arguments": NoArgs,
            "scope": READ,
            "annotations": {},
        }
        return [
            Tool(name="quick", handler=self.quick, **common),
            Tool(name="park", handler=self.park, is_async=True, **common),
        ]


@pytest.fixture
def probe(monkeypatch):
    probe = Probe()
    app = MCPApp(tools=probe.tools(), path=EXTERNAL_MCP_PATH, is_discovery_open=True)

    async def serve_and_note(scope, receive, send):
        try:
            await app(scope, receive, send)
        finally:
            probe.finished.set()  # the protocol is done with the request, callbacks included

    monkeypatch.setitem(asgi.mcp_apps, EXTERNAL_MCP_PATH, serve_and_note)
    return probe


def call(server, token, name, **kw):
    return rpc(server.mcp_url, "tools/call", {"name": name, "arguments": {}}, token=token, **kw)


def test_after_response_runs_once_the_answer_is_written(asgi_server, probe, agent, token_factory):
    response = call(asgi_server, token_factory(agent), "quick")
    assert response.json()["result"]["structuredContent"] == {"ok": True}
    assert probe.delivered.wait(10)


def test_parked_call_is_cancelled_when_the_client_goes_away(
    asgi_server, probe, agent, token_factory
):
    token = token_factory(agent)
    body = json.dumps(
        {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "park"}}
    ).encode()
    request = (
        f"POST /api/v1/external-mcp HTTP/1.1\r\nHost: 127.0.0.1:{asgi_server.port}\r\n"
        f"Content-Type: application/json\r\nAuthorization: Bearer {token}\r\n"
        f"Content-Length: {len(body)}\r\n\r\n"
    ).encode()
    with socket.create_connection(("127.0.0.1", asgi_server.port), timeout=10) as sock:
        sock.sendall(request + body)
        assert probe.parked.wait(10)
    # The client hung up: the call is cancelled at once, its answer never written.
    assert probe.gone.wait(10)
    assert probe.saw_disconnect is True
    assert probe.finished.wait(10)
    assert not probe.delivered.is_set()
