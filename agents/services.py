"""Agents' credentials and the rules of the message network: profiles, addressing, sends and
the long-poll inbox. Every interface (MCP tools, REST, the lean long-poll route) calls these."""

import asyncio
import random
import re
import secrets
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db import IntegrityError, transaction
from django.db.models import Q
from django.utils import timezone

from osfoundry.auth import PAT_PREFIX, SCOPES, hash_token
from osfoundry.errors import Conflict, DomainError, Forbidden, Invalid, NotFound
from osfoundry.mcp.tooling import run_sync
from rooms.models import Project
from rooms.services import canonical_hash

from . import wakeups
from .mentions import mentioned_handles
from .models import AccessToken, AgentProfile, Channel, InboxEntry, Message, MessageKey


def parse_scopes(scopes: str) -> str:
    wanted = scopes.replace(",", " ").split()
    unknown = [scope for scope in wanted if scope not in SCOPES]
    if unknown or not wanted:
        raise Invalid(
            f"scopes: {' '.join(unknown) or '(none)'} not valid; use any of {' '.join(SCOPES)}",
            field="scopes",
        )
    return " ".join(scope for scope in SCOPES if scope in wanted)


def create_access_token(*, user, scopes: str, name: str = "") -> tuple[AccessToken, str]:
    """Create a token and return it with its secret, which is shown once and never stored."""
    raw = PAT_PREFIX + secrets.token_urlsafe(32)
    token = AccessToken.objects.create(
        user=user,
        name=name[:200],
        prefix=raw[:10],
        token_hash=hash_token(raw),
        scopes=parse_scopes(scopes),
    )
    return token, raw


def revoke_access_token(*, token: AccessToken) -> None:
    AccessToken.objects.filter(pk=token.pk, revoked_at__isnull=True).update(
        revoked_at=timezone.now()
    )
    access_token_changed(token=token)


def access_token_changed(*, token: AccessToken) -> None:
    """Call after revoking a token or changing its expiry: every process stops trusting what it
    remembered of the token's long-polls (see IDLE_RECHECK_S), so the next one checks it."""
    profiles = AgentProfile.objects.filter(connection_key=f"pat:{token.pk}")
    keys = [wakeups.agent_key(pk) for pk in profiles.values_list("pk", flat=True)]
    if keys:
        transaction.on_commit(lambda: wakeups.notify(keys))


# ---------------------------------------------------------------------------------------------
# Profiles

HANDLE_PATTERN = r"^[a-z0-9][a-z0-9-]{1,30}$"
RESERVED_HANDLES = ("maestro", "direct", "all", "everyone", "here", "channel")
_HANDLE_RE = re.compile(HANDLE_PATTERN)


def handle_problem(handle: str) -> str | None:
    """Why `handle` cannot be claimed, or None; each answer says how to fix it."""
    if not 2 <= len(handle) <= 31:
        return f"{len(handle)} characters; use 2–31 characters"
    if handle != handle.lower():
        return f"use lowercase only, e.g. {handle.lower()!r}"
    if not re.match(r"[a-z0-9]", handle):
        return "must start with a lowercase letter or a digit"
    if not _HANDLE_RE.match(handle):
        bad = sorted({ch for ch in handle if not re.match(r"[a-z0-9-]", ch)})
        return f"only lowercase letters, digits and hyphens; remove {', '.join(map(repr, bad))}"
    if handle in RESERVED_HANDLES:
        return f"{handle!r} is reserved ({', '.join(RESERVED_HANDLES)}); pick another"
    return None


@dataclass(frozen=True)
class ClaimResult:
    profile: AgentProfile
    created: bool = False
    previous_handle: str | None = None  # set when this connection renamed its profile


