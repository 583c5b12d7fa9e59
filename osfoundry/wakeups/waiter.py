"""A parked long-poll (Waiter) and the one loop timer that ends parked waits on time (Deadlines).

Both are sized for 20,000 parked requests in one process: a waiter is a future at a time and
nothing else, and timeouts share one timer per loop.
"""

import asyncio
import heapq
import math


class Waiter:
    """A parked long-poll: one future at a time, nothing else.

    A timeout resolves the future with False instead of raising: an idle re-poll every 50 s
    from 20,000 agents must not leave exception and traceback cycles for the collector."""

    __slots__ = ("keys", "loop", "hints", "is_expired", "_woken", "_future")

    def __init__(self, keys: tuple[str, ...], loop: asyncio.AbstractEventLoop):
        self.keys = keys
        self.loop = loop
        self.hints: list = []  # filled under the registry lock, taken with take_hints()
        # The server is shutting down: every wait ends at once, as if its time were up.
        self.is_expired = False
        self._woken = False  # woken while not waiting: the next wait returns at once
        self._future: asyncio.Future | None = None

    @property
    def is_woken(self) -> bool:
        if self._woken:
            return True
        future = self._future
        return future is not None and future.done() and not future.cancelled() and future.result()

    def wake(self) -> None:
        if self.loop.is_closed():
            return
        self.loop.call_soon_threadsafe(self._set)

    def expire(self) -> None:
        """End this wait and every later one now, as a timeout would (graceful shutdown)."""
        if self.loop.is_closed():
            return
        self.loop.call_soon_threadsafe(self._expire)

    def _expire(self) -> None:
        self.is_expired = True
        future = self._future
        if future is not None and not future.done():
            future.set_result(False)

    def _set(self) -> None:
        future = self._future
        if future is not None and not future.done():
            future.set_result(True)
        else:
            self._woken = True

    def wait(self, timeout: float) -> asyncio.Future:
        """Await it: True when woken (now or since the last wait), False on timeout.

        A plain method returning the future, not a coroutine: a parked coroutine frame is
        memory, 20,000 times."""
        future = self._future = self.loop.create_future()
        if self._woken:
            self._woken = False
            future.set_result(True)
        elif self.is_expired:
            future.set_result(False)
        else:
            Deadlines.of(self.loop).add(future, timeout)
        return future


class Deadlines:
    """Ends parked waits on time with one loop timer, not one per wait: a timer handle with
    its copied context costs about 0.6 KB, and 20,000 parked waits would hold 20,000 of them.
    A wait ends within TICK_S after its timeout (timeouts are jittered by seconds anyway).
    Ticks are short so that the waits ending together stay few: each answers and its client
    polls again on the loop, and a send's wake-up queues behind them (with 50 ms ticks, 20,000
    idle agents made ~20 at a time, a few milliseconds of loop work)."""

    TICK_S = 0.005
    _by_loop: dict[asyncio.AbstractEventLoop, "Deadlines"] = {}

    @classmethod
    def of(cls, loop: asyncio.AbstractEventLoop) -> "Deadlines":
        deadlines = cls._by_loop.get(loop)
        if deadlines is None:
            deadlines = cls._by_loop[loop] = cls(loop)
        return deadlines

    def __init__(self, loop: asyncio.AbstractEventLoop):
        self.loop = loop
        self._due: dict[int, list[asyncio.Future]] = {}  # tick -> futures to end then
        self._ticks: list[int] = []  # a heap of the keys of _due
        self._timer: asyncio.TimerHandle | None = None
        self._timer_tick: int | None = None

    def add(self, future: asyncio.Future, timeout: float) -> None:
        tick = math.ceil((self.loop.time() + max(timeout, 0)) / self.TICK_S)
        due = self._due.get(tick)
        if due is None:
            due = self._due[tick] = []
            heapq.heappush(self._ticks, tick)
        due.append(future)
        if self._timer_tick is None or tick < self._timer_tick:
            self._arm(tick)

    def _arm(self, tick: int) -> None:
        if self._timer is not None:
            self._timer.cancel()
        self._timer_tick = tick
        self._timer = self.loop.call_at(tick * self.TICK_S, self._fire)

    def _fire(self) -> None:
        self._timer = self._timer_tick = None
        # The loop's timers may fire up to a millisecond early.
        now = (self.loop.time() + 0.001) / self.TICK_S
        while self._ticks and self._ticks[0] <= now:
            for future in self._due.pop(heapq.heappop(self._ticks)):
                if not future.done():
                    future.set_result(False)
        if self._ticks:
            self._arm(self._ticks[0])
        else:
            del self._by_loop[self.loop]  # nothing due: hold no reference to the loop
