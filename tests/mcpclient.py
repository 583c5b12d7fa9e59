"""Talking to the live MCP endpoint from tests: the official `mcp` client, and raw JSON-RPC."""

import asyncio
import contextlib
import itertools

import httpx
import httpx2
from mcp.client import Client
from mcp.client.streamable_http import streamable_http_client

_ids = itertools.count(1)


@contextlib.asynccontextmanager
async def connect(url: str, token: str | None = None, *, mode: str = "legacy"):
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    timeout = httpx2.Timeout(30, read=70)
    async with httpx2.AsyncClient(headers=headers, timeout=timeout) as http:
        async with Client(streamable_http_client(url, http_client=http), mode=mode) as client:
            yield client


@contextlib.asynccontextmanager
async def connect_client(url: str, token: str | None = None, *, mode: str = "legacy", **options):
    """The official client over Streamable HTTP; `options` go to mcp.client.Client."""
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    # No read timeout: a subscriptions/listen stream stays open without a byte for minutes.
    timeout = httpx2.Timeout(30, read=None)
    async with httpx2.AsyncClient(headers=headers, timeout=timeout) as http:
        transport = streamable_http_client(url, http_client=http)
        async with Client(transport, mode=mode, read_timeout_seconds=70, **options) as client:
            yield client


def call_tool(url: str, token: str, name: str, arguments: dict, *, mode: str = "legacy"):
    """One tools/call through the official client; returns its CallToolResult."""

    async def run():
        async with connect(url, token, mode=mode) as client:
            return await client.call_tool(name, arguments)

    return asyncio.run(run())


def rpc(url: str, method: str, params: dict | None = None, *, token: str | None = None, **kw):
    """One raw JSON-RPC request over HTTP; returns the httpx response."""
    headers = {"Content-Type": "application/json", **kw.pop("headers", {})}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    message = {"jsonrpc": "2.0", "id": next(_ids), "method": method}
    if params is not None:
        message["params"] = params
    return httpx.post(url, json=message, headers=headers, timeout=70, **kw)


MODERN = "2026-07-28"
TASKS = "io.modelcontextprotocol/tasks"


def modern_rpc(
    url: str,
    method: str,
    params: dict | None = None,
    *,
    token: str | None = None,
    tasks: bool = False,
    headers: dict | None = None,
    **kw,
):
    """One raw JSON-RPC request the 2026-07-28 way: _meta with the revision and the client's
    capabilities (the Tasks extension when `tasks`), and the headers that mirror the body
    (Mcp-Name from params.name or params.taskId); `headers` overrides any of them (None
    leaves one out)."""
    params = dict(params or {})
    capabilities = {"extensions": {TASKS: {}}} if tasks else {}
    params["_meta"] = {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientInfo": {"name": "tests", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": capabilities,
        **params.get("_meta", {}),
    }
    sent = {"MCP-Protocol-Version": MODERN, "Mcp-Method": method}
    if (name := params.get("name", params.get("taskId"))) is not None:
        sent["Mcp-Name"] = name
    sent.update(headers or {})
    sent = {name: value for name, value in sent.items() if value is not None}
    return rpc(url, method, params, token=token, headers=sent, **kw)
