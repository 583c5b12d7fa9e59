"""The seeds' central promise: "the server-side cursor never advances for a response that could
not be written". Driven at the ASGI level, where the server's two ways of failing a write can be
made exact: the client's disconnect reported right after the response started (uvicorn then
drops the body silently), and a `send` that raises.

Each case first checks the good path with the same harness, so a harness that could never see a
write would fail here too."""

import asyncio
import json

import pytest

from agents import longpoll
from agents.models import AgentProfile
from osfoundry.mcp.protocol import EXTERNAL_MCP_PATH as MCP_PATH
from osfoundry.mcp.protocol import MCPApp

from .test_wait_for_messages import in_thread, send

pytestmark = pytest.mark.django_db(transaction=True)


class Client:
    """An ASGI client whose `receive` gives the request body, then reports a disconnect when
    told to; `send` records messages and may fail or yield on the body."""

    def __init__(self, body: bytes = b"", *, leave_when_started=False, fail_on_body=False):
        self.body = body
        self.leave_when_started = leave_when_started
        self.fail_on_body = fail_on_body
        self.gone = asyncio.Event()
        self.sent: list[dict] = []
        self.body_read = False

    async def receive(self):
        if not self.body_read:
            self.body_read = True
            return {"type": "http.request", "body": self.body, "more_body": False}
        await self.gone.wait()
        return {"type": "http.disconnect"}

    async def send(self, message):
        self.sent.append(message)
        if message["type"] == "http.response.start" and self.leave_when_started:
            self.gone.set()
        if message["type"] == "http.response.body":
            if self.fail_on_body:
                raise OSError("connection reset by peer")
            await asyncio.sleep(0)  # a real server yields here: the disconnect is noticed

    @property
    def status(self) -> int:
        return self.sent[0]["status"]

    def json(self) -> dict:
        return json.loads(self.sent[-1]["body"])


def scope(path: str, token: str, *, method="GET", query=b"") -> dict:
    headers = [(b"host", b"127.0.0.1"), (b"authorization", f"Bearer {token}".encode())]
    if method == "POST":
        headers.append((b"content-type", b"application/json"))
    return {
        "type": "http",
        "method": method,
        "path": path,
        "query_string": query,
        "headers": headers,
        "scheme": "http",
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 8000),
    }


async def cursor(profile) -> int:
    row = await in_thread(AgentProfile.objects.get)(pk=profile.pk)
    return row.last_delivered_sequence


@pytest.fixture
async def message_for_bob(agent_token, owner, member):
    _alice_token, alice = await in_thread(agent_token)(owner, "alice-claude")
    bob_token, bob = await in_thread(agent_token)(member, "bob-codex")
    await send(alice, "bob-codex", "hello", "key-00001")
    return bob_token, bob


async def long_poll(token, client: Client):
    await longpoll.handle(
        scope(longpoll.PATH, token, query=b"timeout_s=0"), client.receive, client.send
    )


async def test_a_written_long_poll_response_moves_the_cursor(message_for_bob):
    token, bob = message_for_bob
    client = Client()
    await long_poll(token, client)
    assert [m["body"] for m in client.json()["messages"]] == ["hello"]
    assert await cursor(bob) == 1


async def test_a_long_poll_response_whose_client_left_while_it_was_written_moves_nothing(
    message_for_bob,
):
    token, bob = message_for_bob
    client = Client(leave_when_started=True)
    await long_poll(token, client)
    assert client.status == 200  # the server started answering...
    assert await cursor(bob) == 0  # ...but the client had gone: the message comes again
    again = Client()
    await long_poll(token, again)
    assert [m["sequence"] for m in again.json()["messages"]] == [1]


async def test_a_long_poll_response_that_failed_to_send_moves_nothing(message_for_bob):
    token, bob = message_for_bob
    client = Client(fail_on_body=True)
    with pytest.raises(OSError):
        await long_poll(token, client)
    assert await cursor(bob) == 0


def wait_call() -> bytes:
    message = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "wait_for_messages", "arguments": {"timeout_s": 0}},
    }
    return json.dumps(message).encode()


async def mcp_wait(token, client: Client):
    app = MCPApp(path=MCP_PATH, is_discovery_open=True)
    await app(scope(MCP_PATH, token, method="POST"), client.receive, client.send)


async def test_a_written_mcp_wait_moves_the_cursor(message_for_bob):
    token, bob = message_for_bob
    client = Client(wait_call())
    await mcp_wait(token, client)
    result = client.json()["result"]["structuredContent"]
    assert [m["body"] for m in result["messages"]] == ["hello"]
    assert await cursor(bob) == 1


async def test_an_mcp_wait_whose_client_left_while_it_was_written_moves_nothing(
    message_for_bob,
):
    token, bob = message_for_bob
    client = Client(wait_call(), leave_when_started=True)
    await mcp_wait(token, client)
    assert client.status == 200
    assert await cursor(bob) == 0


async def test_an_mcp_wait_that_failed_to_send_moves_nothing(message_for_bob):
    token, bob = message_for_bob
    client = Client(wait_call(), fail_on_body=True)
    with pytest.raises(OSError):
        await mcp_wait(token, client)
    assert await cursor(bob) == 0
