"""The comparison server for bench/mcp.py: the official `mcp` package's low-level server, stateless
with JSON responses, publishing exactly our tools (names, descriptions, schemas, annotations).

Its tool calls do the same work as ours: authenticate the bearer token, validate the arguments
with the tool's model, and run the same handler (the same services, in the same database threads),
so the comparison measures the protocol stack around identical work.

    uvicorn --factory bench.mcp_reference_server:create_app
"""

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "osfoundry.settings")


def create_app():
    import django

    django.setup()
    import json
    from functools import partial

    import mcp_types as types
    from mcp.server.lowlevel import Server

    from osfoundry.auth import authenticate_bearer, bearer_from_header
    from osfoundry.dbthreads import run_sync
    from osfoundry.errors import DomainError
    from osfoundry.mcp.protocol import EXTERNAL_MCP_PATH as PATH
    from osfoundry.mcp.tooling import CallContext, collect_tools, describe_tool

    ours = {tool.name: tool for tool in collect_tools()}
    tools = [
        types.Tool.model_validate(
            {k: v for k, v in describe_tool(tool).items() if k != "securitySchemes"}
        )
        for tool in ours.values()
    ]

    def result(data: dict, is_error: bool = False):
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=json.dumps(data))],
            structured_content=data,
            is_error=is_error,
        )

    async def list_tools(ctx, params):
        return types.ListToolsResult(tools=tools)

    async def call_tool(ctx, params):
        tool = ours[params.name]
        headers = ctx.request.headers
        origin = f"{ctx.request.url.scheme}://{headers.get('host')}"
        raw = bearer_from_header(headers.get("authorization"))
        principal = await run_sync(authenticate_bearer, raw, resource=origin + PATH)
        if principal is None:
            return result({"error": {"code": "invalid_token"}}, is_error=True)
        try:
            principal.require(tool.scope)
            args = tool.arguments.model_validate(params.arguments or {})
            again = partial(authenticate_bearer, raw, resource=origin + PATH)
            context = CallContext(principal=principal, reauthenticate=again)
            data = await run_sync(tool.handler, context, args)
        except DomainError as exc:
            return result({"error": exc.as_dict()}, is_error=True)
        return result(data)

    server = Server("reference", on_list_tools=list_tools, on_call_tool=call_tool)
    return server.streamable_http_app(json_response=True, stateless_http=True)
