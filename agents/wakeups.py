"""Wake parked long-polls when something they wait for happens.

A parked request costs an asyncio.Event, not a thread. Waiters register under keys
("room:<id>", "agent:<profile id>") before their first read, so no wake-up can slip between the
read and the wait. `notify()` is thread-safe and wakes only the waiters registered under its keys.
A wake-up says only "look again": the waiter re-reads from the database, so a spurious or
duplicate wake-up costs one query and never a lost or doubled message.

Across worker processes, `notify()` also publishes the keys on one Redis channel; each process
holds one subscription and routes what it hears to its local waiters (see `redis_bridge`).
"""

import asyncio
import threading
from collections import defaultdict
from collections.abc import Callable, Iterable


def room_key(room_id) -> str:
    return f"room:{room_id}"


def agent_key(profile_id) -> str:
    return f"agent:{profile_id}"


class Waiter:
    __slots__ = ("keys", "loop", "event", "is_gone")

    def __init__(
        self,
        keys: tuple[str, ...],
        loop: asyncio.AbstractEventLoop,
        is_gone: Callable[[], bool] | None = None,
    ):
        self.keys = keys
        self.loop = loop
        self.event = asyncio.Event()
        # For callers that can only poll their client's state: the sweeper checks it.
        self.is_gone = is_gone

    def wake(self) -> None:
        if self.loop.is_closed():
            return
        self.loop.call_soon_threadsafe(self.event.set)

    async def wait(self, timeout: float) -> bool:
        """True when woken, False on timeout."""
        try:
            await asyncio.wait_for(self.event.wait(), timeout)
        except TimeoutError:
            return False
        self.event.clear()
        return True


class Registry:
    def __init__(self):
        self._lock = threading.Lock()
        self._waiters: dict[str, set[Waiter]] = defaultdict(set)
        self._watched: set[Waiter] = set()

    def register(self, keys: Iterable[str], *, is_gone: Callable[[], bool] | None = None) -> Waiter:
        waiter = Waiter(tuple(keys), asyncio.get_running_loop(), is_gone)
        with self._lock:
            for key in waiter.keys:
                self._waiters[key].add(waiter)
            if is_gone is not None:
                self._watched.add(waiter)
        return waiter

    def unregister(self, waiter: Waiter) -> None:
        with self._lock:
            self._watched.discard(waiter)
            for key in waiter.keys:
                bucket = self._waiters.get(key)
                if bucket is None:
                    continue
                bucket.discard(waiter)
                if not bucket:
                    del self._waiters[key]

    def wake_local(self, keys: Iterable[str]) -> int:
        with self._lock:
            targets = {w for key in keys for w in self._waiters.get(key, ())}
        for waiter in targets:
            waiter.wake()
        return len(targets)

    def wake_all_local(self) -> int:
        with self._lock:
            targets = {w for bucket in self._waiters.values() for w in bucket}
        for waiter in targets:
            waiter.wake()
        return len(targets)

    def wake_gone(self) -> int:
        """Wake the waiters whose client went away, so they stop parking and unregister."""
        with self._lock:
            watched = list(self._watched)
        gone = [waiter for waiter in watched if waiter.is_gone()]
        for waiter in gone:
            waiter.wake()
        return len(gone)

    def count(self) -> int:
        with self._lock:
            return len({w for bucket in self._waiters.values() for w in bucket})


registry = Registry()

SWEEP_INTERVAL_S = 1.0
_sweeper: asyncio.Task | None = None


async def _sweep_forever() -> None:
    while True:
        await asyncio.sleep(SWEEP_INTERVAL_S)
        registry.wake_gone()


def ensure_started() -> None:
    """Start this process's background tasks on the running loop, once: the disconnect sweeper
    and, with REDIS_URL, the Redis bridge. Called by every long-poll before it parks."""
    global _sweeper
    if _sweeper is None or _sweeper.done() or _sweeper.get_loop().is_closed():
        _sweeper = asyncio.get_running_loop().create_task(_sweep_forever())
    if _bridge_factory is not None:
        _bridge_factory()


# Set at start-up when REDIS_URL is configured (see redis_bridge); starts the subscription.
_bridge_factory: Callable[[], None] | None = None

# Set by redis_bridge.start() in a process that has REDIS_URL; publishes keys to other processes.
_remote_publisher = None


def set_remote_publisher(publisher) -> None:
    global _remote_publisher
    _remote_publisher = publisher


def notify(keys: Iterable[str]) -> None:
    """Wake every waiter on these keys, in this process and (with Redis) in the others.

    Call after commit (transaction.on_commit), never inside a transaction.
    """
    keys = list(keys)
    registry.wake_local(keys)
    if _remote_publisher is not None:
        _remote_publisher(keys)
