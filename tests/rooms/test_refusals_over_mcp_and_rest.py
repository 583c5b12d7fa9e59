"""The character refusals through the real interfaces: the official MCP client against a live
server, and the REST API. Both answer the same error, field and code, and store nothing."""

import json

import httpx
import pytest

from rooms.models import Proposal, RoomEvent
from tests.mcpclient import call_tool
from tests.rooms.corpus import case_files

STRETCHED = (
    "src/App.tsx:3:27: bidirectional control U+202E (RIGHT-TO-LEFT OVERRIDE) can make code read "
    "differently than it runs; write it as an escape (\\u202E) inside a string if you need it; "
    "src/App.tsx:3:29: bidirectional control U+2066 (LEFT-TO-RIGHT ISOLATE) can make code read "
    "differently than it runs; write it as an escape (\\u2066) inside a string if you need it; "
    "src/App.tsx:3:47: bidirectional control U+2069 (POP DIRECTIONAL ISOLATE) can make code read "
    "differently than it runs; write it as an escape (\\u2069) inside a string if you need it; "
    "src/App.tsx:3:49: bidirectional control U+2066 (LEFT-TO-RIGHT ISOLATE) can make code read "
    "differently than it runs; write it as an escape (\\u2066) inside a string if you need it"
)
SURROGATES = (
    "src/App.tsx:1:17: lone surrogate U+DC80 is not a character: no UTF-8 text can hold it; "
    "write it as an escape (\\uDC80) inside a string if you need it; "
    "unsafe path 'src/\\ud800.ts': column 5: lone surrogate U+D800 in a path; name the file "
    "with visible characters only"
)


def rest_propose(client, room, token, body):
    return client.post(
        f"/api/v1/rooms/{room.pk}/proposals/snippet",
        json.dumps(body),  # ensure_ascii: a lone surrogate travels as \ud800, as agents send it
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {token}",
    )


def body(case, **extra):
    return {"name": "Timer", "files": case_files(case), "idempotency_key": "key-00001", **extra}


def assert_nothing_stored():
    assert not Proposal.objects.exists()
    assert not RoomEvent.objects.exists()


@pytest.mark.parametrize(
    ("case", "message", "field"),
    [
        ("trojan-stretched-string", STRETCHED, "files.src/App.tsx"),
        ("surrogates", SURROGATES, "files.src/App.tsx"),
    ],
)
def test_rest_refuses_hidden_tricks_with_the_exact_error(
    client, room, agent, token_factory, case, message, field
):
    response = rest_propose(client, room, token_factory(agent), body(case))
    assert response.status_code == 400
    assert response.json() == {
        "error": {"code": "invalid_files", "message": message, "field": field}
    }
    assert_nothing_stored()


def test_mcp_refuses_trojan_source_with_the_exact_error(asgi_server, room, agent, token_factory):
    arguments = {"room_id": str(room.pk), **body("trojan-stretched-string")}
    result = call_tool(
        asgi_server.mcp_url, token_factory(agent), "propose_room_snippet_app", arguments
    )
    assert result.is_error
    assert result.structured_content == {
        "error": {"code": "invalid_files", "message": STRETCHED, "field": "files.src/App.tsx"}
    }
    assert json.loads(result.content[0].text) == result.structured_content
    assert_nothing_stored()


@pytest.mark.parametrize("path", ["/api/v1/mcp", "/api/v1/external-mcp"])
def test_mcp_refuses_lone_surrogates_before_any_tool_runs_naming_the_file_line_and_column(
    asgi_server, room, agent, token_factory, path
):
    # The official client's encoder refuses lone surrogates, but JSON can carry them (\ud800)
    # and other clients send them: this one writes its JSON by hand.
    message = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {
            "name": "propose_room_snippet_app",
            "arguments": {"room_id": str(room.pk), **body("surrogates")},
        },
    }
    response = httpx.post(
        asgi_server.url + path,
        content=json.dumps(message).encode("ascii"),
        headers={
            "Content-Type": "application/json",
            "Authorization": f"Bearer {token_factory(agent)}",
        },
        timeout=30,
    )
    # The endpoint refuses it before any tool runs (osfoundry/http.parse_json): a JSON-RPC
    # parse error naming where the first one is, in the words REST uses for that file.
    assert response.status_code == 400
    in_the_file = SURROGATES.split("; unsafe path")[0]
    assert response.json()["error"] == {
        "code": -32700,
        "message": f"Parse error: params.arguments.files: {in_the_file}",
    }
    assert_nothing_stored()


def test_mcp_refuses_a_nul_in_the_key_and_a_right_to_left_override_in_the_name(
    asgi_server, room, agent, token_factory, files
):
    arguments = {
        "room_id": str(room.pk),
        "name": "Invoice \u202egnp.tsx",
        "files": files,
        "idempotency_key": "key-\x00-00001",
    }
    result = call_tool(
        asgi_server.mcp_url, token_factory(agent), "propose_room_snippet_app", arguments
    )
    assert result.is_error
    assert result.structured_content["error"] == {
        "code": "invalid_idempotency_key",
        "message": (
            "idempotency_key: column 5: control character U+0000 (NULL) has no place in a "
            "one-line value; remove it from the key; name: column 9: bidirectional control "
            "U+202E (RIGHT-TO-LEFT OVERRIDE) can make the text around it read differently than "
            "it is; remove it from the name"
        ),
        "field": "idempotency_key",
    }
    assert_nothing_stored()


def test_rest_refuses_a_control_character_in_the_name_of_a_repo_proposal(
    client, room, agent, token_factory
):
    response = client.post(
        f"/api/v1/rooms/{room.pk}/proposals/repo",
        json.dumps(
            {
                "name": "Repo\x1b[31m",
                "repository_id": "00000000-0000-0000-0000-000000000000",
                "version_id": "00000000-0000-0000-0000-000000000000",
                "idempotency_key": "key-00001",
            }
        ),
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {token_factory(agent)}",
    )
    assert response.status_code == 400
    assert response.json()["error"] == {
        "code": "invalid_name",
        "message": (
            "name: column 5: control character U+001B (ESCAPE) has no place in a one-line value; "
            "remove it from the name"
        ),
        "field": "name",
    }
    assert_nothing_stored()


def test_accepted_hidden_characters_are_stored_exactly_over_rest(
    client, room, agent, token_factory
):
    response = rest_propose(client, room, token_factory(agent), body("zero-width"))
    assert response.status_code == 201, response.content
    assert Proposal.objects.get().files == case_files("zero-width")