def claim_connected_profile(*, user, connection_key: str, handle: str) -> ClaimResult:
    """Claim `handle` for the caller's connection (one profile per token); claiming again with
    another handle renames the profile and frees the old handle."""
    problem = handle_problem(handle)
    if problem:
        raise Invalid(f"handle: {problem}", code="invalid_handle", field="handle")
    current = AgentProfile.objects.filter(connection_key=connection_key).first()
    if current is not None and current.handle == handle:
        return ClaimResult(current)
    taken = AgentProfile.objects.filter(handle=handle).exclude(pk=getattr(current, "pk", None))
    if taken.exists():
        raise handle_taken(handle)
    try:
        with transaction.atomic():
            if current is None:
                profile = AgentProfile.objects.create(
                    handle=handle, owner=user, connection_key=connection_key
                )
                return ClaimResult(profile, created=True)
            previous = current.handle
            AgentProfile.objects.filter(pk=current.pk).update(handle=handle)
    except IntegrityError:
        # A concurrent claim won the unique handle (or this connection's first claim).
        current = AgentProfile.objects.filter(connection_key=connection_key).first()
        if current is not None and current.handle == handle:
            return ClaimResult(current)
        raise handle_taken(handle) from None
    current.handle = handle
    return ClaimResult(current, previous_handle=previous)


def handle_taken(handle: str) -> Conflict:
    return Conflict(
        f"handle: {handle!r} is already taken; pick another, e.g. {handle[:29]}-2",
        code="handle_taken",
        field="handle",
    )


def get_connected_profile(*, connection_key: str) -> AgentProfile:
    found = next(iter(AgentProfile.objects.filter(connection_key=connection_key)[:1]), None)
    if found is None:
        raise NotFound(
            "This connection has no handle yet: call claim_connected_profile first",
            code="no_profile",
        )
    return found


def profiles_visible_to(profile: AgentProfile):
    """Profiles `profile` may address: its owner's agents and those of people it shares a
    project with. Others do not exist as far as it can tell."""
    projects = Project.objects.filter(members=profile.owner_id)
    return AgentProfile.objects.filter(
        Q(owner_id=profile.owner_id) | Q(owner__projects__in=projects)
    ).distinct()


# ---------------------------------------------------------------------------------------------
# Sending

MAX_BODY_CHARS = 20_000
MAX_RECIPIENTS = 20

UNKNOWN_HANDLE = "unknown_handle"
NOT_REACHABLE = "not_reachable"
NOT_PERMITTED = "not_permitted"
SELF = "self"


@dataclass
class SendResult:
    message: Message
    delivered: list[dict]
    skipped: list[dict]
    replay: bool = False
    stored_at: float | None = None  # time.time() right after commit, before any wake-up

    def as_dict(self) -> dict:
        data = {
            "message_id": str(self.message.pk),
            "delivered": self.delivered,
            "skipped": self.skipped,
            "thread_root_id": str(self.message.thread_root_id or self.message.pk),
        }
        if self.message.channel_id:
            data["channel_id"] = str(self.message.channel_id)
        if self.replay:
            data["replay"] = True
        return data


@dataclass
class Routing:
    """Who gets a message: (profile, via, starts_run) in order, and who was skipped."""

    deliveries: list[tuple[AgentProfile, str, bool]]
    skipped: list[dict]


def parse_to(to: str) -> list[str]:
    handles: list[str] = []
    for part in re.split(r"[\s,;]+", to.strip()):
        handle = part.removeprefix("@").lower()
        if handle and handle not in handles:
            handles.append(handle)
    if len(handles) > MAX_RECIPIENTS:
        raise Invalid(
            f"to: {len(handles)} handles, at most {MAX_RECIPIENTS}; post to a channel instead",
            field="to",
        )
    return handles


def check_body(body: str) -> None:
    if not body.strip():
        raise Invalid("body: must not be empty; write the message", field="body")
    if len(body) > MAX_BODY_CHARS:
        raise Invalid(
            f"body: {len(body)} characters, at most {MAX_BODY_CHARS}; split the message",
            field="body",
        )


def skip(handle: str, reason: str, detail: str, via: str) -> dict:
    return {"handle": handle, "via": via, "reason": reason, "detail": detail}


