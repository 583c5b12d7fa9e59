"""A request body must be sent as application/json, on REST and MCP. text/plain, form encoding
and multipart are what a cross-site HTML form can post without a CORS preflight: refused with
415 before anything is read or stored. Bodyless requests (GET) are unaffected."""

import json

import httpx
import pytest

from rooms.models import Proposal

NOT_JSON = ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data", None]
JSON = ["application/json", "application/json; charset=utf-8", "Application/JSON"]


def rest_415(sent: str | None) -> dict:
    got = repr(sent) if sent else "none"
    return {
        "error": {
            "code": "unsupported_media_type",
            "message": f"The body must be JSON: send Content-Type: application/json (got {got})",
            "field": "Content-Type",
        }
    }


def propose(client, room, token, content_type, key="ctype-0001"):
    body = {"name": "Timer", "files": {"src/App.tsx": "export default () => null;"}}
    return client.generic(
        "POST",
        f"/api/v1/rooms/{room.pk}/proposals/snippet",
        json.dumps({**body, "idempotency_key": key}).encode(),
        content_type=content_type or "",
        HTTP_AUTHORIZATION=f"Bearer {token}",
    )


@pytest.mark.parametrize("content_type", NOT_JSON)
def test_rest_refuses_a_body_that_is_not_sent_as_json(
    client, room, agent, token_factory, content_type
):
    response = propose(client, room, token_factory(agent), content_type)
    assert response.status_code == 415
    sent = content_type.split(";")[0] if content_type else None
    assert response.json() == rest_415(sent)
    assert Proposal.objects.count() == 0


def test_rest_refuses_before_asking_for_a_token(client, room):
    response = propose(client, room, "osf_not-a-token", "text/plain")
    assert response.status_code == 415


@pytest.mark.parametrize("content_type", JSON)
def test_rest_takes_json_with_or_without_parameters(
    client, room, agent, token_factory, content_type
):
    response = propose(client, room, token_factory(agent), content_type)
    assert response.status_code == 201
    assert response.json()["status"] == "pending"


def test_rest_get_without_a_body_needs_no_content_type(client, room, agent, token_factory):
    response = client.get(
        "/api/v1/rooms",
        CONTENT_TYPE="text/plain",
        HTTP_AUTHORIZATION=f"Bearer {token_factory(agent)}",
    )
    assert response.status_code == 200
    assert [r["room_id"] for r in response.json()["rooms"]] == [str(room.pk)]


def mcp_post(server, content_type):
    headers = {"Content-Type": content_type} if content_type else {}
    body = json.dumps({"jsonrpc": "2.0", "id": 7, "method": "ping"}).encode()
    return httpx.post(server.mcp_url, content=body, headers=headers)


@pytest.mark.parametrize("content_type", NOT_JSON)
def test_mcp_refuses_a_body_that_is_not_sent_as_json(asgi_server, content_type):
    response = mcp_post(asgi_server, content_type)
    assert response.status_code == 415
    sent = content_type.split(";")[0] if content_type else None
    got = repr(sent) if sent else "none"
    assert response.json() == {
        "jsonrpc": "2.0",
        "id": None,
        "error": {
            "code": -32600,
            "message": f"Unsupported Media Type: send Content-Type: application/json (got {got})",
        },
    }


@pytest.mark.parametrize("content_type", JSON)
def test_mcp_takes_json_with_or_without_parameters(asgi_server, content_type):
    response = mcp_post(asgi_server, content_type)
    assert response.status_code == 200
    assert response.json() == {"jsonrpc": "2.0", "id": 7, "result": {}}
