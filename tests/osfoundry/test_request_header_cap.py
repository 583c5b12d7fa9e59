"""Request headers are capped at 64 KB in all (osfoundry/asgi.py, before any route): past it a
request is answered 431 and never reaches the MCP endpoint, the long-poll or Django. uvicorn's
default HTTP parser (httptools) has no limit of its own."""

import httpx
import pytest
from channels.testing import WebsocketCommunicator

from osfoundry.asgi import application
from osfoundry.http import MAX_HEADER_BYTES

PING = {"jsonrpc": "2.0", "id": 1, "method": "ping"}


def refusal(size: int) -> dict:
    return {
        "error": {
            "code": "headers_too_large",
            "message": f"Request headers are {size} bytes, over the limit of 65536: send "
            "smaller headers (cookies, Authorization)",
        }
    }


def header_size(headers: httpx.Headers) -> int:
    return sum(len(name) + len(value) for name, value in headers.raw)


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("POST", "/api/v1/external-mcp"),
        ("GET", "/api/v1/agents/messages/wait"),
        ("GET", "/accounts/login/"),
        ("GET", "/api/v1/rooms"),
    ],
)
def test_headers_over_the_cap_are_refused_with_431(asgi_server, method, path):
    request = httpx.Request(
        method, asgi_server.url + path, json=PING, headers={"X-Filler": "a" * MAX_HEADER_BYTES}
    )
    response = httpx.Client().send(request)
    assert response.status_code == 431
    assert response.headers["connection"] == "close"
    assert response.json() == refusal(header_size(request.headers))


def test_an_8_mb_header_is_refused(asgi_server):
    request = httpx.Request(
        "POST", asgi_server.mcp_url, json=PING, headers={"Cookie": "x=" + "a" * 8_000_000}
    )
    response = httpx.Client(timeout=30).send(request)
    assert response.status_code == 431
    assert response.json() == refusal(header_size(request.headers))


def test_headers_just_under_the_cap_pass(asgi_server):
    filler = MAX_HEADER_BYTES - 2_000  # room for the request's other headers
    response = httpx.post(asgi_server.mcp_url, json=PING, headers={"X-Filler": "a" * filler})
    assert response.status_code == 200
    assert response.json() == {"jsonrpc": "2.0", "id": 1, "result": {}}


@pytest.mark.django_db(transaction=True)
async def test_a_websocket_with_headers_over_the_cap_is_refused(room):
    headers = [(b"authorization", b"Bearer osf_x"), (b"x-filler", b"a" * MAX_HEADER_BYTES)]
    communicator = WebsocketCommunicator(application, f"/ws/rooms/{room.pk}/events/", headers)
    assert await communicator.connect() == (False, 4431)
