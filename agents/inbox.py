"""Receiving: the long-poll inbox behind wait_for_messages (the MCP tool and the REST route).

A client that passes after_sequence = the last sequence it *processed* gets at-least-once
delivery in every case: whatever it did not finish comes again. Without after_sequence the call
resumes from the stored cursor, which moves only after a response was completely written (the
caller hands the Receipt to `confirm_delivery` then), so a dropped connection loses nothing
either; what it cannot know is whether the client processed what it received.

A parked wait is a future on the event loop (osfoundry.wakeups), not a thread: a send wakes only
its recipients' waiters, after commit, in every process.
"""

import asyncio
import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from django.utils import timezone

from osfoundry import wakeups
from osfoundry.dbthreads import run_sync
from osfoundry.disconnect import DisconnectWatcher
from osfoundry.errors import DomainError, Invalid
from osfoundry.wakeups import Waiter

from .models import AgentProfile, InboxEntry

MAX_WAIT_S = 50
MAX_BATCH = 50
# Each wait ends up to 10% early, so idle agents that parked together drift apart.
TIMEOUT_JITTER = 0.1
# timeout_s=0 repeated with the same cursor within this window waits this long instead.
REPEAT_WINDOW_S = 1.0
REPEAT_MIN_WAIT_S = 1.0
BUSY_LOOP_NOTE = (
    "timeout_s 0 was repeated with the same cursor, so this call waited up to 1 s. Pass "
    "timeout_s (up to 50): the call returns as soon as a message arrives."
)
# An idle re-poll (nothing new since the last call) should cost a registration and a future,
# not a database hop: 20,000 agents re-polling every 50 s would otherwise keep a core busy with
# token checks that all say the same. So each process remembers, per connection, what its last
# read found (InboxMemory); a re-poll whose cursor equals the latest sequence the wake-ups vouch
# for parks without reading. The wake-ups vouch only while they cannot have been missed (see
# wakeups.Registry.latest), and the token, the profile and the cursor are read again at least
# every IDLE_RECHECK_S; revoking a token ends that trust at once (agents.tokens).
IDLE_RECHECK_S = 300.0


def agent_key(profile_id) -> str:
    """The wake-up key of a profile's inbox."""
    return f"agent:{profile_id}"


@dataclass(slots=True)
class InboxPage:
    messages: list[dict]
    next_after_sequence: int
    has_more: bool = False
    note: str | None = None

    def as_dict(self) -> dict:
        data = {
            "messages": self.messages,
            "next_after_sequence": self.next_after_sequence,
            "has_more": self.has_more,
        }
        if self.note:
            data["note"] = self.note
        return data


@dataclass(frozen=True, slots=True)
class Receipt:
    """The stored cursor's move, due once the page that carried it was completely written."""

    profile_id: int
    sequence: int
    connection: str


@dataclass(frozen=True, slots=True)
class InboxState:
    """What the first read of a wait found; plain numbers, so a parked wait keeps no model
    instance alive."""

    profile_id: int
    stored: int  # the stored cursor
    cursor: int  # where this wait starts
    latest: int  # the profile's last inbox sequence
    access_ends_at: datetime | None


# load_profile() gives the caller's profile and when the caller's access ends (None: never).
ProfileLoader = Callable[[], tuple[AgentProfile, datetime | None]]


@dataclass(slots=True)
class Known:
    profile_id: int
    stored: int  # the stored cursor, as read or as this process moved it since
    trusted_until: float  # time.monotonic()


