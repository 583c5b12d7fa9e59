"""The comparison server for bench/mcp.py: the official `mcp` package's low-level server, stateless
with JSON responses, publishing exactly our tools (names, descriptions, schemas, annotations).

Its tool handlers are stubs returning a result the size of a real one: the comparison measures
the protocol stack, and our server's numbers include real database work on top.

    uvicorn --factory bench.mcp_reference_server:create_app
"""

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "osfoundry.settings")

STUB_RESULT = {
    "proposal_id": "00000000-0000-0000-0000-000000000000",
    "room_id": "00000000-0000-0000-0000-000000000000",
    "name": "Standup timer",
    "kind": "snippet",
    "status": "pending",
    "content_hash": "0" * 64,
    "file_count": 2,
    "total_bytes": 3067,
    "replay": False,
    "next_step": "The proposal is pending.",
}


def create_app():
    import django

    django.setup()
    import json

    import mcp_types as types
    from mcp.server.lowlevel import Server

    from osfoundry.mcp.protocol import collect_tools, describe_tool

    tools = [
        types.Tool.model_validate(
            {k: v for k, v in describe_tool(tool).items() if k != "securitySchemes"}
        )
        for tool in collect_tools()
    ]

    async def list_tools(ctx, params):
        return types.ListToolsResult(tools=tools)

    async def call_tool(ctx, params):
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=json.dumps(STUB_RESULT))],
            structured_content=STUB_RESULT,
        )

    server = Server("reference", on_list_tools=list_tools, on_call_tool=call_tool)
    return server.streamable_http_app(json_response=True, stateless_http=True)