def route_message(
    *, sender: AgentProfile, to: list[str], body: str, channel: Channel | None
) -> Routing:
    """Apply the addressing rules. `to` is deliberate: it may start an osFoundry agent's run.
    A body @mention only lands in the mentioned agent's inbox: it starts nothing."""
    mentions = [h for h in mentioned_handles(body) if h not in to and h != sender.handle]
    wanted = to + mentions
    pool = channel.members.all() if channel else profiles_visible_to(sender)
    found = {p.handle: p for p in pool.filter(handle__in=wanted)}
    visible = (
        set(profiles_visible_to(sender).filter(handle__in=wanted).values_list("handle", flat=True))
        if channel
        else set(found)
    )
    routing = Routing([], [])
    where = f"#{channel.name}" if channel else "direct messages"
    for handle in wanted:
        via = InboxEntry.Via.TO if handle in to else InboxEntry.Via.MENTION
        profile = found.get(handle)
        if handle == sender.handle:
            routing.skipped.append(skip(handle, SELF, "that is your own handle", via))
        elif profile is None and channel and handle in visible:
            routing.skipped.append(
                skip(handle, NOT_PERMITTED, f"not a member of {where}; ask an admin", via)
            )
        elif profile is None:
            routing.skipped.append(
                skip(handle, UNKNOWN_HANDLE, "no agent you can reach has this handle", via)
            )
        elif not profile.is_reachable:
            routing.skipped.append(
                skip(handle, NOT_REACHABLE, "this agent is not reachable now; try later", via)
            )
        elif via == InboxEntry.Via.TO and profile.is_osfoundry:
            if profile.owner_id == sender.owner_id or (
                channel and profile.accepts_replies_in_channels
            ):
                routing.deliveries.append((profile, via, True))
            else:
                detail = (
                    f"an osFoundry agent of another person; it does not take requests in {where}"
                )
                routing.skipped.append(skip(handle, NOT_PERMITTED, detail, via))
        else:
            routing.deliveries.append((profile, via, False))
    return routing


def get_channel_for_profile(profile: AgentProfile, channel: str) -> Channel:
    """A channel the profile is a member of, by id or by name; NotFound otherwise."""
    mine = Channel.objects.filter(members=profile).select_related("project")
    try:
        matches = list(mine.filter(pk=uuid.UUID(channel)))
    except ValueError:
        matches = list(mine.filter(name=channel.removeprefix("#")))
    if len(matches) > 1:
        raise Invalid(
            f"channel: {channel!r} names channels in several projects; pass the channel id",
            field="channel",
        )
    if not matches:
        names = ", ".join(f"#{c.name} ({c.pk})" for c in mine[:10]) or "none"
        raise NotFound(
            f"channel {channel!r} not found among your channels; yours: {names}", field="channel"
        )
    return matches[0]


def get_thread_root(sender: AgentProfile, thread_root_id: str, channel: Channel | None):
    try:
        pk = uuid.UUID(thread_root_id)
    except ValueError:
        pk = None
    root = Message.objects.filter(pk=pk).first() if pk else None
    if root is not None:
        can_see = (
            root.sender_id == sender.pk
            or root.deliveries.filter(recipient=sender).exists()
            or (root.channel_id and root.channel.members.filter(pk=sender.pk).exists())
        )
        root = root if can_see else None
    if root is None:
        raise NotFound(
            f"thread_root_id {thread_root_id!r}: no message you sent or received has this id",
            field="thread_root_id",
        )
    if root.channel_id != getattr(channel, "pk", None):
        raise Invalid(
            "thread_root_id: the thread belongs to "
            + (f"#{root.channel.name}" if root.channel_id else "direct messages")
            + "; reply where it started",
            field="thread_root_id",
        )
    return root.thread_root if root.thread_root_id else root


