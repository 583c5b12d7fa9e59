"""In-process wake-ups: parked waits end on time through one shared loop timer
(osfoundry.wakeups.Deadlines), and a sender's thread lets woken waiters answer first."""

import asyncio

from osfoundry import wakeups
from osfoundry.wakeups import Deadlines, Registry


async def test_waits_end_in_the_order_of_their_timeouts():
    registry = Registry()
    loop = asyncio.get_running_loop()
    waiters = [registry.register([f"agent:{n}"]) for n in range(3)]
    ended = []

    async def wait(n, timeout):
        assert await waiters[n].wait(timeout) is False
        ended.append((n, loop.time()))

    await asyncio.gather(wait(0, 0.3), wait(1, 0.1), wait(2, 0.2))
    assert [n for n, _at in ended] == [1, 2, 0]
    assert loop not in Deadlines._by_loop  # nothing due: no reference to the loop kept


async def test_a_woken_wait_returns_true_and_the_timer_leaves_it_alone():
    registry = Registry()
    waiter = registry.register(["agent:1"])
    parked = asyncio.ensure_future(waiter.wait(0.2))
    await asyncio.sleep(0)
    registry.wake_local(["agent:1"])
    assert await parked is True
    loop = asyncio.get_running_loop()
    while loop in Deadlines._by_loop:  # until the deadline has passed over the done future
        await asyncio.sleep(0.01)
    assert waiter.is_woken  # the last wait ended by a wake-up


async def test_a_wake_up_between_waits_is_kept_for_the_next_one():
    registry = Registry()
    waiter = registry.register(["agent:1"])
    assert await waiter.wait(0) is False
    registry.wake_local(["agent:1"])
    await asyncio.sleep(0.01)  # wake() hands over to the loop
    assert await waiter.wait(50) is True


async def test_a_worker_thread_that_woke_waiters_steps_aside_and_the_loop_never_does(
    monkeypatch,
):
    pauses = []
    monkeypatch.setattr(wakeups.time, "sleep", pauses.append)
    waiter = wakeups.registry.register(["agent:42"])
    try:
        await asyncio.to_thread(wakeups.notify, ["agent:42"])  # a send's worker thread
        assert pauses == [wakeups.GIL_HANDOFF_S]
        assert await waiter.wait(10) is True
        wakeups.notify(["agent:42"])  # on the event loop: sleeping would stall every request
        await asyncio.to_thread(wakeups.notify, ["agent:7"])  # woke nobody here
        assert pauses == [wakeups.GIL_HANDOFF_S]
    finally:
        wakeups.registry.unregister(waiter)


async def test_a_waiter_that_leaves_takes_no_other_waiter_on_its_keys_with_it():
    registry = Registry()
    leaving = registry.register(["room:1"])
    staying = registry.register(["room:1", "agent:1"])

    registry.unregister(leaving)

    assert registry.count() == 1
    assert registry.wake_local(["room:1"]) == 1
    assert await staying.wait(10) is True
    assert not leaving.is_woken


async def test_unregistering_a_waiter_twice_is_harmless():
    registry = Registry()
    waiter = registry.register(["room:1", "agent:1"])
    registry.unregister(waiter)
    registry.unregister(waiter)  # e.g. a clean-up after an error path already ran one
    assert registry.count() == 0
    assert registry.wake_local(["room:1", "agent:1"]) == 0
