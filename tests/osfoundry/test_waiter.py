"""osfoundry/wakeups/waiter.py: a parked wait's one future, woken, expired or timed out."""

import asyncio

from osfoundry.wakeups.waiter import Waiter


def test_a_wake_before_the_wait_answers_the_next_wait_at_once():
    async def scenario():
        waiter = Waiter(("agent:1",), asyncio.get_running_loop())
        waiter.wake()
        await asyncio.sleep(0)  # the wake lands on the loop
        assert waiter.is_woken
        assert await waiter.wait(30) is True
        assert await waiter.wait(0.01) is False  # used up: the next one times out

    asyncio.run(scenario())


def test_after_expiry_every_wait_ends_at_once_as_a_timeout():
    async def scenario():
        waiter = Waiter(("agent:1",), asyncio.get_running_loop())
        parked = waiter.wait(30)
        waiter.expire()
        assert await parked is False
        assert await waiter.wait(30) is False  # a later wait does not park
        assert not waiter.is_woken

    asyncio.run(scenario())


def test_a_wake_or_expiry_for_a_closed_loop_is_ignored():
    loop = asyncio.new_event_loop()
    waiter = Waiter(("agent:1",), loop)
    loop.close()
    waiter.wake()  # the loop that parked it is gone: nothing to schedule on
    waiter.expire()
    assert not waiter.is_woken and not waiter.is_expired


def test_an_expiry_before_the_wait_ends_the_next_wait_at_once():
    async def scenario():
        waiter = Waiter(("agent:1",), asyncio.get_running_loop())
        waiter.expire()  # the drain reaches a waiter between two of its waits
        await asyncio.sleep(0)  # the expiry lands on the loop
        assert waiter.is_expired
        assert await waiter.wait(30) is False

    asyncio.run(scenario())
