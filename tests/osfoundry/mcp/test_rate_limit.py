"""Each token has RATE_LIMIT calls per window; past it, 429 with Retry-After."""

import asyncio
import uuid

from osfoundry import ratelimit
from tests.mcpclient import rpc
from tests.servers import require


def list_rooms(server, token):
    return rpc(server.mcp_url, "tools/call", {"name": "list_rooms", "arguments": {}}, token=token)


def test_calls_past_the_limit_get_429_with_retry_after(
    asgi_server, room, agent, token_factory, settings
):
    settings.RATE_LIMIT = 3
    settings.RATE_WINDOW = 3600  # fixed on the clock: rarely turns during the test
    ratelimit.local.clear()
    token, other = token_factory(agent), token_factory(agent)
    remaining = []
    for _ in range(3):
        response = list_rooms(asgi_server, token)
        assert response.status_code == 200
        assert response.headers["x-ratelimit-limit"] == "3"
        remaining.append(response.headers["x-ratelimit-remaining"])
    assert remaining == ["2", "1", "0"]
    refused = list_rooms(asgi_server, token)
    assert refused.status_code == 429
    assert 1 <= int(refused.headers["retry-after"]) <= settings.RATE_WINDOW
    assert "result" not in refused.json()
    # The budget is per token.
    assert list_rooms(asgi_server, other).status_code == 200


def test_default_limit_is_announced(asgi_server):
    ratelimit.local.clear()
    response = rpc(asgi_server.mcp_url, "tools/list")
    assert response.headers["x-ratelimit-limit"] == "2000"
    assert response.headers["x-ratelimit-remaining"] == "1999"


def test_redis_counts_are_shared_between_event_loops(settings):
    # Two worker processes are two event loops with their own Redis connections.
    require("127.0.0.1", 6379, "Redis")
    settings.REDIS_URL = "redis://127.0.0.1:6379/1"
    settings.REDIS_PREFIX = f"test-{uuid.uuid4().hex}"
    settings.RATE_LIMIT = 2
    settings.RATE_WINDOW = 3600
    first = asyncio.run(ratelimit.take("pat:1"))
    second = asyncio.run(ratelimit.take("pat:1"))
    third = asyncio.run(ratelimit.take("pat:1"))
    assert (first.remaining, second.remaining) == (1, 0)
    assert third.exceeded and not second.exceeded
