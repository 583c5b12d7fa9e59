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
import math
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime

from django.utils import timezone

from osfoundry import wakeups
from osfoundry.auth import Unauthenticated
from osfoundry.dbthreads import run_sync
from osfoundry.disconnect import DisconnectWatcher
from osfoundry.errors import DomainError, Invalid
from osfoundry.schemas import MAX_PAGE, MAX_WAIT_S
from osfoundry.wakeups import Waiter

from . import presence
from .idle import InboxState, memory
from .models import AgentProfile, InboxEntry, agent_key
from .sequences import sequences


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


# load_profile() gives the caller's profile and when the caller's access ends (None: never).
ProfileLoader = Callable[[], tuple[AgentProfile, datetime | None]]
# check_access() checks the caller's principal (its token and person) against the database now
# and gives when its access ends (None: never); it raises when access ended (Unauthenticated).
AccessCheck = Callable[[], datetime | None]


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


def reopen_inbox(
    *, load_profile: ProfileLoader, profile_id: int, cursor: int, limit: int
) -> InboxPage:
    """A parked wait's read after a wake-up whose hints do not make the page (none came: another
    process's large message, an access change, a resubscription; or they left a gap): access
    first (`load_profile` raises when it ended: the token revoked or deleted, the user
    deactivated, the profile gone), then the entries after the cursor."""
    profile, _access_ends_at = load_profile()
    if profile.pk != profile_id:
        return InboxPage([], cursor)  # the connection has another profile now: poll again
    return read_inbox(profile_id=profile_id, after_sequence=cursor, limit=limit)


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
    check_access: AccessCheck,
    after_sequence: int | None = None,
    timeout_s: int = MAX_WAIT_S,
    limit: int = MAX_PAGE,
    client: DisconnectWatcher | None = None,
) -> tuple[InboxPage, Receipt | None]:
    """Messages after the cursor, as soon as one arrives, or none after ~timeout_s.

    `connection` is the caller's stable token key; `load_profile` loads its profile in a
    database thread (and checks its access); `check_access` checks only its access, where the
    wait trusts what this process remembers of the inbox: when it parks on that memory and
    before it hands over what a wake-up carried. With `client`, the wait ends at once when the
    client leaves (the page is then for nobody). The caller writes the page and then, only if
    the write completed, passes the Receipt (None: the cursor stays) to confirm_delivery.
    When the caller's access ends while it waits, the wait ends with Unauthenticated (or the
    error `load_profile` raises) instead of a page.
    """
    try:
        waiter, state, page = await open_wait(
            connection, load_profile, check_access, after_sequence, limit
        )
    except DomainError:
        memory.forget(connection)
        raise
    try:
        budget, note = memory.wait_budget(state.profile_id, state.cursor, timeout_s)
        budget = min(budget, seconds_until(state.access_ends_at))
        # Presence: the agent listens until this wait ends (at once when messages are waiting).
        await presence.note_wait(state.profile_id, 0.0 if page.messages else max(budget, 0.0))
        if client is not None:
            if client.disconnected:
                return page, None
            client.on_disconnect(waiter.wake)
        if not page.messages and budget > 0:
            page = await wait_loop(waiter, state, load_profile, check_access, budget, limit, client)
        if not page.messages and seconds_until(state.access_ends_at) <= 0:
            raise Unauthenticated("This token expired while the call waited; use a valid token")
        if timeout_s == 0 and not page.messages:
            memory.zero_poll(state.profile_id, state.cursor)
        page.note = note
    except DomainError:
        memory.forget(connection)
        raise
    finally:
        wakeups.registry.unregister(waiter)
    if page.next_after_sequence <= state.stored:
        return page, None
    return page, Receipt(state.profile_id, page.next_after_sequence, connection)


async def open_wait(
    connection: str,
    load_profile: ProfileLoader,
    check_access: AccessCheck,
    after_sequence: int | None,
    limit: int,
) -> tuple[Waiter, InboxState, InboxPage]:
    """Register the waiter under the connection's profile, then make the first read (or, for
    an idle re-poll, check only access).

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
                # The wake-ups vouch for the inbox, never for who may read it: access can end
                # without any (a user deactivated with QuerySet.update()), so it is read here.
                idle = replace(idle, access_ends_at=await run_sync(check_access))
                return waiter, idle, InboxPage([], idle.cursor)
            generation = sequences.generation
            state, page = await run_sync(
                open_inbox, load_profile=load_profile, after_sequence=after_sequence, limit=limit
            )
        except BaseException:
            wakeups.registry.unregister(waiter)
            raise
        memory.remember(connection, state)
        if state.profile_id == profile_id:
            sequences.confirm(key, state.latest, generation)
            return waiter, state, page
        wakeups.registry.unregister(waiter)
        profile_id = state.profile_id
    raise RuntimeError(f"the profile of connection {connection!r} keeps changing")


async def wait_loop(
    waiter: Waiter,
    state: InboxState,
    load_profile: ProfileLoader,
    check_access: AccessCheck,
    budget: float,
    limit: int,
    client: DisconnectWatcher | None,
) -> InboxPage:
    """Park until a wake-up brings messages after the cursor, the budget runs out, or the
    client leaves. Whatever a wake-up brings is handed over only after access was checked
    again: a wake-up's hints make the page without a read when they continue the cursor;
    otherwise the wait reads the profile and its inbox again (reopen_inbox)."""
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
        hints = wakeups.registry.take_hints(waiter)
        hinted = page_from_hints(hints, cursor, limit) if hints else None
        if hinted is not None:
            # A send wakes its recipients whoever they are now: one deactivated without a
            # signal would otherwise be handed the message.
            await run_sync(check_access)
            page = hinted
        else:
            page = await run_sync(
                reopen_inbox,
                load_profile=load_profile,
                profile_id=state.profile_id,
                cursor=cursor,
                limit=limit,
            )
    return page


def seconds_until(moment: datetime | None) -> float:
    """Seconds until `moment` (infinite for None): how long access lasts."""
    if moment is None:
        return math.inf
    return (moment - timezone.now()).total_seconds()


async def confirm_delivery(receipt: Receipt | None) -> None:
    """Call once the page that carried `receipt` was completely written: the stored cursor
    moves. A page that was not written never gets here, so its messages come again."""
    if receipt is None:
        return
    await run_sync(record_delivered, profile_id=receipt.profile_id, sequence=receipt.sequence)
    memory.delivered(receipt.connection, receipt.profile_id, receipt.sequence)
