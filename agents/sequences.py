"""The latest inbox sequence of each profile, as this process knows it: from its own reads
(`confirm`) and from the wake-ups it hears under "agent:<profile id>" (osfoundry.wakeups).

A send's wake-up carries the new inbox entries as hints (agents.sending); their highest sequence
is the profile's latest. A wake-up under a profile's key without hints (another process's large
message, an access change) makes that profile unknown again, and so do missed wake-ups (Redis
down, a resubscription). What is known counts only while no wake-up can be missed
(`wakeups.registry.is_reliable`): agents.idle uses it to let an idle re-poll park without reading.
"""

from time import monotonic

from osfoundry import wakeups
from osfoundry.memory import HeardMemory
from osfoundry.wakeups import Registry

from .models import agent_key

FAMILY = agent_key("")  # "agent:": every profile's inbox key


class InboxSequences(HeardMemory[int]):
    def __init__(self, registry: Registry | None = None):
        # 20,000 agents fit many times over; past the bound, all are read again.
        super().__init__(FAMILY, max_entries=200_000, registry=registry)

    def heard(self, key: str | None, hints: list | None) -> None:
        if key is None:
            self.forget_all()
        elif hints:
            self._raise(key, max(hint["sequence"] for hint in hints), None)
        else:
            self.forget(key)

    def latest(self, key: str) -> int | None:
        """The latest sequence under `key`, when wake-ups can vouch for it; else None."""
        return self.get(key)

    def confirm(self, key: str, latest: int, generation: int) -> None:
        """Record `latest`, read from the database after `generation` was current, unless a
        wake-up since then made the key unknown (the read may predate what it announced)."""
        self._raise(key, latest, generation)

    def _raise(self, key: str, latest: int, generation: int | None) -> None:
        """Sequences only move forward: a late read or another process's late hints change
        nothing."""
        with self._lock:
            if generation is not None and generation != self.generation:
                return
            known = self._known.get(key)
            if known is None or latest > known[0]:
                self._store(key, latest, monotonic() + self.ttl)


sequences = InboxSequences(wakeups.registry)
