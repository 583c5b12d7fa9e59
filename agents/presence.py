"""Presence: whether an agent is listening, i.e. has a wait_for_messages parked now or had one
within the last minute, so a person knows whether a message will be picked up.

A wait records when it will end (`AgentProfile.listening_until`); the agent is listening while
that moment is less than PRESENCE_WINDOW ago. Idle re-polls park without a database hop
(agents/idle.py), so presence must not cost one per wait either:

- a wait whose end the stored moment (plus the window) already covers writes nothing: an agent
  in back-to-back 50 s waits needs a record every other call;
- the records a process collects are written together, one UPDATE per 10 s bucket of end
  moments, at most every FLUSH_S: a quiet process writes at once, a busy one every 2 s.
  With 2,000 agents parking (bench/longpoll.py, SQLite, 2 cores) a write per wait put the
  server's idle CPU at 10-12%, against 4.8% without presence; written together, 4.0%.
"""

import asyncio
import logging
import math
import time
from datetime import UTC, datetime, timedelta

from django.utils import timezone

from osfoundry.dbthreads import run_sync
from osfoundry.memory import HeardMemory

from .models import AgentProfile

logger = logging.getLogger(__name__)

PRESENCE_WINDOW = timedelta(seconds=60)
FLUSH_S = 2.0
BUCKET_S = 10  # end moments are rounded up to this, so a flush is a few UPDATEs
CHUNK = 500  # ids per UPDATE


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


def bucket(moment: datetime) -> datetime:
    seconds = math.ceil(moment.timestamp() / BUCKET_S) * BUCKET_S
    return datetime.fromtimestamp(seconds, tz=UTC)


class PresenceMemory:
    """This process's presence records: what it stored (or is about to) per profile, and what
    waits for the next flush. Hints only: forgetting them costs one write."""

    def __init__(self):
        self.stored: HeardMemory[datetime] = HeardMemory(
            None, max_entries=200_000, vouched_by_wakeups=False
        )
        self.reset()

    def reset(self) -> None:
        self.stored.forget_all()
        self.pending: dict[int, datetime] = {}
        self.last_flush = -math.inf
        self.is_flush_scheduled = False
        self.tasks: set[asyncio.Task] = set()

    def is_covered(self, profile_id: int, until: datetime) -> bool:
        known = self.stored.get(profile_id)
        return known is not None and known + PRESENCE_WINDOW >= until

    def add(self, profile_id: int, until: datetime) -> None:
        self.stored.put(profile_id, until)
        self.pending[profile_id] = max(until, self.pending.get(profile_id, until))

    def take_pending(self) -> dict[int, datetime]:
        pending, self.pending = self.pending, {}
        self.last_flush = time.monotonic()
        return pending


memory = PresenceMemory()


def record_listening(records: dict[int, datetime]) -> None:
    """Store that each profile listens until its moment (never moving a moment back)."""
    by_until: dict[datetime, list[int]] = {}
    for profile_id, until in records.items():
        by_until.setdefault(until, []).append(profile_id)
    for until, ids in by_until.items():
        for start in range(0, len(ids), CHUNK):
            AgentProfile.objects.filter(pk__in=ids[start : start + CHUNK]).exclude(
                listening_until__gte=until
            ).update(listening_until=until)


async def flush() -> None:
    memory.is_flush_scheduled = False
    records = memory.take_pending()
    if not records:
        return
    try:
        await run_sync(record_listening, records)
    except Exception:
        # Presence is a hint for people; a failed write must never fail an agent's wait.
        logger.exception("could not record presence of %d agents", len(records))


def schedule_flush() -> None:
    memory.is_flush_scheduled = True
    loop = asyncio.get_running_loop()

    def start() -> None:
        task = loop.create_task(flush())
        memory.tasks.add(task)  # a strong reference until it is done
        task.add_done_callback(memory.tasks.discard)

    loop.call_later(FLUSH_S, start)


async def note_wait(profile_id: int, budget_s: float) -> None:
    """A wait of `budget_s` seconds starts now: record it unless the stored moment covers it."""
    until = bucket(timezone.now() + timedelta(seconds=budget_s))
    if memory.is_covered(profile_id, until):
        return
    memory.add(profile_id, until)
    if time.monotonic() - memory.last_flush >= FLUSH_S:
        await flush()  # a quiet process records at once
    elif not memory.is_flush_scheduled:
        schedule_flush()
