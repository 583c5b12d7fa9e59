"""A process's memory of what it read from the database, kept only while it cannot be stale.

Hot reads that every call repeats (a token check, a Room) are remembered per process, with the
same rule as agents.idle's parked long-polls: whatever changes what was read sends a wake-up
under the memory's key after commit (osfoundry.wakeups, heard by every process, over Redis with
several workers), and each process forgets everything under that key before it wakes any waiter
of the same wake-up. While wake-ups from other processes may be missed (Redis down, the
subscription not yet live) nothing is trusted and every read goes to the database. A read that
was under way while a forget happened is not stored. Entries also expire after `ttl` seconds,
which bounds what a write without signals (QuerySet.update()) leaves stale.
"""

import threading
from collections.abc import Hashable
from time import monotonic

from . import wakeups


class HeardMemory[V]:
    def __init__(self, key: str, *, ttl: float, max_entries: int = 50_000):
        self.key = key
        self.ttl = ttl
        self.max_entries = max_entries
        self._lock = threading.Lock()
        self._known: dict[Hashable, tuple[V, float]] = {}
        self.generation = 0  # moves on every forget, so a slow read never undoes one
        wakeups.registry.listen(key, self.heard)

    def heard(self, _key: str | None, _hints: list | None) -> None:
        """A wake-up under this memory's key, or wake-ups were missed: forget."""
        self.forget_all()

    def forget_all(self) -> None:
        with self._lock:
            self._known.clear()
            self.generation += 1

    def get(self, key: Hashable) -> V | None:
        """What was remembered under `key`, when it can be trusted now; else None."""
        known = self._known.get(key)
        if known is None or monotonic() >= known[1] or not wakeups.registry.is_reliable():
            return None
        return known[0]

    def put(self, key: Hashable, value: V, generation: int, ttl: float | None = None) -> None:
        """Remember `value`, read from the database after `generation` was current, unless a
        forget happened since (the read may predate the change it announced)."""
        if not wakeups.registry.is_reliable():
            return
        trusted_until = monotonic() + (self.ttl if ttl is None else min(self.ttl, ttl))
        with self._lock:
            if generation != self.generation:
                return
            if len(self._known) >= self.max_entries:
                self._known.clear()
            self._known[key] = (value, trusted_until)

    def notify_changed(self) -> None:
        """Something under this memory's key was written: after commit, every process forgets.
        Call inside the writing transaction (or outside any)."""
        from django.db import transaction

        transaction.on_commit(lambda: wakeups.notify([self.key]))
