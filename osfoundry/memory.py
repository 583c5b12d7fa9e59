"""A process's memory of what it read from the database, kept only while it cannot be stale;
every process memory (tokens, Rooms, inbox sequences, idle long-polls, presence) is one.

Hot reads that every call repeats (a token check, a Room) are remembered per process, with the
same rule as agents.idle's parked long-polls: whatever changes what was read sends a wake-up
under the memory's key after commit (osfoundry.wakeups, heard by every process, over Redis with
several workers), and each process forgets everything under that key before it wakes any waiter
of the same wake-up. While wake-ups from other processes may be missed (Redis down, the
subscription not yet live) nothing is trusted and every read goes to the database. A read that
was under way while a forget happened is not stored. Entries also expire after `ttl` seconds,
which bounds what a write without signals (QuerySet.update()) leaves stale.
"""

import math
import threading
from collections.abc import Hashable
from time import monotonic

from . import wakeups
from .wakeups import Registry


class HeardMemory[V]:
    """Every memory a process keeps of what it read or wrote: one trust window (`ttl`, or a
    shorter one per entry), one size bound (`max_entries`: past it the expired entries go, and
    everything when that does not free half), one way to forget (`forget`, `forget_all`).

    `key`: the wake-up key (or, ending in ":", the family of keys) under which a change makes
    it stale, and which it also hears when wake-ups may have been missed (it then forgets all);
    None for a memory that no wake-up makes stale: what this process itself wrote
    (agents.presence), or what is checked against another memory before use (agents.idle).
    `vouched_by_wakeups`: what it holds counts only while no wake-up can be missed."""

    def __init__(
        self,
        key: str | None,
        *,
        ttl: float = math.inf,
        max_entries: int = 50_000,
        vouched_by_wakeups: bool = True,
        registry: Registry | None = None,
    ):
        self.key = key
        self.ttl = ttl
        self.max_entries = max_entries
        self.vouched_by_wakeups = vouched_by_wakeups
        self.registry = wakeups.registry if registry is None else registry
        self._lock = threading.Lock()
        self._known: dict[Hashable, tuple[V, float]] = {}
        self.generation = 0  # moves on every forget, so a slow read never undoes one
        if key is not None:
            self.registry.listen(key, self.heard)

    def heard(self, _key: str | None, _hints: list | None) -> None:
        """A wake-up under this memory's key, or wake-ups were missed: forget."""
        self.forget_all()

    def forget_all(self) -> None:
        with self._lock:
            self._known.clear()
            self.generation += 1

    def forget(self, key: Hashable) -> None:
        with self._lock:
            self._known.pop(key, None)
            self.generation += 1

    def get(self, key: Hashable) -> V | None:
        """What was remembered under `key`, when it can be trusted now; else None."""
        known = self._known.get(key)
        if known is None or monotonic() >= known[1]:
            return None
        if self.vouched_by_wakeups and not self.registry.is_reliable():
            return None
        return known[0]

    def peek(self, key: Hashable) -> V | None:
        """What was remembered under `key`, trusted or not: a guess the caller checks."""
        known = self._known.get(key)
        return None if known is None else known[0]

    def put(
        self, key: Hashable, value: V, generation: int | None = None, ttl: float | None = None
    ) -> None:
        """Remember `value`, read from the database after `generation` was current, unless a
        forget happened since (the read may predate the change it announced). Without a
        generation, `value` is what this process itself did: it is remembered as it is."""
        if self.vouched_by_wakeups and not self.registry.is_reliable():
            return
        trusted_until = monotonic() + (self.ttl if ttl is None else min(self.ttl, ttl))
        with self._lock:
            if generation is not None and generation != self.generation:
                return
            self._store(key, value, trusted_until)

    def _store(self, key: Hashable, value: V, trusted_until: float) -> None:
        """Store under the lock, within the bound."""
        known = self._known
        if len(known) >= self.max_entries and key not in known:
            now = monotonic()
            for stale in [k for k, (_v, until) in known.items() if now >= until]:
                del known[stale]
            if len(known) * 2 > self.max_entries:
                known.clear()
        known[key] = (value, trusted_until)

    def __len__(self) -> int:
        return len(self._known)