def send_agent_message(
    *,
    sender: AgentProfile,
    to: str,
    body: str,
    idempotency_key: str,
    thread_root_id: str | None = None,
) -> SendResult:
    """A direct message to the handles in `to` (and a notice to any it @mentions)."""
    handles = parse_to(to)
    request = {"op": "direct", "to": handles, "body": body, "thread_root_id": thread_root_id}
    request_hash = canonical_hash(request)
    previous = find_message_replay(sender, "send_agent_message", idempotency_key, request_hash)
    if previous:
        return previous
    if not handles:
        raise Invalid("to: name at least one handle, e.g. 'bob-codex'", field="to")
    check_body(body)
    root = get_thread_root(sender, thread_root_id, None) if thread_root_id else None
    routing = route_message(sender=sender, to=handles, body=body, channel=None)
    if not any(via == InboxEntry.Via.TO for _p, via, _s in routing.deliveries):
        reasons = "; ".join(
            f"{s['handle']}: {s['detail']}" for s in routing.skipped if s["via"] == "to"
        )
        raise NotFound(
            f"to: nobody in `to` can receive this message ({reasons}); nothing was sent",
            code="no_recipient",
            field="to",
        )
    return store_message(
        sender=sender,
        operation="send_agent_message",
        key=idempotency_key,
        request_hash=request_hash,
        fields={"body": body, "thread_root": root, "to_handles": handles},
        routing=routing,
    )


def send_channel_message(
    *,
    sender: AgentProfile,
    channel: str,
    body: str,
    idempotency_key: str,
    to: str = "",
    thread_root_id: str | None = None,
) -> SendResult:
    """Post to a channel. Handles in `to` are addressed deliberately; an @mention in the body
    reaches that member's wait_for_messages but wakes nobody."""
    found = get_channel_for_profile(sender, channel)
    handles = parse_to(to)
    request = {
        "op": "channel",
        "channel": str(found.pk),
        "to": handles,
        "body": body,
        "thread_root_id": thread_root_id,
    }
    request_hash = canonical_hash(request)
    previous = find_message_replay(sender, "send_channel_message", idempotency_key, request_hash)
    if previous:
        return previous
    check_body(body)
    root = get_thread_root(sender, thread_root_id, found) if thread_root_id else None
    routing = route_message(sender=sender, to=handles, body=body, channel=found)
    return store_message(
        sender=sender,
        operation="send_channel_message",
        key=idempotency_key,
        request_hash=request_hash,
        fields={"body": body, "thread_root": root, "to_handles": handles, "channel": found},
        routing=routing,
    )


def delivered_list(message: Message) -> list[dict]:
    entries = message.deliveries.select_related("recipient").order_by("pk")
    return [{"handle": e.recipient.handle, "via": e.via, "started": e.starts_run} for e in entries]


def find_message_replay(sender, operation: str, key: str, request_hash: str):
    used = (
        MessageKey.objects.select_related("message")
        .filter(sender=sender, operation=operation, key=key)
        .first()
    )
    if used is None:
        return None
    if used.request_hash != request_hash:
        raise Conflict(
            f"idempotency_key {key!r} was already used for a different message "
            f"({used.message_id}); use a new key for new content, or resend the original "
            "arguments to get the original result",
            code="idempotency_key_reused",
            field="idempotency_key",
        )
    message = used.message
    return SendResult(message, delivered_list(message), message.skipped, replay=True)


def store_message(*, sender, operation, key, request_hash, fields, routing) -> SendResult:
    try:
        return insert_message(
            sender=sender,
            operation=operation,
            key=key,
            request_hash=request_hash,
            fields=fields,
            routing=routing,
        )
    except IntegrityError:
        # A concurrent request with the same key committed first: answer with its result.
        previous = find_message_replay(sender, operation, key, request_hash)
        if previous:
            return previous
        raise


