"""One budget per token for every interface: REST calls, the REST long-poll and MCP calls draw
from the same RATE_LIMIT calls per RATE_WINDOW, with the same headers and the same 429."""

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from osfoundry import ratelimit
from tests.mcpclient import rpc
from tests.servers import require

WAIT_PATH = "/api/v1/agents/messages/wait"


@pytest.fixture
def limit(settings):
    def set_limit(calls: int) -> None:
        settings.RATE_LIMIT = calls
        # Windows are fixed on the clock: an hour's makes a test that straddles a turn rare.
        settings.RATE_WINDOW = 3600
        ratelimit.local.clear()

    return set_limit


def rest(server, path, token=None, **kwargs):
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    method = kwargs.pop("method", "GET")
    return httpx.request(method, server.url + path, headers=headers, timeout=30, **kwargs)


def mcp_list_rooms(server, token):
    return rpc(server.mcp_url, "tools/call", {"name": "list_rooms", "arguments": {}}, token=token)


def assert_refused(response, limit: int, window: int) -> None:
    assert response.status_code == 429
    assert response.headers["x-ratelimit-limit"] == str(limit)
    assert response.headers["x-ratelimit-remaining"] == "0"
    retry_after = int(response.headers["retry-after"])
    assert 1 <= retry_after <= window
    assert response.headers["x-ratelimit-reset"] == str(retry_after)


def test_two_mcp_calls_and_one_rest_call_use_up_a_limit_of_three(
    asgi_server, room, agent, token_factory, limit, settings
):
    limit(3)
    token = token_factory(agent)
    remaining = [mcp_list_rooms(asgi_server, token), mcp_list_rooms(asgi_server, token)]
    remaining.append(rest(asgi_server, "/api/v1/rooms", token))
    assert [r.status_code for r in remaining] == [200, 200, 200]
    assert [r.headers["x-ratelimit-remaining"] for r in remaining] == ["2", "1", "0"]
    assert {r.headers["x-ratelimit-limit"] for r in remaining} == {"3"}

    refused = rest(asgi_server, "/api/v1/rooms", token)
    assert_refused(refused, 3, settings.RATE_WINDOW)
    error = refused.json()["error"]
    assert error["code"] == "rate_limited"
    assert error["message"] == (
        f"Rate limit of 3 calls per {settings.RATE_WINDOW} s reached; "
        f"retry after {refused.headers['retry-after']} s"
    )
    assert "rooms" not in refused.json()

    refused_mcp = mcp_list_rooms(asgi_server, token)
    assert_refused(refused_mcp, 3, settings.RATE_WINDOW)
    assert "result" not in refused_mcp.json()
    # The budget is per token: another token of the same user still has all of its own.
    other = rest(asgi_server, "/api/v1/rooms", token_factory(agent))
    assert other.status_code == 200
    assert other.headers["x-ratelimit-remaining"] == "2"


def test_rest_calls_first_then_mcp_calls_share_the_budget(
    asgi_server, room, agent, token_factory, limit, settings
):
    limit(2)
    token = token_factory(agent)
    assert rest(asgi_server, f"/api/v1/rooms/{room.pk}", token).status_code == 200
    assert rest(asgi_server, f"/api/v1/rooms/{room.pk}/apps", token).status_code == 200
    refused = mcp_list_rooms(asgi_server, token)
    assert_refused(refused, 2, settings.RATE_WINDOW)
    assert refused.json()["error"]["message"].startswith("Rate limit of 2 calls per")


def test_every_rest_response_carries_the_rate_limit_headers(
    asgi_server, room, agent, token_factory, limit
):
    limit(100)
    token = token_factory(agent)
    responses = {
        "ok": rest(asgi_server, "/api/v1/rooms", token),
        "not found": rest(asgi_server, "/api/v1/rooms/00000000-0000-0000-0000-000000000000", token),
        "bad input": rest(
            asgi_server, f"/api/v1/rooms/{room.pk}/proposals/snippet", token, method="POST", json={}
        ),
        "no token": rest(asgi_server, "/api/v1/rooms"),
        "schema": rest(asgi_server, "/api/v1/openapi.json"),
    }
    assert [r.status_code for r in responses.values()] == [200, 404, 400, 401, 200]
    assert responses["not found"].json()["error"]["code"] == "not_found"
    assert responses["no token"].headers["www-authenticate"].startswith("Bearer ")
    for what, response in responses.items():
        assert response.headers["x-ratelimit-limit"] == "100", what
        assert 0 < int(response.headers["x-ratelimit-reset"]) <= 3600, what
        assert "retry-after" not in response.headers, what
    # The first three used the token's budget; the last two the client address's.
    token_counts = [responses[k].headers["x-ratelimit-remaining"] for k in ("ok", "not found")]
    assert token_counts == ["99", "98"]
    assert responses["bad input"].headers["x-ratelimit-remaining"] == "97"
    anonymous = [responses[k].headers["x-ratelimit-remaining"] for k in ("no token", "schema")]
    assert anonymous == ["99", "98"]


