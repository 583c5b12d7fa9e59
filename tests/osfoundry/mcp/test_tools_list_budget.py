"""tools/list is model context: all 15 tools together, agent, revision and repository tools
included, stay within 8,800 B (SPEC §6)."""

import json

import pytest

from osfoundry import asgi
from osfoundry.mcp.protocol import EXTERNAL_MCP_PATH
from osfoundry.mcp.tooling import collect_tools
from rooms.tools import TOOLS as ROOM_TOOLS
from rooms.tools import snippet_description
from tests.mcpclient import modern_rpc, rpc

# The four agent-network tools (agents/tools.py) get what the Room tools leave.
ROOM_TOOLS_BUDGET = 6_350
SNIPPET_SCHEMA = {
    "type": "object",
    "properties": {
        "room_id": {"type": "string"},
        "name": {"type": "string", "maxLength": 200},
        "files": {"type": "object", "additionalProperties": {"type": "string"}},
        "idempotency_key": {"type": "string", "minLength": 8, "maxLength": 128},
    },
    "required": ["room_id", "name", "files", "idempotency_key"],
    "additionalProperties": False,
}


def test_whole_tools_list_is_within_8800_bytes(asgi_server):
    response = rpc(asgi_server.mcp_url, "tools/list")
    names = [tool["name"] for tool in response.json()["result"]["tools"]]
    assert names == [tool.name for tool in collect_tools()]
    assert len(names) == 15
    assert len(response.content) <= 8_800


def test_the_2026_07_28_tools_list_is_within_8800_bytes_too(asgi_server):
    response = modern_rpc(asgi_server.mcp_url, "tools/list")
    assert response.json()["result"]["ttlMs"] > 0
    assert len(response.content) <= 8_800


def test_room_tools_leave_room_for_the_agent_tools():
    tools = [
        tool
        for tool in asgi.mcp_apps[EXTERNAL_MCP_PATH].descriptions
        if tool["name"] in {t.name for t in ROOM_TOOLS}
    ]
    size = len(json.dumps(tools, ensure_ascii=False, separators=(",", ":")).encode())
    assert size <= ROOM_TOOLS_BUDGET


def test_with_an_npm_registry_the_snippet_tool_names_package_json_within_the_budgets(asgi_server):
    # A deployment with NPM_REGISTRY_URL publishes three more words (rooms/tools.py): both
    # revisions' tools/list and the Room tools stay within their budgets then too.
    without = snippet_description(has_registry=False)
    with_registry = snippet_description(has_registry=True)
    assert with_registry == without.replace(
        "zustand; Tailwind", "zustand, package.json dependencies; Tailwind"
    )
    grown = len(json.dumps(with_registry)) - len(json.dumps(without))
    for send in (rpc, modern_rpc):
        assert len(send(asgi_server.mcp_url, "tools/list").content) + grown <= 8_800
    tools = [
        tool
        for tool in asgi.mcp_apps[EXTERNAL_MCP_PATH].descriptions
        if tool["name"] in {t.name for t in ROOM_TOOLS}
    ]
    size = len(json.dumps(tools, ensure_ascii=False, separators=(",", ":")).encode())
    assert size + grown <= ROOM_TOOLS_BUDGET


def test_snippet_tool_publishes_the_contract_exactly():
    tool = next(
        t
        for t in asgi.mcp_apps[EXTERNAL_MCP_PATH].descriptions
        if t["name"] == "propose_room_snippet_app"
    )
    assert tool["inputSchema"] == SNIPPET_SCHEMA
    # SPEC §3's text exactly, then the one sentence that spares agents a failed proposal: what
    # an app may import, the curated set included (issue 33.5), and how it asks for Tailwind;
    # then how a client that declared the Tasks extension waits (others read next_step).
    assert tool["description"] == (
        "Prepare a Room snippet with source files. It appears in the cloud Room launcher only "
        "after its owner reviews and approves the full code in osFoundry. The Room runs "
        "src/App.tsx's default export; imports: relative paths, react, react-dom, chart.js, "
        "clsx, d3, date-fns, framer-motion, lodash, lucide-react, mathjs, papaparse, "
        "react-chartjs-2, recharts, three, uuid, zustand; Tailwind: "
        '@import "tailwindcss" in CSS. A Tasks client\'s task ends at the decision.'
    )
    assert tool["annotations"] == {
        "readOnlyHint": False,
        "destructiveHint": True,
        "openWorldHint": False,
    }
    assert tool["securitySchemes"] == [{"type": "oauth2", "scopes": ["osfoundry:write"]}]


@pytest.mark.parametrize("tool", ROOM_TOOLS, ids=lambda tool: tool.name)
def test_published_schema_matches_the_validating_model(tool):
    schema = tool.input_schema
    model_fields = tool.arguments.model_fields
    assert set(schema["properties"]) == set(model_fields)
    required = {name for name, field in model_fields.items() if field.is_required()}
    assert set(schema.get("required", [])) == required
    assert schema["additionalProperties"] is False
    assert tool.scope in ("osfoundry:read", "osfoundry:write")
    assert tool.annotations["readOnlyHint"] is (tool.scope == "osfoundry:read")