@transaction.atomic
def insert_message(*, sender, operation, key, request_hash, fields, routing) -> SendResult:
    message = Message.objects.create(sender=sender, skipped=routing.skipped, **fields)
    # The key goes in before any recipient is locked: a concurrent twin stops here.
    MessageKey.objects.create(
        sender=sender, operation=operation, key=key, request_hash=request_hash, message=message
    )
    ids = sorted(p.pk for p, _via, _starts in routing.deliveries)
    # Lock recipients in id order, so two sends to overlapping recipients cannot deadlock.
    locked = {p.pk: p for p in AgentProfile.objects.select_for_update().filter(pk__in=ids)}
    entries = []
    for profile, via, starts in routing.deliveries:
        recipient = locked[profile.pk]
        recipient.last_inbox_sequence += 1
        entries.append(
            InboxEntry(
                recipient=recipient,
                sequence=recipient.last_inbox_sequence,
                message=message,
                via=via,
                starts_run=starts,
            )
        )
    AgentProfile.objects.bulk_update(locked.values(), ["last_inbox_sequence"])
    InboxEntry.objects.bulk_create(entries)
    delivered = [
        {"handle": p.handle, "via": via, "started": starts} for p, via, starts in routing.deliveries
    ]
    result = SendResult(message, delivered, routing.skipped)
    transaction.on_commit(lambda: setattr(result, "stored_at", time.time()))
    # The entries ride along with the wake-up, so a parked recipient in this process can answer
    # without reading them back.
    hints = {wakeups.agent_key(e.recipient_id): [inbox_entry_dict(e)] for e in entries}
    if hints:
        transaction.on_commit(lambda: wakeups.notify(list(hints), hints))
    return result


# ---------------------------------------------------------------------------------------------
# Channels (admins create them; members are agents whose owners belong to the project)


@transaction.atomic
def create_channel(*, project: Project, name: str, members=()) -> Channel:
    channel = Channel.objects.create(project=project, name=name)
    for profile in members:
        add_channel_member(channel=channel, profile=profile)
    return channel


def add_channel_member(*, channel: Channel, profile: AgentProfile) -> None:
    if not channel.project.members.filter(pk=profile.owner_id).exists():
        raise Forbidden(
            f"{profile.handle}'s owner is not a member of project {channel.project.name!r}; "
            "add them to the project first"
        )
    channel.members.add(profile)


# ---------------------------------------------------------------------------------------------
# Receiving: the long-poll inbox
#
# A client that passes after_sequence = the last sequence it *processed* gets at-least-once
# delivery in every case: whatever it did not finish comes again. Without after_sequence the
# call resumes from the stored cursor, which moves only after a response was completely written
# (see record_delivered), so a dropped connection loses nothing either; what it cannot know is
# whether the client processed what it received.

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

_zero_polls: dict[int, tuple[int, float]] = {}


@dataclass(slots=True)
class InboxPage:
    messages: list[dict]
    next_after_sequence: int
    has_more: bool = False
    note: str | None = None
    client_gone: bool = False  # the client left while parked: write nothing, store nothing
    advances: bool = False  # once written, the stored cursor moves to next_after_sequence
    profile_id: int | None = None
    connection: str | None = None

    def as_dict(self) -> dict:
        data = {
            "messages": self.messages,
            "next_after_sequence": self.next_after_sequence,
            "has_more": self.has_more,
        }
        if self.note:
            data["note"] = self.note
        return data


def inbox_entry_dict(entry: InboxEntry) -> dict:
    message = entry.message
    data = {
        "sequence": entry.sequence,
        "message_id": str(message.pk),
        "from": message.sender.handle,
        "via": entry.via,
        "to": message.to_handles,
        "body": message.body,
        "thread_root_id": str(message.thread_root_id or message.pk),
        "created_at": message.created_at.isoformat(),
    }
    if message.channel_id:
        data["channel"] = {"id": str(message.channel_id), "name": message.channel.name}
    if entry.starts_run:
        data["started"] = True
    return data


def read_inbox(*, profile_id: int, after_sequence: int, limit: int) -> InboxPage:
    entries = list(
        InboxEntry.objects.filter(recipient_id=profile_id, sequence__gt=after_sequence)
        .select_related("message__sender", "message__channel")
        .order_by("sequence")[: limit + 1]
    )
    page = [inbox_entry_dict(entry) for entry in entries[:limit]]
    last = page[-1]["sequence"] if page else after_sequence
    return InboxPage(page, last, has_more=len(entries) > limit)


def page_from_hints(hints: list[dict], cursor: int, limit: int) -> InboxPage | None:
    """The page the hints make, if they continue `cursor` without a gap; else None (re-read).

    Sequences are handed out under the recipient's row lock, held until commit, so entries
    commit in sequence order: the one after `cursor` is exactly cursor + 1."""
    by_sequence = {h["sequence"]: h for h in hints if h["sequence"] > cursor}
    run = []
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


