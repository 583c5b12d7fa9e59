"""The seeds' eight propose_room_snippet_app calls (SPEC §3), through MCP: the schema catches
half, the server rules the other half, and every refusal names what to fix and stores nothing."""

import json

import pytest

from rooms.models import Proposal
from tests.mcpclient import call_tool
from tests.rooms.helpers import APP

LONG_NAME = "n" * 201


def arguments(room, files, changes=None):
    base = {
        "room_id": str(room.pk),
        "name": "Standup timer",
        "files": files,
        "idempotency_key": "key-00001",
    }
    return {**base, **(changes or {})}


@pytest.mark.parametrize(
    "change, expected",
    [
        ({"files": {"src/main.tsx": "x"}}, "src/App.tsx missing"),
        ({"files": {"src/App.tsx": APP, "/etc/hosts": "x"}}, "unsafe path '/etc/hosts'"),
        ({"files": {"src/App.tsx": APP, "src/../../x.ts": "x"}}, "unsafe path 'src/../../x.ts'"),
        ({"files": {"src/App.tsx": APP, "src\\x.ts": "x"}}, "unsafe path 'src\\\\x.ts'"),
        ({"name": LONG_NAME}, "name: is too long: 201 characters, at most 200 allowed"),
        ({"idempotency_key": "k" * 7}, "idempotency_key: is too short: 7 characters, at least 8"),
        ({"visibility": "public"}, "visibility: unknown field; remove it"),
        ({"files": {"a": 1}}, "files.a: must be a string, got int 1"),
    ],
)
def test_bad_call_is_refused_with_its_fix(
    asgi_server, room, agent, token_factory, files, change, expected
):
    result = call_tool(
        asgi_server.mcp_url,
        token_factory(agent),
        "propose_room_snippet_app",
        arguments(room, files, change),
    )
    assert result.is_error
    assert expected in result.structured_content["error"]["message"]
    assert json.loads(result.content[0].text) == result.structured_content
    assert not Proposal.objects.exists()


def test_good_call_passes(asgi_server, room, agent, token_factory, files):
    result = call_tool(
        asgi_server.mcp_url,
        token_factory(agent),
        "propose_room_snippet_app",
        arguments(room, files),
    )
    assert not result.is_error
    assert Proposal.objects.count() == 1
