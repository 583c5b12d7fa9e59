"""Waiting in a test for something to become true: a bounded poll that fails naming what never
happened. The bound is a hang guard, not a timing assertion: far beyond what any of these waits
takes on a loaded machine, so a broken product fails its test with a message instead of
hanging the run (and mutation testing sees a failure, not a timeout)."""

import asyncio
import time
from collections.abc import Awaitable, Callable

HANG_GUARD_SECONDS = 60.0


def until(condition: Callable, what: str, seconds: float = HANG_GUARD_SECONDS, step=0.01):
    """Poll `condition` until it returns something true, and return that."""
    deadline = time.monotonic() + seconds
    while not (result := condition()):
        assert time.monotonic() < deadline, f"gave up waiting for {what}"
        time.sleep(step)
    return result


async def until_async(
    condition: Callable[[], Awaitable | object], what: str, seconds: float = HANG_GUARD_SECONDS
):
    """`until` for a test running on an event loop; `condition` may be a coroutine function."""
    deadline = time.monotonic() + seconds
    while True:
        result = condition()
        if asyncio.iscoroutine(result):
            result = await result
        if result:
            return result
        assert time.monotonic() < deadline, f"gave up waiting for {what}"
        await asyncio.sleep(0.01)