class InboxMemory:
    """What this process remembers of its long-polls: per connection, what the last read found
    (for idle re-polls, see IDLE_RECHECK_S), and per profile, its last timeout_s=0 poll (to tell
    a busy loop). Both are hints: forgetting them costs a database read, never a message."""

    MAX_ENTRIES = 200_000

    def __init__(self):
        self.known: dict[str, Known] = {}
        self.zero_polls: dict[int, tuple[int, float]] = {}

    def reset(self) -> None:
        """Forget everything (a test's new database repeats ids)."""
        self.known.clear()
        self.zero_polls.clear()

    def profile_id(self, connection: str) -> int | None:
        known = self.known.get(connection)
        return None if known is None else known.profile_id

    def forget(self, connection: str) -> None:
        self.known.pop(connection, None)

    def remember(self, connection: str, state: InboxState) -> None:
        trusted_until = time.monotonic() + IDLE_RECHECK_S
        if state.access_ends_at is not None:
            remaining = (state.access_ends_at - timezone.now()).total_seconds()
            trusted_until = min(trusted_until, time.monotonic() + remaining)
        if len(self.known) > self.MAX_ENTRIES:
            self.known.clear()
        self.known[connection] = Known(state.profile_id, state.stored, trusted_until)

    def idle_state(self, connection: str, after_sequence: int | None) -> InboxState | None:
        """The state of an idle re-poll, when this process can vouch that nothing waits after
        its cursor; else None (read the database). Call after registering the waiter."""
        known = self.known.get(connection)
        if known is None or time.monotonic() >= known.trusted_until:
            return None
        latest = wakeups.registry.latest(agent_key(known.profile_id))
        cursor = known.stored if after_sequence is None else after_sequence
        if latest is None or cursor != latest:
            return None
        return InboxState(known.profile_id, known.stored, cursor, latest, None)

    def delivered(self, receipt: Receipt) -> None:
        known = self.known.get(receipt.connection)
        if known is not None and known.profile_id == receipt.profile_id:
            known.stored = max(known.stored, receipt.sequence)

    def wait_budget(self, profile_id: int, cursor: int, timeout_s: int) -> tuple[float, str | None]:
        if timeout_s > 0:
            return timeout_s * (1 - random.uniform(0, TIMEOUT_JITTER)), None
        last = self.zero_polls.get(profile_id)
        if last and last[0] == cursor and time.monotonic() - last[1] < REPEAT_WINDOW_S:
            return REPEAT_MIN_WAIT_S, BUSY_LOOP_NOTE
        return 0.0, None

    def zero_poll(self, profile_id: int, cursor: int) -> None:
        now = time.monotonic()
        if len(self.zero_polls) > 10_000:
            stale = [k for k, (_c, t) in self.zero_polls.items() if now - t > REPEAT_WINDOW_S]
            for key in stale:
                del self.zero_polls[key]
        self.zero_polls[profile_id] = (cursor, now)


memory = InboxMemory()


# ---------------------------------------------------------------------------------------------
# Reading (in a database thread)


def read_inbox(*, profile_id: int, after_sequence: int, limit: int) -> InboxPage:
    entries = list(
        InboxEntry.objects.filter(recipient_id=profile_id, sequence__gt=after_sequence)
        .select_related("message__sender", "message__channel")
        .order_by("sequence")[: limit + 1]
    )
    page = [entry.as_dict() for entry in entries[:limit]]
    last = page[-1]["sequence"] if page else after_sequence
    return InboxPage(page, last, has_more=len(entries) > limit)


def page_from_hints(hints: list[dict], cursor: int, limit: int) -> InboxPage | None:
    """The page the hints make, if they continue `cursor` without a gap; else None (re-read).

    Sequences are handed out under the recipient's row lock, held until commit, so entries
    commit in sequence order: the one after `cursor` is exactly cursor + 1."""
    by_sequence = {h["sequence"]: h for h in hints if h["sequence"] > cursor}
    run: list[dict] = []
    while cursor + len(run) + 1 in by_sequence:
        run.append(by_sequence[cursor + len(run) + 1])
    if not run:
        return None
    page = run[:limit]
    more = len(by_sequence) > len(page)
    return InboxPage(page, page[-1]["sequence"], has_more=more)


def start_cursor(profile: AgentProfile, after_sequence: int | None) -> int:
    """Where a wait starts: the given after_sequence, or the stored cursor."""
    if after_sequence is None:
        return profile.last_delivered_sequence
    if after_sequence > profile.last_inbox_sequence:
        raise Invalid(
            f"after_sequence: {after_sequence} is beyond your latest message "
            f"({profile.last_inbox_sequence}); pass the last sequence you processed",
            field="after_sequence",
        )
    return after_sequence


def open_inbox(
    *, load_profile: ProfileLoader, after_sequence: int | None, limit: int
) -> tuple[InboxState, InboxPage]:
    """The first read of a wait, in one database hop: the profile (and whatever
    `load_profile` checks, e.g. the token), the cursor, and the entries after it. Runs after the
    waiter registered, so the profile's last_inbox_sequence is fresh: when it is not beyond the
    cursor there is nothing to read, and anything later wakes the waiter."""
    profile, access_ends_at = load_profile()
    cursor = start_cursor(profile, after_sequence)
    state = InboxState(
        profile.pk,
        profile.last_delivered_sequence,
        cursor,
        profile.last_inbox_sequence,
        access_ends_at,
    )
    if profile.last_inbox_sequence <= cursor:
        return state, InboxPage([], cursor)
    return state, read_inbox(profile_id=profile.pk, after_sequence=cursor, limit=limit)


