"""The cross-process bridge against a real Redis: one subscription per process."""

import asyncio
import os
import uuid
from contextlib import asynccontextmanager
from urllib.parse import urlsplit

import pytest
import redis

from agents.sequences import InboxSequences
from osfoundry.wakeups import RedisBridge, Registry
from osfoundry.wakeups.bridge import MAX_HINT_BYTES
from tests.polling import until_async
from tests.servers import require

REDIS_URL = os.environ.get("REDIS_URL") or "redis://127.0.0.1:6379/0"


@pytest.fixture
def channel():
    parts = urlsplit(REDIS_URL)
    require(parts.hostname or "127.0.0.1", parts.port or 6379, "Redis")
    return f"test-wakeups-{uuid.uuid4().hex}"


async def subscribed(bridge, times=1):
    await until_async(lambda: bridge.subscribed >= times, f"subscription number {times}")


@asynccontextmanager
async def running(bridge):
    """`bridge` started, once its subscription is active; stopped on the way out."""
    bridge.start()
    try:
        await asyncio.wait_for(subscribed(bridge), 10)
        yield bridge
    finally:
        await bridge.stop()


def kill_subscription(bridge):
    """What a Redis restart or a network cut does to the process's one subscription."""
    admin = redis.Redis.from_url(REDIS_URL)
    ours = [c["id"] for c in admin.client_list() if c["name"] == bridge.client_name]
    assert len(ours) == 1  # one subscription for the whole process
    admin.client_kill_filter(_id=ours[0])
    admin.close()


async def test_keys_from_another_process_wake_only_their_waiters(channel):
    local = Registry()
    here = RedisBridge(REDIS_URL, channel, target=local)
    elsewhere = RedisBridge(REDIS_URL, channel, target=Registry())
    async with running(here):
        first = local.register(["agent:1"])
        second = local.register(["agent:2"])
        await asyncio.to_thread(elsewhere.publish, ["agent:1"])
        assert await first.wait(10)
        assert not second.is_woken


async def test_a_process_ignores_its_own_wake_ups(channel):
    local = Registry()
    here = RedisBridge(REDIS_URL, channel, target=local)
    elsewhere = RedisBridge(REDIS_URL, channel, target=Registry())
    async with running(here):
        mine = local.register(["agent:1"])
        theirs = local.register(["agent:2"])
        await asyncio.to_thread(here.publish, ["agent:1"])  # already woken locally by notify()
        await asyncio.to_thread(elsewhere.publish, ["agent:2"])
        assert await theirs.wait(10)  # Redis keeps order: ours was seen and skipped before
        assert not mine.is_woken


async def test_a_resubscription_wakes_every_local_waiter_to_re_read(channel):
    local = Registry()
    here = RedisBridge(REDIS_URL, channel, target=local)
    async with running(here):
        waiter = local.register(["agent:1"])
        kill_subscription(here)
        await asyncio.wait_for(subscribed(here, 2), 10)
        assert await waiter.wait(10)


async def test_small_hints_cross_processes_with_the_wake_up(channel):
    local = Registry()
    here = RedisBridge(REDIS_URL, channel, target=local)
    elsewhere = RedisBridge(REDIS_URL, channel, target=Registry())
    async with running(here):
        waiter = local.register(["agent:1"])
        entry = {"sequence": 1, "body": "hi"}
        await asyncio.to_thread(elsewhere.publish, ["agent:1"], {"agent:1": [entry]})
        assert await waiter.wait(10)
        assert local.take_hints(waiter) == [entry]


async def test_what_wake_ups_vouch_for_counts_only_while_subscribed(channel):
    local = Registry()
    here = RedisBridge(REDIS_URL, channel, target=local)
    known = InboxSequences(local)
    entry = {"sequence": 3, "body": "hi"}
    local.wake_local(["agent:1"], {"agent:1": [entry]})
    assert known.latest("agent:1") is None  # not subscribed yet: wake-ups may be missed
    async with running(here):
        local.wake_local(["agent:1"], {"agent:1": [entry]})
        assert known.latest("agent:1") == 3
        kill_subscription(here)
        await asyncio.wait_for(subscribed(here, 2), 10)
        # Whatever was published while the subscription was down is unknown here.
        assert known.latest("agent:1") is None
    assert known.latest("agent:1") is None


async def test_large_hints_stay_behind_and_the_wake_up_still_crosses(channel):
    local = Registry()
    here = RedisBridge(REDIS_URL, channel, target=local)
    known = InboxSequences(local)
    elsewhere = RedisBridge(REDIS_URL, channel, target=Registry())
    async with running(here):
        waiter = local.register(["agent:1"])
        entry = {"sequence": 1, "body": "x" * MAX_HINT_BYTES}
        await asyncio.to_thread(elsewhere.publish, ["agent:1"], {"agent:1": [entry]})
        assert await waiter.wait(10)
        assert local.take_hints(waiter) == []  # the waiter re-reads from the database
        assert known.latest("agent:1") is None  # nothing known without the hint


async def test_stopping_a_bridge_that_never_subscribed_is_harmless(channel):
    bridge = RedisBridge(REDIS_URL, channel, target=Registry())
    await bridge.stop()  # a process that only published (a management command) shuts down
    assert not bridge.is_live
    assert bridge.subscribed == 0
