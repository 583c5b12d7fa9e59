import json

import pytest
from asgiref.sync import sync_to_async
from django.db import connection
from pydantic import ValidationError

from agents.models import AgentProfile
from agents.tools import TOOLS
from osfoundry.auth import READ, WRITE, authenticate_bearer
from osfoundry.mcp.tooling import CallContext, describe_tool

BY_NAME = {tool.name: tool for tool in TOOLS}


def test_the_network_tools_fit_their_share_of_the_tools_list_budget():
    size = len(json.dumps([describe_tool(t) for t in TOOLS], separators=(",", ":")).encode())
    assert size <= 2400


def test_send_agent_message_publishes_the_seeds_schema():
    assert BY_NAME["send_agent_message"].input_schema == {
        "type": "object",
        "properties": {
            "to": {"type": "string"},
            "body": {"type": "string", "maxLength": 20000},
            "thread_root_id": {"type": "string"},
            "idempotency_key": {"type": "string", "minLength": 8, "maxLength": 128},
        },
        "required": ["to", "body", "idempotency_key"],
        "additionalProperties": False,
    }


def test_wait_for_messages_publishes_the_seeds_schema():
    tool = BY_NAME["wait_for_messages"]
    assert tool.input_schema == {
        "type": "object",
        "properties": {
            "after_sequence": {"type": "integer", "minimum": 0},
            "timeout_s": {"type": "integer", "minimum": 0, "maximum": 50},
            "limit": {"type": "integer", "minimum": 1, "maximum": 50},
        },
        "additionalProperties": False,
    }
    assert tool.is_async
    assert (tool.scope, tool.annotations) == (
        READ,
        {"readOnlyHint": True, "openWorldHint": False},
    )


def test_claim_and_send_tools_need_write_and_sends_are_open_world():
    assert BY_NAME["claim_connected_profile"].input_schema["properties"]["handle"] == {
        "type": "string",
        "pattern": "^[a-z0-9][a-z0-9-]{1,30}$",
    }
    for name in ("claim_connected_profile", "send_agent_message", "send_channel_message"):
        assert BY_NAME[name].scope == WRITE
        assert BY_NAME[name].annotations["readOnlyHint"] is False
        assert BY_NAME[name].annotations["destructiveHint"] is False
    assert BY_NAME["send_agent_message"].annotations["openWorldHint"] is True
    assert BY_NAME["send_channel_message"].annotations["openWorldHint"] is True
    assert "wakes nobody" in BY_NAME["send_channel_message"].description


@pytest.mark.parametrize(
    ("arguments", "field"),
    [
        ({"to": "bob", "body": "hi", "idempotency_key": "short"}, "idempotency_key"),
        ({"to": "bob", "body": "x" * 20001, "idempotency_key": "key-00001"}, "body"),
        ({"to": "bob", "body": "hi", "idempotency_key": "key-00001", "cc": "x"}, "cc"),
        ({"body": "hi", "idempotency_key": "key-00001"}, "to"),
    ],
)
def test_send_arguments_are_validated(arguments, field):
    with pytest.raises(ValidationError) as error:
        BY_NAME["send_agent_message"].arguments.model_validate(arguments)
    assert error.value.errors()[0]["loc"] == (field,)


def context(raw_token):
    return CallContext(
        principal=authenticate_bearer(raw_token),
        reauthenticate=lambda: authenticate_bearer(raw_token),
    )


def test_claim_then_send_through_the_tools(agent_token, owner, member, token_factory, project):
    _bob_token, _bob = agent_token(member, "bob-codex")
    project.members.add(owner)
    raw = token_factory(owner)
    claimed = BY_NAME["claim_connected_profile"].handler(
        context(raw), BY_NAME["claim_connected_profile"].arguments(handle="alice-claude")
    )
    assert claimed == {"handle": "alice-claude", "kind": "external", "created": True}
    tool = BY_NAME["send_agent_message"]
    args = tool.arguments(to="@bob-codex ghost", body="hi", idempotency_key="alice-0001")
    result = tool.handler(context(raw), args)
    assert result["delivered"] == [{"handle": "bob-codex", "via": "to", "started": False}]
    assert result["skipped"][0]["reason"] == "unknown_handle"
    assert tool.handler(context(raw), args)["replay"] is True


@pytest.mark.django_db(transaction=True)
async def test_the_wait_tool_moves_the_cursor_only_after_the_response(agent_token, owner, member):
    def setup():
        alice_token, _ = agent_token(owner, "alice-claude")
        bob_token, bob = agent_token(member, "bob-codex")
        send = BY_NAME["send_agent_message"]
        send.handler(
            context(alice_token),
            send.arguments(to="bob-codex", body="hello", idempotency_key="alice-0001"),
        )
        connection.close()
        return bob_token, bob

    bob_token, bob = await sync_to_async(setup)()
    tool = BY_NAME["wait_for_messages"]
    ctx = await sync_to_async(context)(bob_token)
    page = await tool.handler(ctx, tool.arguments(timeout_s=0))
    assert [m["body"] for m in page["messages"]] == ["hello"]

    def stored():
        value = AgentProfile.objects.get(pk=bob.pk).last_delivered_sequence
        connection.close()
        return value

    assert await sync_to_async(stored)() == 0  # the response was not written yet
    for fn in ctx._after_response:  # what the protocol does once it was
        await fn()
    assert await sync_to_async(stored)() == 1


@pytest.mark.django_db(transaction=True)
async def test_an_empty_wait_through_the_tool_leaves_nothing_to_confirm(agent_token, member):
    def setup():
        bob_token, bob = agent_token(member, "bob-codex")
        ctx = context(bob_token)
        connection.close()
        return ctx, bob

    ctx, bob = await sync_to_async(setup)()
    tool = BY_NAME["wait_for_messages"]
    page = await tool.handler(ctx, tool.arguments(timeout_s=0))
    assert page == {"messages": [], "next_after_sequence": 0, "has_more": False}
    assert ctx._after_response == []  # the stored cursor has nowhere to move