def record_delivered(*, profile_id: int, sequence: int) -> None:
    """Move the stored cursor forward (never back). Call only once the response that carried
    messages up to `sequence` was completely written."""
    AgentProfile.objects.filter(pk=profile_id, last_delivered_sequence__lt=sequence).update(
        last_delivered_sequence=sequence
    )


# ---------------------------------------------------------------------------------------------
# Waiting (on the event loop)


async def wait_for_messages(
    *,
    connection: str,
    load_profile: ProfileLoader,
    after_sequence: int | None = None,
    timeout_s: int = MAX_WAIT_S,
    limit: int = MAX_BATCH,
    client: DisconnectWatcher | None = None,
) -> tuple[InboxPage, Receipt | None]:
    """Messages after the cursor, as soon as one arrives, or none after ~timeout_s.

    `connection` is the caller's stable token key; `load_profile` loads its profile in a
    database thread (and checks its access). With `client`, the wait ends at once when the
    client leaves (the page is then for nobody). The caller writes the page and then, only if
    the write completed, passes the Receipt (None: the cursor stays) to confirm_delivery.
    """
    try:
        waiter, state, page = await open_wait(connection, load_profile, after_sequence, limit)
    except DomainError:
        memory.forget(connection)
        raise
    try:
        budget, note = memory.wait_budget(state.profile_id, state.cursor, timeout_s)
        if client is not None:
            if client.disconnected:
                return page, None
            client.on_disconnect(waiter.wake)
        if not page.messages and budget > 0:
            page = await wait_loop(waiter, state, budget, limit, client)
        if timeout_s == 0 and not page.messages:
            memory.zero_poll(state.profile_id, state.cursor)
        page.note = note
    finally:
        wakeups.registry.unregister(waiter)
    if page.next_after_sequence <= state.stored:
        return page, None
    return page, Receipt(state.profile_id, page.next_after_sequence, connection)


async def open_wait(
    connection: str, load_profile: ProfileLoader, after_sequence: int | None, limit: int
) -> tuple[Waiter, InboxState, InboxPage]:
    """Register the waiter under the connection's profile, then make the first read.

    Registering first means no wake-up can slip between the read and the wait. The profile is
    the one this process remembers for the connection; when the read finds another (a stale
    memory), the waiter moves to it and reads again."""
    profile_id = memory.profile_id(connection)
    if profile_id is None:
        profile_id = (await run_sync(load_profile))[0].pk
    for _attempt in range(2):
        key = agent_key(profile_id)
        waiter = wakeups.registry.register([key])
        try:
            idle = memory.idle_state(connection, after_sequence)
            if idle is not None and idle.profile_id == profile_id:
                return waiter, idle, InboxPage([], idle.cursor)
            generation = wakeups.registry.generation
            state, page = await run_sync(
                open_inbox, load_profile=load_profile, after_sequence=after_sequence, limit=limit
            )
        except BaseException:
            wakeups.registry.unregister(waiter)
            raise
        memory.remember(connection, state)
        if state.profile_id == profile_id:
            wakeups.registry.confirm(key, state.latest, generation)
            return waiter, state, page
        wakeups.registry.unregister(waiter)
        profile_id = state.profile_id
    raise RuntimeError(f"the profile of connection {connection!r} keeps changing")


async def wait_loop(
    waiter: Waiter,
    state: InboxState,
    budget: float,
    limit: int,
    client: DisconnectWatcher | None,
) -> InboxPage:
    """Park until a wake-up brings messages after the cursor, the budget runs out, or the
    client leaves. A wake-up's hints answer without a read when they continue the cursor."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + budget
    cursor = state.cursor
    page = InboxPage([], cursor)
    while not page.messages:
        remaining = deadline - loop.time()
        if remaining <= 0 or not await waiter.wait(remaining):
            break
        if client is not None and client.disconnected:
            break
        hinted = page_from_hints(wakeups.registry.take_hints(waiter), cursor, limit)
        if hinted is None:
            page = await run_sync(
                read_inbox, profile_id=state.profile_id, after_sequence=cursor, limit=limit
            )
        else:
            page = hinted
    return page


async def confirm_delivery(receipt: Receipt | None) -> None:
    """Call once the page that carried `receipt` was completely written: the stored cursor
    moves. A page that was not written never gets here, so its messages come again."""
    if receipt is None:
        return
    await run_sync(record_delivered, profile_id=receipt.profile_id, sequence=receipt.sequence)
    memory.delivered(receipt)
