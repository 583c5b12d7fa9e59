"""Origin on the MCP endpoint: a browser may call only from this service's own origin, compared
by scheme, host and port (DNS rebinding, cross-site pages on another port of the same host)."""

import pytest

from tests.mcpclient import rpc


def refusal(origin: str) -> dict:
    return {
        "jsonrpc": "2.0",
        "id": None,
        "error": {"code": -32600, "message": f"Forbidden: Origin {origin!r} is not allowed"},
    }


@pytest.mark.parametrize(
    "origin",
    [
        "http://127.0.0.1:1",
        "http://127.0.0.1",
        "https://127.0.0.1:{port}",
        "http://localhost:{port}",
    ],
    ids=["another-port", "default-port", "another-scheme", "another-allowed-host"],
)
def test_an_origin_that_is_not_ours_is_forbidden(asgi_server, origin):
    origin = origin.format(port=asgi_server.port)
    response = rpc(asgi_server.mcp_url, "ping", headers={"Origin": origin})
    assert response.status_code == 403
    assert response.json() == refusal(origin)


def test_the_origin_of_the_host_the_request_was_sent_to_is_allowed(asgi_server):
    # What the conformance suite's dns-rebinding scenario sends for a valid request.
    host = f"localhost:{asgi_server.port}"
    response = rpc(asgi_server.mcp_url, "ping", headers={"Host": host, "Origin": f"http://{host}"})
    assert response.status_code == 200
    assert response.json()["result"] == {}


def test_the_public_origin_is_allowed_and_nothing_beside_it(asgi_server, settings):
    settings.PUBLIC_ORIGIN = "https://rooms.example.com"
    ok = rpc(asgi_server.mcp_url, "ping", headers={"Origin": "https://rooms.example.com"})
    assert ok.status_code == 200
    for origin in ("https://rooms.example.com:8443", "http://rooms.example.com"):
        response = rpc(asgi_server.mcp_url, "ping", headers={"Origin": origin})
        assert response.status_code == 403
        assert response.json() == refusal(origin)


def test_a_request_without_origin_is_not_a_browser_and_is_allowed(asgi_server):
    response = rpc(asgi_server.mcp_url, "ping")
    assert response.status_code == 200
