"""The official `mcp` Python client against the live endpoint, in both of its connect modes.

In "auto" mode it first probes the 2026-07-28 revision with `server/discover`, which the
endpoint answers: the client stays on 2026-07-28 (no initialize, no session). In "legacy" mode it
runs the initialize handshake of 2025-11-25.
"""

import asyncio

import pytest

from tests.mcpclient import connect


@pytest.mark.parametrize("path", ["/api/v1/external-mcp", "/api/v1/mcp"])
@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_client_connects_lists_tools_and_calls_one(
    asgi_server, room, agent, token_factory, mode, path
):
    token = token_factory(agent)

    async def run():
        async with connect(asgi_server.url + path, token, mode=mode) as client:
            tools = await client.list_tools()
            rooms = await client.call_tool("list_rooms", {})
            return client.protocol_version, client.instructions, tools, rooms

    version, instructions, tools, rooms = asyncio.run(run())
    assert version == {"auto": "2026-07-28", "legacy": "2025-11-25"}[mode]
    assert "Local-only data is unavailable to cloud clients." in instructions
    assert "propose_room_snippet_app" in [tool.name for tool in tools.tools]
    assert not rooms.is_error
    assert rooms.structured_content["rooms"][0]["room_id"] == str(room.pk)


def test_results_carry_structured_content_and_the_same_json_as_text(
    asgi_server, room, agent, token_factory
):
    import json

    token = token_factory(agent)

    async def run():
        async with connect(asgi_server.mcp_url, token) as client:
            return await client.call_tool("read_room", {"room_id": str(room.pk)})

    result = asyncio.run(run())
    assert json.loads(result.content[0].text) == result.structured_content
    assert result.structured_content["name"] == "Team Falcon"
