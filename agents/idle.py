"""What this process remembers of its long-polls (agents.inbox), so that an idle re-poll reads
neither its profile nor its inbox, and how long a wait parks.

An idle re-poll (nothing new since the last call) should cost a registration, a future and the
check of its token, not the reads of a profile and an inbox that all say the same. So each
process remembers, per connection, what its last read found; a re-poll whose cursor equals the
latest sequence the wake-ups vouch for parks without reading them. The wake-ups vouch only while
they cannot have been missed (agents.sequences), and the profile and the cursor are
read again at least every IDLE_RECHECK_S, and at once after any wake-up that did not carry its
messages: a token revoked, a user deactivated, a profile deleted (agents.revocation) all send one.

Who may read is never taken from here: access can end without any wake-up (QuerySet.update()
sends no signal), so a wait checks its token and person against the database when it parks on
this memory and before it hands over what a wake-up carried (agents.inbox).
"""

import random
from dataclasses import dataclass
from datetime import datetime

from django.utils import timezone

from osfoundry.memory import HeardMemory

from .models import agent_key
from .sequences import sequences

# Each wait ends up to 10% early, so idle agents that parked together drift apart.
TIMEOUT_JITTER = 0.1
# timeout_s=0 repeated with the same cursor within this window waits this long instead.
REPEAT_WINDOW_S = 1.0
REPEAT_MIN_WAIT_S = 1.0
BUSY_LOOP_NOTE = (
    "timeout_s 0 was repeated with the same cursor, so this call waited up to 1 s. Pass "
    "timeout_s (up to 50): the call returns as soon as a message arrives."
)
IDLE_RECHECK_S = 300.0


@dataclass(frozen=True, slots=True)
class InboxState:
    """What the first read of a wait found; plain numbers, so a parked wait keeps no model
    instance alive."""

    profile_id: int
    stored: int  # the stored cursor
    cursor: int  # where this wait starts
    latest: int  # the profile's last inbox sequence
    access_ends_at: datetime | None


@dataclass(slots=True)
class Known:
    profile_id: int
    stored: int  # the stored cursor, as read or as this process moved it since
    access_ends_at: datetime | None


class InboxMemory:
    """What this process remembers of its long-polls: per connection, what the last read found
    (idle re-polls, for IDLE_RECHECK_S), per profile its last timeout_s=0 poll (to tell a busy
    loop, for REPEAT_WINDOW_S). Hints only: forgetting them costs a database read, never a
    message. Whether the inbox changed since is agents.sequences' to say, so neither memory
    hears wake-ups itself."""

    def __init__(self):
        self.known: HeardMemory[Known] = HeardMemory(
            None, ttl=IDLE_RECHECK_S, max_entries=200_000, vouched_by_wakeups=False
        )
        self.zero_polls: HeardMemory[int] = HeardMemory(
            None, ttl=REPEAT_WINDOW_S, max_entries=10_000, vouched_by_wakeups=False
        )

    def reset(self) -> None:
        """Forget everything (a test's new database repeats ids)."""
        self.known.forget_all()
        self.zero_polls.forget_all()

    def profile_id(self, connection: str) -> int | None:
        """The profile the connection last read, even past the recheck: where its wait
        registers before the read that checks it (agents.inbox.open_wait)."""
        known = self.known.peek(connection)
        return None if known is None else known.profile_id

    def forget(self, connection: str) -> None:
        self.known.forget(connection)

    def remember(self, connection: str, state: InboxState) -> None:
        ttl = IDLE_RECHECK_S
        if state.access_ends_at is not None:
            ttl = min(ttl, (state.access_ends_at - timezone.now()).total_seconds())
        known = Known(state.profile_id, state.stored, state.access_ends_at)
        self.known.put(connection, known, ttl=ttl)

    def idle_state(self, connection: str, after_sequence: int | None) -> InboxState | None:
        """The state of an idle re-poll, when this process can vouch that nothing waits after
        its cursor; else None (read the database). Call after registering the waiter."""
        known = self.known.get(connection)
        if known is None:
            return None
        latest = sequences.latest(agent_key(known.profile_id))
        cursor = known.stored if after_sequence is None else after_sequence
        if latest is None or cursor != latest:
            return None
        return InboxState(known.profile_id, known.stored, cursor, latest, known.access_ends_at)

    def delivered(self, connection: str, profile_id: int, sequence: int) -> None:
        """The stored cursor moved to `sequence` (a page was written)."""
        known = self.known.peek(connection)
        if known is not None and known.profile_id == profile_id:
            known.stored = max(known.stored, sequence)

    def wait_budget(self, profile_id: int, cursor: int, timeout_s: int) -> tuple[float, str | None]:
        if timeout_s > 0:
            return timeout_s * (1 - random.uniform(0, TIMEOUT_JITTER)), None
        if self.zero_polls.get(profile_id) == cursor:
            return REPEAT_MIN_WAIT_S, BUSY_LOOP_NOTE
        return 0.0, None

    def zero_poll(self, profile_id: int, cursor: int) -> None:
        self.zero_polls.put(profile_id, cursor)


memory = InboxMemory()
