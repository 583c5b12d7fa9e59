"""collect_tools: every app's TOOLS once; an app without a tools module adds none, a tools
module that fails to import stops the start."""

import pytest

from osfoundry.mcp.tooling import collect_tools


def test_an_app_without_a_tools_module_adds_no_tools():
    tools = collect_tools(["rooms.tools", "rooms.no_tools_here"])
    assert [tool.name for tool in tools] == [tool.name for tool in collect_tools(["rooms.tools"])]


def test_a_tools_module_that_fails_to_import_stops_the_start(monkeypatch, tmp_path):
    (tmp_path / "broken_tools.py").write_text("import missing_dependency_of_broken_tools\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(ModuleNotFoundError) as error:
        collect_tools(["broken_tools"])
    assert error.value.name == "missing_dependency_of_broken_tools"


def test_a_tool_defined_twice_stops_the_start():
    with pytest.raises(RuntimeError, match=r"MCP tools defined twice: .*\blist_rooms\b"):
        collect_tools(["rooms.tools", "rooms.tools"])
