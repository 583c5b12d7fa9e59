"""People in the conversation: what a person reads and writes in the console's Messages.

A person reads the channels one of their profiles (their agents' or their own) is a member of,
and the direct threads in which one of their profiles sent or received a message; anything
else is NotFound, the same for "missing" and "not yours", as for the tools. A person writes
with a handle of their own (a profile of kind "person", claimed on first use under the same
handle rules and reserved names), through the same send functions as the MCP tools and REST,
so what they write reaches agents' wait_for_messages exactly as an agent's message would.
"""

import uuid
from dataclasses import dataclass, field
from datetime import datetime

from django.db.models import Count, Q, QuerySet
from django.utils import timezone

from osfoundry.auth import User
from osfoundry.errors import NotFound

from . import sending, services
from .models import AgentProfile, Channel, Message, ReadMark

PAGE_SIZE = 30
UNREAD_CAP = 99


def person_key(user: User) -> str:
    """The connection key of a person's own profile: one per person."""
    return f"person:{user.pk}"


# ---------------------------------------------------------------------------------------------
# The person's own handle


def person_profile(user: User) -> AgentProfile | None:
    return AgentProfile.objects.filter(connection_key=person_key(user)).first()


def claim_person_handle(*, user: User, handle: str) -> services.ClaimResult:
    """Claim (or rename) the person's own handle, under the agents' handle rules."""
    return services.claim_connected_profile(
        user=user, connection_key=person_key(user), handle=handle, kind=AgentProfile.Kind.PERSON
    )


def get_person_profile(user: User) -> AgentProfile:
    found = person_profile(user)
    if found is None:
        raise NotFound(
            "handle: choose your handle before you write (2-31 characters: a-z, 0-9, -)",
            code="no_profile",
            field="handle",
        )
    return found


# ---------------------------------------------------------------------------------------------
# Access: one function per object, NotFound for missing and not yours alike


def readable_channels(user: User) -> QuerySet[Channel]:
    return (
        Channel.objects.filter(members__owner=user).distinct().select_related("project")
    ).order_by("project__name", "name")


def get_channel_for_user(user: User, channel_id) -> Channel:
    channel = readable_channels(user).filter(pk=as_uuid(channel_id)).first()
    if channel is None:
        raise NotFound("channel: not found among your channels", field="channel")
    return channel


def involving(user: User) -> Q:
    """Direct messages one of `user`'s profiles sent or received."""
    return Q(channel__isnull=True) & (Q(sender__owner=user) | Q(deliveries__recipient__owner=user))


def get_direct_thread_for_user(user: User, root_id) -> Message:
    """The root of a direct thread with a message of one of `user`'s profiles in it."""
    pk = as_uuid(root_id)
    root = (
        Message.objects.filter(pk=pk, channel__isnull=True, thread_root__isnull=True)
        .select_related("sender")
        .first()
    )
    if root is None or not thread_messages(user, root).exists():
        raise NotFound("thread: not found among your direct threads", field="thread_root_id")
    return root


def get_message_for_user(user: User, message_id) -> Message:
    """A message `user` may read (its channel is readable, or it is in one of their threads)."""
    message = Message.objects.filter(pk=as_uuid(message_id)).select_related("channel").first()
    if message is not None:
        if message.channel_id is not None:
            if readable_channels(user).filter(pk=message.channel_id).exists():
                return message
        elif Message.objects.filter(involving(user), pk=message.pk).exists():
            return message
    raise NotFound("message: not found among your messages", field="message_id")


NO_ID = uuid.UUID(int=0)  # matches no row


def as_uuid(value) -> uuid.UUID:
    """`value` as a UUID; one that is not a UUID names no message, channel or thread."""
    try:
        return value if isinstance(value, uuid.UUID) else uuid.UUID(str(value))
    except ValueError:
        return NO_ID


# ---------------------------------------------------------------------------------------------
# Reading


def channel_roots(channel: Channel) -> QuerySet[Message]:
    return Message.objects.filter(channel=channel, thread_root__isnull=True)


def thread_messages(user: User, root: Message) -> QuerySet[Message]:
    """The root and its replies as `user` may read them: all of a channel thread; of a direct
    thread, the messages one of their profiles sent or received."""
    messages = Message.objects.filter(Q(pk=root.pk) | Q(thread_root=root))
    if root.channel_id is None:
        messages = messages.filter(involving(user))
    return messages.distinct()


@dataclass
class Page:
    messages: list[Message]
    older: str | None = None  # the `before` cursor of the previous page, if there is one


def page_before(messages: QuerySet[Message], before=None, limit: int = PAGE_SIZE) -> Page:
    """The latest `limit` messages before the message `before` (an id), oldest first."""
    if before is not None:
        anchor = messages.filter(pk=as_uuid(before)).first()
        if anchor is None:
            raise NotFound("before: not a message of this conversation", field="before")
        messages = messages.filter(
            Q(created_at__lt=anchor.created_at) | Q(created_at=anchor.created_at, pk__lt=anchor.pk)
        )
    rows = list(with_details(messages).order_by("-created_at", "-pk")[: limit + 1])
    shown = rows[:limit][::-1]
    return Page(shown, older=str(shown[0].pk) if len(rows) > limit else None)