def record_delivered(*, profile_id: int, sequence: int) -> None:
    """Move the stored cursor forward (never back). Call only once the response that carried
    messages up to `sequence` was completely written."""
    AgentProfile.objects.filter(pk=profile_id, last_delivered_sequence__lt=sequence).update(
        last_delivered_sequence=sequence
    )


def wait_budget(profile_id: int, cursor: int, timeout_s: int) -> tuple[float, str | None]:
    if timeout_s > 0:
        return timeout_s * (1 - random.uniform(0, TIMEOUT_JITTER)), None
    last = _zero_polls.get(profile_id)
    if last and last[0] == cursor and time.monotonic() - last[1] < REPEAT_WINDOW_S:
        return REPEAT_MIN_WAIT_S, BUSY_LOOP_NOTE
    return 0.0, None


def remember_zero_poll(profile_id: int, cursor: int) -> None:
    now = time.monotonic()
    if len(_zero_polls) > 10_000:
        for stale in [k for k, (_c, t) in _zero_polls.items() if now - t > REPEAT_WINDOW_S]:
            del _zero_polls[stale]
    _zero_polls[profile_id] = (cursor, now)


class ProfileMoved(Exception):
    """The connection's profile is not the one the waiter registered for (a stale cache)."""

    def __init__(self, profile_id: int):
        super().__init__(profile_id)
        self.profile_id = profile_id


# load_profile() gives the caller's profile and when the caller's access ends (None: never).
ProfileLoader = Callable[[], tuple[AgentProfile, datetime | None]]


@dataclass(frozen=True, slots=True)
class InboxState:
    """What the first read of a wait found; plain numbers, so a parked wait keeps no model
    instance alive."""

    profile_id: int
    stored: int  # the stored cursor
    cursor: int  # where this wait starts
    latest: int  # the profile's last inbox sequence
    access_ends_at: datetime | None


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


# An idle re-poll (nothing new since the last call) should cost a registration and a future,
# not a database hop: 20,000 agents re-polling every 50 s would otherwise keep a core busy with
# token checks that all say the same. So each process remembers, per connection, what its last
# read found (Known); a re-poll whose cursor equals the latest sequence the wake-ups vouch for
# parks without reading. The wake-ups vouch only while they cannot have been missed (see
# wakeups.Registry.latest), and the token, the profile and the cursor are read again at least
# every IDLE_RECHECK_S; revoking a token ends that trust at once (revoke_access_token).
IDLE_RECHECK_S = 300.0


@dataclass(slots=True)
class Known:
    profile_id: int
    stored: int  # the stored cursor, as read or as this process moved it since
    trusted_until: float  # time.monotonic()


_known: dict[str, Known] = {}


def remember(connection: str, state: InboxState) -> None:
    trusted_until = time.monotonic() + IDLE_RECHECK_S
    if state.access_ends_at is not None:
        remaining = (state.access_ends_at - timezone.now()).total_seconds()
        trusted_until = min(trusted_until, time.monotonic() + remaining)
    if len(_known) > 200_000:
        _known.clear()
    _known[connection] = Known(state.profile_id, state.stored, trusted_until)


def idle_state(connection: str | None, after_sequence: int | None) -> InboxState | None:
    """The state of an idle re-poll, when this process can vouch that nothing waits after its
    cursor; else None (read the database). Call after registering the waiter."""
    known = _known.get(connection) if connection else None
    if known is None or time.monotonic() >= known.trusted_until:
        return None
    latest = wakeups.registry.latest(wakeups.agent_key(known.profile_id))
    cursor = known.stored if after_sequence is None else after_sequence
    if latest is None or cursor != latest:
        return None
    return InboxState(known.profile_id, known.stored, cursor, latest, None)


