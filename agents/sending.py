"""Sending: direct messages and channel posts, with the addressing rules of seed 004.

Handles in `to` are addressed deliberately (an osFoundry agent addressed there may start a run);
an @mention in the body only lands in the mentioned agent's inbox. Each send says who received
it, who was skipped and why; a retry with the same idempotency key never sends twice.
"""

import re
import uuid
from dataclasses import dataclass

from django.db import transaction

from osfoundry import wakeups
from osfoundry.errors import Invalid, NotFound, refuse
from osfoundry.idempotency import IdempotentRequest, canonical_hash
from osfoundry.text import text_problems

from . import feed
from .mentions import mentioned_handles
from .models import AgentProfile, Channel, InboxEntry, Message, MessageKey, agent_key
from .services import profiles_visible_to
from .tokens import connection_projects

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

    @classmethod
    def replayed(cls, message: Message) -> "SendResult":
        """The original result of a send, for a retry with the same key and arguments."""
        entries = message.deliveries.select_related("recipient").order_by("pk")
        delivered = [
            {"handle": e.recipient.handle, "via": e.via, "started": e.starts_run} for e in entries
        ]
        return cls(message, delivered, message.skipped, replay=True)

    def as_dict(self) -> dict:
        data: dict = {
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
    # A handle that is no one's is stored with the skipped ones: it must be text we can store.
    refuse(text_problems(to, field="to", what="handles"))
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
    # What a reader sees must be what was sent (bidirectional controls, invisible controls),
    # and PostgreSQL text holds no NUL, nor UTF-8 a lone surrogate.
    refuse(text_problems(body, field="body", what="message"))


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
    if channel:  # a member whose token is confined to another project is not reached here
        confined = connection_projects(p.connection_key for p in found.values())
        found = {
            h: p
            for h, p in found.items()
            if confined.get(p.connection_key or "", channel.project_id) == channel.project_id
        }
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
    confined = connection_projects([profile.connection_key])  # a project-scoped token
    if confined:
        mine = mine.filter(project_id__in=confined.values())
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
            or (root.channel is not None and root.channel.members.filter(pk=sender.pk).exists())
            # A person reads (and so may answer) their own agents' direct threads.
            or (
                sender.is_person
                and root.channel is None
                and (
                    root.sender.owner_id == sender.owner_id
                    or root.deliveries.filter(recipient__owner_id=sender.owner_id).exists()
                )
            )
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
            + (f"#{root.channel.name}" if root.channel is not None else "direct messages")
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
    request = send_request(
        sender,
        "send_agent_message",
        idempotency_key,
        {"op": "direct", "to": handles, "body": body, "thread_root_id": thread_root_id},
    )
    if (previous := request.previous()) is not None:
        return SendResult.replayed(previous)
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
    fields = {"body": body, "thread_root": root, "to_handles": handles}
    return request.store(
        lambda: insert_message(sender=sender, request=request, fields=fields, routing=routing),
        SendResult.replayed,
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
    request = send_request(
        sender,
        "send_channel_message",
        idempotency_key,
        {
            "op": "channel",
            "channel": str(found.pk),
            "to": handles,
            "body": body,
            "thread_root_id": thread_root_id,
        },
    )
    if (previous := request.previous()) is not None:
        return SendResult.replayed(previous)
    check_body(body)
    root = get_thread_root(sender, thread_root_id, found) if thread_root_id else None
    routing = route_message(sender=sender, to=handles, body=body, channel=found)
    fields = {"body": body, "thread_root": root, "to_handles": handles, "channel": found}
    return request.store(
        lambda: insert_message(sender=sender, request=request, fields=fields, routing=routing),
        SendResult.replayed,
    )


def send_request(
    sender: AgentProfile, operation: str, key: str, arguments: dict
) -> IdempotentRequest[Message]:
    return IdempotentRequest(
        MessageKey, {"sender": sender}, operation, key, canonical_hash(arguments)
    )


@transaction.atomic
def insert_message(
    *, sender: AgentProfile, request: IdempotentRequest[Message], fields: dict, routing: Routing
) -> SendResult:
    message = Message.objects.create(sender=sender, skipped=routing.skipped, **fields)
    # The key goes in before any recipient is locked: a concurrent twin stops here.
    request.record(message)
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
    # The entries ride along with the wake-up, so a parked recipient in this process can answer
    # without reading them back.
    hints = {agent_key(e.recipient_id): [e.as_dict()] for e in entries}
    if hints:
        transaction.on_commit(lambda: wakeups.notify(list(hints), hints))
    transaction.on_commit(lambda: feed.publish_message(message.pk))
    return SendResult(message, delivered, routing.skipped)
