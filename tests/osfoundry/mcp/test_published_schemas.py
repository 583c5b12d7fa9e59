"""Every MCP tool's published inputSchema and the model that validates its calls accept and
refuse the same arguments: a model reading tools/list never learns a rule the server does not
apply, nor meets a refusal the schema did not announce.

Two differences are intended, and checked to be the only ones: the schema never offers null
(leave an optional argument out instead; the model takes None as "left out"), and a `pattern` is
published for a model's guidance while the service checks it, with an error that says how to
fix the value (claim_connected_profile's handle)."""

import pytest
from jsonschema import Draft202012Validator
from pydantic import ValidationError

from osfoundry.mcp.tooling import collect_tools

TOOLS = collect_tools()


def valid_value(prop: dict):
    if "enum" in prop:
        return prop["enum"][0]
    kind = prop["type"]
    if kind == "string":
        length = min(max(prop.get("minLength", 0), 8), prop.get("maxLength", 8))
        return "a" * length
    if kind == "integer":
        return prop.get("minimum", 0)
    if kind == "object":
        return {"src/App.tsx": "export default () => null;"}
    raise AssertionError(f"no sample for {prop}")


def invalid_values(prop: dict):
    """(label, value) pairs the schema refuses for this property."""
    kind = prop["type"]
    yield "wrong type", {"string": 7, "integer": "7", "object": ["x"]}[kind]
    if kind == "integer":
        yield "a boolean", True
        yield "a float", 1.5
    if "minLength" in prop:
        yield "too short", "a" * (prop["minLength"] - 1)
    if "maxLength" in prop:
        yield "too long", "a" * (prop["maxLength"] + 1)
    if "minimum" in prop:
        yield "below the minimum", prop["minimum"] - 1
    if "maximum" in prop:
        yield "above the maximum", prop["maximum"] + 1
    if "enum" in prop:
        yield "not in the enum", "other"
    if isinstance(prop.get("additionalProperties"), dict):
        yield "a value of the wrong type", {"src/App.tsx": 1}


def cases(schema: dict):
    properties = schema["properties"]
    required = schema.get("required", [])
    minimal = {name: valid_value(properties[name]) for name in required}
    full = {name: valid_value(prop) for name, prop in properties.items()}
    yield "only the required arguments", minimal
    yield "every argument", full
    yield "an invented argument", {**minimal, "visibility": "public"}
    for name in required:
        yield f"{name} missing", {k: v for k, v in minimal.items() if k != name}
    for name, prop in properties.items():
        for label, value in invalid_values(prop):
            yield f"{name}: {label}", {**full, name: value}


def model_accepts(tool, arguments: dict) -> bool:
    try:
        tool.parse_arguments(arguments)
    except ValidationError:
        return False
    return True


@pytest.mark.parametrize("tool", TOOLS, ids=lambda tool: tool.name)
def test_the_schema_and_the_model_agree(tool):
    schema = tool.input_schema
    validator = Draft202012Validator(schema)
    disagreements = [
        (label, validator.is_valid(arguments), model_accepts(tool, arguments))
        for label, arguments in cases(schema)
        if validator.is_valid(arguments) != model_accepts(tool, arguments)
    ]
    assert disagreements == []


@pytest.mark.parametrize("tool", TOOLS, ids=lambda tool: tool.name)
def test_only_the_intended_differences_remain(tool):
    schema = tool.input_schema
    validator = Draft202012Validator(schema)
    optional = [name for name in schema["properties"] if name not in schema.get("required", [])]
    minimal = {name: valid_value(schema["properties"][name]) for name in schema.get("required", [])}
    for name in optional:
        # null: refused by the schema; the model takes it as the argument left out, or refuses.
        arguments = {**minimal, name: None}
        assert not validator.is_valid(arguments)
        if model_accepts(tool, arguments):
            assert tool.arguments.model_fields[name].default is None
    for name, prop in schema["properties"].items():
        if "pattern" in prop:
            arguments = {**minimal, name: "Not A Handle!"}
            assert not validator.is_valid(arguments)
            assert model_accepts(tool, arguments)  # the service refuses it, saying how to fix it


def test_the_handle_pattern_is_the_services_rule():
    from agents.services import HANDLE_PATTERN

    claim = next(tool for tool in TOOLS if tool.name == "claim_connected_profile")
    assert claim.input_schema["properties"]["handle"]["pattern"] == HANDLE_PATTERN
