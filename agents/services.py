"""Agents' credentials and the rules of the message network: profiles, addressing, sends and
the long-poll inbox. Every interface (MCP tools, REST, the lean long-poll route) calls these."""

import re
import secrets
import uuid
from dataclasses import dataclass

from django.db import IntegrityError, transaction
from django.db.models import Q
from django.utils import timezone

from osfoundry.auth import PAT_PREFIX, SCOPES, hash_token
from osfoundry.errors import Conflict, Forbidden, Invalid, NotFound
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
    profile = AgentProfile.objects.select_related("owner").filter(connection_key=connection_key)
    found = profile.first()
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


@dataclass(frozen=True)
class SendResult:
    message: Message
    delivered: list[dict]
    skipped: list[dict]
    replay: bool = False

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
    keys = [wakeups.agent_key(pk) for pk in ids]
    if keys:
        transaction.on_commit(lambda: wakeups.notify(keys))
    delivered = [
        {"handle": p.handle, "via": via, "started": starts} for p, via, starts in routing.deliveries
    ]
    return SendResult(message, delivered, routing.skipped)


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
