"""The latest inbox sequence of each profile, as this process knows it: from its own reads
(`confirm`) and from the wake-ups it hears under "agent:<profile id>" (osfoundry.wakeups).

A send's wake-up carries the new inbox entries as hints (agents.sending); their highest sequence
is the profile's latest. A wake-up under a profile's key without hints (another process's large
message, an access change) makes that profile unknown again, and so do missed wake-ups (Redis
down, a resubscription). What is known counts only while no wake-up can be missed
(`wakeups.registry.is_reliable`): agents.idle uses it to let an idle re-poll park without reading.
"""

import threading

from osfoundry import wakeups
from osfoundry.wakeups import Registry

from .models import agent_key

FAMILY = agent_key("")  # "agent:": every profile's inbox key


class InboxSequences:
    MAX_ENTRIES = 200_000  # 20,000 agents fit many times over; past it, all are read again

    def __init__(self, registry: Registry):
        self.registry = registry
        self._lock = threading.Lock()
        self._latest: dict[str, int] = {}
        self.generation = 0  # moves on every "unknown again", so a read never undoes one
        registry.listen(FAMILY, self.heard)

    def heard(self, key: str | None, hints: list | None) -> None:
        with self._lock:
            if key is None:
                self._latest.clear()
                self.generation += 1
            elif hints:
                latest = max(hint["sequence"] for hint in hints)
                if latest > self._latest.get(key, 0):
                    self._latest[key] = latest
            else:
                self._latest.pop(key, None)
                self.generation += 1

    def latest(self, key: str) -> int | None:
        """The latest sequence under `key`, when wake-ups can vouch for it; else None."""
        if not self.registry.is_reliable():
            return None
        return self._latest.get(key)

    def confirm(self, key: str, latest: int, generation: int) -> None:
        """Record `latest`, read from the database after `generation` was current, unless a
        wake-up since then made the key unknown (the read may predate what it announced)."""
        with self._lock:
            if generation != self.generation:
                return
            if len(self._latest) > self.MAX_ENTRIES:
                self._latest.clear()
            if latest > self._latest.get(key, -1):
                self._latest[key] = latest


sequences = InboxSequences(wakeups.registry)
