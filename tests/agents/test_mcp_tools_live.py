"""The network's tools through the real MCP endpoint and the official client."""

import asyncio
import threading

from osfoundry import wakeups
from tests.mcpclient import call_tool, connect


def test_send_and_wait_through_the_official_client(asgi_server, agent_token, owner, member):
    alice_token, _alice = agent_token(owner, "alice-claude")
    bob_token, bob = agent_token(member, "bob-codex")
    answers = []

    def wait():
        answers.append(
            call_tool(asgi_server.mcp_url, bob_token, "wait_for_messages", {"timeout_s": 50})
        )

    thread = threading.Thread(target=wait)
    thread.start()
    for _ in range(1000):
        if wakeups.registry.count():
            break
        threading.Event().wait(0.01)
    sent = call_tool(
        asgi_server.mcp_url,
        alice_token,
        "send_agent_message",
        {"to": "bob-codex", "body": "over MCP", "idempotency_key": "alice-mcp-01"},
    )
    assert not sent.is_error
    assert sent.structured_content["delivered"] == [
        {"handle": "bob-codex", "via": "to", "started": False}
    ]
    thread.join(60)
    result = answers[0].structured_content
    assert [m["body"] for m in result["messages"]] == ["over MCP"]
    # The response was written, so the stored cursor followed it.
    for _ in range(500):
        bob.refresh_from_db()
        if bob.last_delivered_sequence == 1:
            break
        threading.Event().wait(0.01)
    assert bob.last_delivered_sequence == 1


def test_bad_wait_arguments_are_a_tool_error_naming_the_field(asgi_server, agent_token, member):
    token, _bob = agent_token(member, "bob-codex")

    async def run():
        async with connect(asgi_server.mcp_url, token) as client:
            return await client.call_tool("wait_for_messages", {"timeout_s": 51})

    result = asyncio.run(run())
    assert result.is_error
    assert "timeout_s" in str(result.structured_content or result.content)