async def wait_for_messages(
    *,
    profile_id: int,
    load_profile: ProfileLoader,
    connection: str | None = None,
    after_sequence: int | None = None,
    timeout_s: int = MAX_WAIT_S,
    limit: int = MAX_BATCH,
    is_disconnected: Callable[[], bool] | None = None,
    on_register: Callable[[str], None] | None = None,
) -> InboxPage:
    """Messages after the cursor, as soon as one arrives, or none after ~timeout_s.

    Parks on the event loop: a future, not a thread. `profile_id` is the caller's profile as
    last known (the wake-up key, registered before anything is read); `load_profile` loads it
    in a database thread, and ProfileMoved is raised when it differs. With `connection`, an
    idle re-poll may skip that read (see idle_state). A caller whose client may leave either
    cancels the wait or wakes the key `on_register(key)` gave it, and `is_disconnected()` then
    ends the wait. The caller writes the page and then, only if the write completed, calls
    record_page_delivered.
    """
    loop = asyncio.get_running_loop()
    key = wakeups.agent_key(profile_id)
    waiter = wakeups.registry.register([key])
    if on_register is not None:
        on_register(key)
    try:
        state = idle_state(connection, after_sequence)
        if state is not None and state.profile_id == profile_id:
            page = InboxPage([], state.cursor)
        else:
            generation = wakeups.registry.generation
            state, page = await run_sync(
                open_inbox, load_profile=load_profile, after_sequence=after_sequence, limit=limit
            )
            if state.profile_id != profile_id:
                raise ProfileMoved(state.profile_id)
            wakeups.registry.confirm(key, state.latest, generation)
            if connection is not None:
                remember(connection, state)
        cursor = state.cursor
        budget, note = wait_budget(profile_id, cursor, timeout_s)
        deadline = loop.time() + budget
        if is_disconnected is not None and is_disconnected():
            return InboxPage([], cursor, client_gone=True)
        while not page.messages:
            remaining = deadline - loop.time()
            if remaining <= 0 or not await waiter.wait(remaining):
                break
            if is_disconnected is not None and is_disconnected():
                return InboxPage([], cursor, client_gone=True)
            page = page_from_hints(wakeups.registry.take_hints(waiter), cursor, limit)
            if page is None:
                page = await run_sync(
                    read_inbox, profile_id=profile_id, after_sequence=cursor, limit=limit
                )
        if timeout_s == 0 and not page.messages:
            remember_zero_poll(profile_id, cursor)
        page.note = note
        page.profile_id = profile_id
        page.connection = connection
        page.advances = page.next_after_sequence > state.stored
        return page
    finally:
        wakeups.registry.unregister(waiter)


async def wait_for_connection(
    *, connection: str, load_profile: ProfileLoader, **arguments
) -> InboxPage:
    """wait_for_messages for the profile `load_profile` finds, knowing it from earlier calls."""
    known = _known.get(connection)
    if known is not None:
        profile_id = known.profile_id
    else:
        profile_id = (await run_sync(load_profile))[0].pk
    try:
        return await wait_for_messages(
            profile_id=profile_id, load_profile=load_profile, connection=connection, **arguments
        )
    except ProfileMoved as moved:
        return await wait_for_messages(
            profile_id=moved.profile_id,
            load_profile=load_profile,
            connection=connection,
            **arguments,
        )
    except DomainError:
        _known.pop(connection, None)
        raise


async def record_page_delivered(page: InboxPage) -> None:
    """Call once `page` was completely written to its client: the stored cursor moves."""
    if not page.advances:
        return
    sequence = page.next_after_sequence
    await run_sync(record_delivered, profile_id=page.profile_id, sequence=sequence)
    known = _known.get(page.connection) if page.connection else None
    if known is not None and known.profile_id == page.profile_id and known.stored < sequence:
        known.stored = sequence


def profile_result(result: ClaimResult) -> dict:
    data = {"handle": result.profile.handle, "kind": result.profile.kind, "created": result.created}
    if result.previous_handle:
        data["previous_handle"] = result.previous_handle
    return data


def purge_message_keys(*, older_than_days: int) -> int:
    """Forget send idempotency keys older than the retention window; messages stay."""
    cutoff = timezone.now() - timedelta(days=older_than_days)
    deleted, _ = MessageKey.objects.filter(created_at__lt=cutoff).delete()
    return deleted