def messages_after(messages: QuerySet[Message], after) -> list[Message]:
    """Messages after the message `after` (an id), oldest first: what a live page is missing."""
    anchor = messages.filter(pk=as_uuid(after)).first() if after else None
    if anchor is not None:
        messages = messages.filter(
            Q(created_at__gt=anchor.created_at) | Q(created_at=anchor.created_at, pk__gt=anchor.pk)
        )
    return list(with_details(messages).order_by("created_at", "pk")[:PAGE_SIZE])


def with_details(messages: QuerySet[Message]) -> QuerySet[Message]:
    return (
        messages.select_related("sender", "channel")
        .prefetch_related("deliveries__recipient")
        .annotate(reply_count=Count("replies", distinct=True))
    )


@dataclass
class ThreadSummary:
    root: Message
    last_at: datetime
    count: int = 0
    unread: int = 0
    participants: list[str] = field(default_factory=list)

    @property
    def key(self) -> str:
        return thread_key(self.root)


def direct_threads(user: User, *, limit: int = 50) -> list[ThreadSummary]:
    """The user's direct threads, latest activity first, with their unread counts: three
    queries whatever the number of threads (the read marks, the messages, the roots)."""
    marks = read_marks(user)
    rows = (
        Message.objects.filter(involving(user))
        .values_list("pk", "thread_root_id", "created_at", "sender__connection_key")
        .distinct()
        .order_by("-created_at")[:1000]
    )
    latest: dict = {}
    unread: dict = {}
    for pk, root_id, created_at, sender_key in rows:
        thread = root_id or pk
        latest.setdefault(thread, created_at)
        mark = marks.get(f"thread:{thread}")
        if sender_key != person_key(user) and (mark is None or created_at > mark):
            unread[thread] = unread.get(thread, 0) + 1
    root_ids = list(latest)[:limit]
    summaries = []
    for root in Message.objects.filter(pk__in=root_ids).select_related("sender"):
        summary = ThreadSummary(root, latest[root.pk], unread=unread.get(root.pk, 0))
        summary.participants = sorted({root.sender.handle, *root.to_handles})
        summaries.append(summary)
    return sorted(summaries, key=lambda s: s.last_at, reverse=True)


# ---------------------------------------------------------------------------------------------
# Unread state


def channel_key(channel: Channel) -> str:
    return f"channel:{channel.pk}"


def thread_key(root: Message) -> str:
    return f"thread:{root.pk}"


def read_marks(user: User) -> dict[str, datetime]:
    return dict(ReadMark.objects.filter(user=user).values_list("conversation", "read_at"))


def channel_unread_counts(user: User, channels: list[Channel]) -> dict:
    """Per channel id, the messages after the person last opened it, not written by them; one
    query for all channels."""
    if not channels:
        return {}
    marks = read_marks(user)
    after = Q()
    for channel in channels:
        mark = marks.get(channel_key(channel))
        after |= Q(channel=channel, created_at__gt=mark) if mark else Q(channel=channel)
    rows = (
        Message.objects.filter(after)
        .exclude(sender__connection_key=person_key(user))
        .values("channel")
        .annotate(count=Count("pk"))
    )
    return {row["channel"]: row["count"] for row in rows}


def mark_read(*, user: User, conversation: str) -> None:
    ReadMark.objects.update_or_create(
        user=user, conversation=conversation, defaults={"read_at": timezone.now()}
    )


# ---------------------------------------------------------------------------------------------
# Writing


def send_from_console(
    *,
    user: User,
    body: str,
    idempotency_key: str,
    to: str = "",
    channel: Channel | None = None,
    thread_root_id: str | None = None,
) -> sending.SendResult:
    """A person's message, with their own handle, through the agents' send functions: in a
    channel they can read (their profile joins it on first post) or directly to `to`."""
    person = get_person_profile(user)
    if channel is None:
        return sending.send_agent_message(
            sender=person,
            to=to,
            body=body,
            thread_root_id=thread_root_id,
            idempotency_key=idempotency_key,
        )
    if not channel.members.filter(pk=person.pk).exists():
        services.add_channel_member(channel=channel, profile=person)
    return sending.send_channel_message(
        sender=person,
        channel=str(channel.pk),
        to=to,
        body=body,
        thread_root_id=thread_root_id,
        idempotency_key=idempotency_key,
    )


def delivery_report(message: Message) -> dict:
    """Who a message reached and who was skipped and why, as its send result said."""
    entries = sorted(message.deliveries.all(), key=lambda entry: entry.pk)
    delivered = [
        {"handle": e.recipient.handle, "via": e.via, "started": e.starts_run} for e in entries
    ]
    return {"delivered": delivered, "skipped": message.skipped}


def addressable_profiles(user: User, channel: Channel | None) -> QuerySet[AgentProfile]:
    """Whom the composer can address: the channel's members, or for direct messages the
    profiles the person's own handle can reach (services.profiles_visible_to)."""
    if channel is not None:
        return channel.members.all()
    person = person_profile(user)
    if person is None:
        return AgentProfile.objects.filter(owner=user)
    return services.profiles_visible_to(person)


def is_own_message(user: User, message: Message) -> bool:
    return message.sender.owner_id == user.pk