def test_anonymous_rest_calls_are_counted_per_client_address(
    asgi_server, room, agent, token_factory, limit, settings
):
    limit(2)
    assert rest(asgi_server, "/api/v1/rooms").status_code == 401
    assert rest(asgi_server, "/api/v1/rooms", "osf_not-a-real-token").status_code == 401
    refused = rest(asgi_server, "/api/v1/rooms")
    assert_refused(refused, 2, settings.RATE_WINDOW)
    assert refused.json()["error"]["code"] == "rate_limited"
    # An unauthenticated MCP call from that address is refused too: the same budget.
    assert_refused(mcp_list_rooms(asgi_server, None), 2, settings.RATE_WINDOW)
    # A caller with a valid token has a budget of its own.
    assert rest(asgi_server, "/api/v1/rooms", token_factory(agent)).status_code == 200


def test_the_rest_long_poll_draws_from_the_same_budget(
    asgi_server, room, agent, token_factory, limit, settings
):
    limit(3)
    token = token_factory(agent)
    claimed = rest(
        asgi_server, "/api/v1/agents/profile", token, method="POST", json={"handle": "limiter"}
    )
    assert claimed.status_code == 201
    assert mcp_list_rooms(asgi_server, token).status_code == 200
    waited = rest(asgi_server, WAIT_PATH, token, params={"timeout_s": 0})
    assert waited.status_code == 200
    assert waited.json()["messages"] == []
    assert waited.headers["x-ratelimit-limit"] == "3"
    assert waited.headers["x-ratelimit-remaining"] == "0"

    refused = rest(asgi_server, WAIT_PATH, token, params={"timeout_s": 0})
    assert_refused(refused, 3, settings.RATE_WINDOW)
    assert refused.json()["error"]["code"] == "rate_limited"
    assert "messages" not in refused.json()
    # Without a valid token the long-poll is counted per client address, like the rest.
    anonymous = rest(asgi_server, WAIT_PATH, "osf_not-a-real-token", params={"timeout_s": 0})
    assert anonymous.status_code == 401
    assert anonymous.headers["x-ratelimit-remaining"] == "2"


def test_redis_counts_rest_and_mcp_calls_in_one_budget(settings):
    # REST calls count in Django's request threads, MCP calls on an event loop, in any worker.
    require("127.0.0.1", 6379, "Redis")
    settings.REDIS_URL = "redis://127.0.0.1:6379/1"
    settings.RATE_LIMIT = 3
    settings.RATE_WINDOW = 3600
    assert ratelimit.take_sync("pat:1").remaining == 2
    assert asyncio.run(ratelimit.take("pat:1")).remaining == 1
    assert ratelimit.take_sync("pat:1").remaining == 0
    assert ratelimit.local.incr("pat:1", 0) == 1  # nothing was counted in the process
    refused = asyncio.run(ratelimit.take("pat:1"))
    assert refused.exceeded and refused.remaining == 0


def test_the_old_mcp_names_still_set_the_budget_for_one_release():
    env = {k: v for k, v in os.environ.items() if k not in ("RATE_LIMIT", "RATE_WINDOW")}
    env |= {"MCP_RATE_LIMIT": "7", "MCP_RATE_WINDOW": "30"}
    code = "import osfoundry.settings as s; print(s.RATE_LIMIT, s.RATE_WINDOW)"
    done = subprocess.run(
        [sys.executable, "-W", "always", "-c", code],
        env=env,
        cwd=Path(__file__).resolve().parents[2],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["7", "30"]
    assert "MCP_RATE_LIMIT is renamed RATE_LIMIT" in done.stderr
    assert "MCP_RATE_WINDOW is renamed RATE_WINDOW" in done.stderr
