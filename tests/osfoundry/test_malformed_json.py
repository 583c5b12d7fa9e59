"""Malformed JSON is the caller's mistake, on every interface: a 400 that says so, never a 500
and never a logged traceback. Two bodies that used to crash the MCP endpoint: arrays nested past
the parser's recursion limit, and a lone UTF-16 surrogate (valid JSON escape, invalid Unicode)."""

import json
import logging

import httpx
import pytest

from rooms.models import Proposal

NESTED = b"[" * 2000
MCP_PATHS = ["/api/v1/mcp", "/api/v1/external-mcp"]
# What a lone surrogate outside a file is, and the fix; each message starts with where it is.
NOT_A_CHARACTER = (
    "lone surrogate U+{cp} is not a character: no UTF-8 text can hold it; send the whole "
    "character (a surrogate pair, such as \\ud83d\\ude00 for U+1F600) or remove it"
)


class Records(logging.Handler):
    def __init__(self):
        super().__init__(logging.WARNING)
        self.records: list[logging.LogRecord] = []

    def emit(self, record):
        self.records.append(record)


@pytest.fixture
def logged():
    """Warnings and errors logged anywhere, uvicorn's own (non-propagating) loggers included."""
    handler = Records()
    loggers = [logging.getLogger(name) for name in ("", "uvicorn", "uvicorn.error")]
    for logger in loggers:
        logger.addHandler(handler)
    yield handler.records
    for logger in loggers:
        logger.removeHandler(handler)


def post(server, body: bytes, token: str | None = None, *, path: str | None = None):
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    url = server.url + path if path else server.mcp_url
    return httpx.post(url, content=body, headers=headers, timeout=30)


def parse_error(message: str) -> dict:
    return {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": message}}


def test_deeply_nested_json_is_a_parse_error(asgi_server, logged):
    response = post(asgi_server, NESTED)
    assert response.status_code == 400
    assert response.json() == parse_error("Parse error: body: JSON nested too deeply")
    assert [r for r in logged if r.exc_info] == []


@pytest.mark.parametrize("path", MCP_PATHS)
@pytest.mark.parametrize(
    ("body", "where", "cp"),
    [
        (rb'{"jsonrpc": "2.0", "id": "\ud800", "method": "ping"}', "id: column 1: ", "D800"),
        (
            rb'{"jsonrpc": "2.0", "id": 1, "method": "tools/call",'
            rb' "params": {"name": "list_rooms", "arguments": {"limit": 1, "x\udc00": 1}}}',
            "params.arguments.x\\uDC00: in the key, column 2: ",
            "DC00",
        ),
        (
            rb'{"jsonrpc": "2.0", "id": 1, "method": "tools/call",'
            rb' "params": {"name": "send_agent_message", "arguments": {"to": "bob",'
            rb' "body": "Hi,\n\nsee \ud83d\ude00 \ud800", "idempotency_key": "key-00001"}}}',
            "params.arguments.body: line 3, column 7: ",  # columns count characters
            "D800",
        ),
    ],
    ids=["in-the-id", "in-a-key", "in-a-message-body"],
)
def test_a_lone_surrogate_is_a_parse_error_naming_where_it_is(
    asgi_server, logged, agent, token_factory, path, body, where, cp
):
    response = post(asgi_server, body, token_factory(agent), path=path)
    assert response.status_code == 400
    assert response.json() == parse_error(f"Parse error: {where}{NOT_A_CHARACTER.format(cp=cp)}")
    assert [r for r in logged if r.exc_info] == []


def test_an_encoded_surrogate_is_not_utf8(asgi_server, logged):
    # The surrogate's three UTF-8-like bytes, which json.loads(bytes) would let through.
    response = post(asgi_server, b'{"jsonrpc": "2.0", "id": "\xed\xa0\x80", "method": "ping"}')
    assert response.status_code == 400
    assert response.json() == parse_error("Parse error: body: not UTF-8")
    assert [r for r in logged if r.exc_info] == []


def test_a_surrogate_pair_is_a_character_and_is_answered(asgi_server):
    # What Python's json.dumps makes of an emoji: the pair must not be mistaken for lone halves.
    response = post(asgi_server, rb'{"jsonrpc": "2.0", "id": "\ud83d\ude00", "method": "ping"}')
    assert response.status_code == 200
    assert response.json() == {"jsonrpc": "2.0", "id": "\U0001f600", "result": {}}


@pytest.mark.parametrize(
    "body",
    [
        NESTED,
        rb'{"name": "\ud800", "files": {"src/App.tsx": "x"}, "idempotency_key": "surrogate-1"}',
    ],
    ids=["nested", "lone-surrogate"],
)
def test_rest_answers_400_to_the_same_bodies(client, room, agent, token_factory, body, logged):
    response = client.post(
        f"/api/v1/rooms/{room.pk}/proposals/snippet",
        body,
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {token_factory(agent)}",
    )
    assert response.status_code == 400
    error = json.loads(response.content)["error"]
    assert error["code"] in ("bad_request", "invalid_arguments")
    assert error["message"].startswith(("body: not valid JSON", "name: "))
    assert Proposal.objects.count() == 0
    assert [r for r in logged if r.exc_info] == []
