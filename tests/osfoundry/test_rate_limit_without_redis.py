"""While Redis is unreachable the rate limit neither refuses every call nor lets calls through
uncounted: each process counts in its own memory (osfoundry/ratelimit.py, docs/agents.md)."""

import pytest

from osfoundry import ratelimit
from tests.servers import free_port


@pytest.fixture
def redis_down(settings):
    settings.REDIS_URL = f"redis://127.0.0.1:{free_port()}/0"  # nothing listens there
    settings.RATE_LIMIT = 2
    ratelimit._sync_clients.clear()
    yield
    ratelimit._sync_clients.clear()


def test_django_requests_are_counted_in_process_while_redis_is_down(redis_down):
    quotas = [ratelimit.take_sync("token:down-1") for _ in range(3)]
    assert [q.exceeded for q in quotas] == [False, False, True]
    assert [q.remaining for q in quotas] == [1, 0, 0]


async def test_async_routes_are_counted_in_process_while_redis_is_down(redis_down):
    quotas = [await ratelimit.take("token:down-2") for _ in range(3)]
    assert [q.exceeded for q in quotas] == [False, False, True]


def test_the_in_process_count_forgets_past_windows_but_not_the_current_one():
    # Memory stays bounded however many addresses call during an outage.
    counter = ratelimit.LocalCounter()
    for n in range(50_000):
        counter.incr(f"ip:10.0.{n}", window_index=1)
    assert counter.incr("ip:10.0.7", window_index=1) == 2
    # The 50,001st caller, in the next window: the callers of past windows are forgotten.
    assert counter.incr("token:busy", window_index=2) == 1
    assert counter.incr("token:busy", window_index=2) == 2
    assert counter.incr("ip:10.0.7", window_index=1) == 1  # a late call of the old window
