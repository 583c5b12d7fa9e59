"""Wake parked long-polls when something they wait for happens.

A parked request costs a future, not a thread. Waiters register under keys (strings the apps
choose: "room:<id>", "agent:<profile id>") before their first read, so no wake-up can slip
between the read and the wait. `notify()` is thread-safe and wakes only the waiters registered
under its keys. A wake-up says "look again": the waiter re-reads from the database, so a spurious
or duplicate wake-up costs one query and never a lost or doubled message. A wake-up may also carry
hints (key -> what changed, e.g. new inbox entries); what they mean is the business of the app
that chose the key (agents.sequences, agents.inbox), never of the registry, which hands them to
the waiters and listeners of their key as they came.

Across worker processes, `notify()` also publishes the keys on one Redis channel; each process
holds one subscription and routes what it hears to its local waiters (see `RedisBridge`).
"""

import asyncio
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Iterable
from urllib.parse import urlsplit

from .bridge import RedisBridge
from .waiter import Deadlines, Waiter

__all__ = [
    "Deadlines",
    "Heard",
    "RedisBridge",
    "Registry",
    "Waiter",
    "configure",
    "notify",
    "registry",
]

# A listener: heard(key, hints) for a wake-up under `key` (hints: what it carried under that key,
# or None), heard(None, None) when wake-ups may have been missed (nothing heard counts any more).
Heard = Callable[[str | None, list | None], None]


class Registry:
    def __init__(self, *, on_register: Callable[[], None] | None = None):
        self._lock = threading.Lock()
        self._waiters: dict[str, set[Waiter]] = defaultdict(set)
        self._on_register = on_register
        self.is_reliable: Callable[[], bool] = lambda: True
        self.is_draining = False
        # Process-wide memories that a wake-up under a key makes stale (osfoundry.memory,
        # agents.sequences): they hear it before any waiter of the same wake-up runs, and
        # whenever wake-ups may have been missed.
        self._listeners: dict[str, list[Heard]] = defaultdict(list)

    def listen(self, key: str, heard: Heard) -> None:
        """`heard` hears every wake-up under `key`; a key ending in ":" (a family, "agent:")
        stands for every key that starts with it."""
        self._listeners[key].append(heard)

    def _tell_listeners(
        self, keys: Iterable[str] | None = None, hints: dict[str, list] | None = None
    ) -> None:
        if keys is None:
            for heard in [heard for each in self._listeners.values() for heard in each]:
                heard(None, None)
            return
        listeners = self._listeners
        for key in keys:
            exact = listeners.get(key, ())
            family = listeners.get(key[: key.find(":") + 1], ()) if ":" in key else ()
            if exact or family:
                hinted = (hints or {}).get(key)
                for heard in (*exact, *family):
                    heard(key, hinted)

    def register(self, keys: Iterable[str]) -> Waiter:
        """Park under `keys`. A caller whose client may leave wakes the waiter when it does
        (wake_local): nothing here polls thousands of parked clients."""
        waiter = Waiter(tuple(keys), asyncio.get_running_loop())
        with self._lock:
            waiter.is_expired = self.is_draining
            for key in waiter.keys:
                self._waiters[key].add(waiter)
        if self._on_register is not None:
            self._on_register()
        return waiter

    def unregister(self, waiter: Waiter) -> None:
        with self._lock:
            for key in waiter.keys:
                bucket = self._waiters.get(key)
                if bucket is None:
                    continue
                bucket.discard(waiter)
                if not bucket:
                    del self._waiters[key]

    def wake_local(self, keys: Iterable[str], hints: dict[str, list] | None = None) -> int:
        keys = list(keys)
        self._tell_listeners(keys, hints)
        with self._lock:
            targets = set()
            for key in keys:
                for waiter in self._waiters.get(key, ()):
                    targets.add(waiter)
                    if hints and key in hints:
                        waiter.hints.extend(hints[key])
        for waiter in targets:
            waiter.wake()
        return len(targets)

    def wake_all_local(self) -> int:
        self._tell_listeners()
        with self._lock:
            targets = {w for bucket in self._waiters.values() for w in bucket}
        for waiter in targets:
            waiter.wake()
        return len(targets)

    def drain(self) -> int:
        """Graceful shutdown (osfoundry/shutdown.py): every parked wait ends now with what it
        has (usually nothing), as at its timeout, and every later one ends at once, so the
        server can close its connections without cutting a long-poll."""
        with self._lock:
            self.is_draining = True
            targets = {w for bucket in self._waiters.values() for w in bucket}
        for waiter in targets:
            waiter.expire()
        return len(targets)

    def forget_all(self) -> None:
        """Wake-ups may have been missed: every listener forgets what it heard."""
        self._tell_listeners()

    def take_hints(self, waiter: Waiter) -> list:
        with self._lock:
            hints, waiter.hints = waiter.hints, []
        return hints

    def count(self) -> int:
        with self._lock:
            return len({w for bucket in self._waiters.values() for w in bucket})


# Every long-poll (agents' and Rooms') registers here; the first one starts the subscription.
registry = Registry(on_register=lambda: ensure_started())


def ensure_started() -> None:
    """With REDIS_URL, start this process's Redis subscription on the running loop, once.
    Runs at every registration (cheap when started), so Room polls and agent waits alike
    start it."""
    if bridge is not None:
        bridge.start()


# Set by configure() in a process that has REDIS_URL; publishes keys to other processes.
_remote_publisher: Callable[[list[str], dict | None], None] | None = None


def set_remote_publisher(publisher) -> None:
    global _remote_publisher
    _remote_publisher = publisher


def notify(keys: Iterable[str], hints: dict[str, list] | None = None) -> None:
    """Wake every waiter on these keys, in this process and (with Redis) in the others.

    `hints` (key -> new entries) travel along when small. Call after commit
    (transaction.on_commit), never inside a transaction.
    """
    keys = list(keys)
    woken = registry.wake_local(keys, hints)
    if _remote_publisher is not None and keys:
        _remote_publisher(keys, hints)
    if woken and not _on_event_loop():
        # The woken waiters answer on the event loop thread, which needs the GIL; left alone,
        # this (worker) thread keeps it while it builds its own response. Stepping aside for
        # a moment lets them answer first: delivery p50 0.87 -> 0.64 ms (bench/longpoll.py).
        time.sleep(GIL_HANDOFF_S)


GIL_HANDOFF_S = 0.00005


def _on_event_loop() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


bridge: RedisBridge | None = None


def configure(redis_url: str, prefix: str = "osfoundry") -> None:
    """Called once at start-up: with a Redis URL, wake-ups cross process boundaries."""
    global bridge
    if not redis_url:
        bridge = None
        set_remote_publisher(None)
        registry.is_reliable = lambda: True
        return
    # Pub/sub ignores the database number: put it in the channel so databases stay apart.
    db = urlsplit(redis_url).path.strip("/") or "0"
    bridge = RedisBridge(redis_url, f"{prefix}:wakeups:{db}", target=registry)
    set_remote_publisher(bridge.publish)
