"""Presence: whether an agent is listening, i.e. has a wait_for_messages parked now or had one
within the last minute, so a person knows whether a message will be picked up.

A wait records when it will end (`AgentProfile.listening_until`); the agent is listening while
that moment is less than PRESENCE_WINDOW ago. Idle re-polls park without a database hop
(agents/idle.py), so the record is not written on every wait: this process skips the write
while the stored moment, plus the window, already covers the new wait's end. Back-to-back 50 s
waits then write every other call, and the console is never wrong about a parked wait.
"""

from datetime import datetime, timedelta

from django.utils import timezone

from osfoundry.dbthreads import run_sync

from .models import AgentProfile

PRESENCE_WINDOW = timedelta(seconds=60)


def is_listening(profile: AgentProfile, *, now: datetime | None = None) -> bool:
    until = profile.listening_until
    return until is not None and until > (now or timezone.now()) - PRESENCE_WINDOW


def presence_label(profile: AgentProfile, *, now: datetime | None = None) -> str:
    """What the console says of an agent: "listening", "not listening" or "never listened"."""
    if profile.is_person:
        return "person"
    if profile.listening_until is None:
        return "never listened"
    return "listening" if is_listening(profile, now=now) else "not listening"


class PresenceMemory:
    """The listening_until this process last stored per profile (a hint: forgetting it costs
    one write)."""

    MAX_ENTRIES = 200_000

    def __init__(self):
        self.stored: dict[int, datetime] = {}

    def reset(self) -> None:
        self.stored.clear()

    def is_covered(self, profile_id: int, until: datetime) -> bool:
        known = self.stored.get(profile_id)
        return known is not None and known + PRESENCE_WINDOW >= until

    def remember(self, profile_id: int, until: datetime) -> None:
        if len(self.stored) > self.MAX_ENTRIES:
            self.stored.clear()
        self.stored[profile_id] = until


memory = PresenceMemory()


def record_listening(*, profile_id: int, until: datetime) -> None:
    """Store that the profile listens until `until` (never moves the moment back)."""
    AgentProfile.objects.filter(pk=profile_id).exclude(listening_until__gte=until).update(
        listening_until=until
    )


async def note_wait(profile_id: int, budget_s: float) -> None:
    """A wait of `budget_s` seconds starts now: record it unless the stored moment covers it."""
    until = timezone.now() + timedelta(seconds=budget_s)
    if memory.is_covered(profile_id, until):
        return
    await run_sync(record_listening, profile_id=profile_id, until=until)
    memory.remember(profile_id, until)
