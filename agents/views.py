"""The console's Messages: channels and direct threads a person can read, and a composer that
writes through the same send functions as the MCP tools and REST (agents/conversations.py).

Views read and call services only; input is checked at the edge with the tools' own pydantic
models, and domain errors map here, once, to the page with the error under the field it names.
"""

import uuid

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST
from pydantic import ValidationError

from osfoundry.errors import DomainError, NotFound, describe_validation_error

from . import conversations as talk
from .models import AgentProfile, Channel, Message
from .presence import presence_label
from .schemas import AgentMessageIn, ChannelMessageIn, ClaimProfileIn


def sidebar(user) -> dict:
    readable = list(talk.readable_channels(user))
    unread = talk.channel_unread_counts(user, readable)
    channels = [
        {"channel": c, "key": talk.channel_key(c), "unread": unread.get(c.pk, 0)} for c in readable
    ]
    agents = [
        {"profile": profile, "presence": presence_label(profile)}
        for profile in AgentProfile.objects.filter(owner=user).exclude(
            kind=AgentProfile.Kind.PERSON
        )
    ]
    return {
        "channels": channels,
        "threads": talk.direct_threads(user),
        "agents": agents,
        "person": talk.person_profile(user),
        "unread_cap": talk.UNREAD_CAP,
    }


def composer(user, *, channel: Channel | None, root: Message | None, to: str = "") -> dict:
    """What the composer needs: a fresh idempotency key (a double submit sends once), the
    conversation it writes to, and the handles it may address (for "who would be addressed")."""
    profiles = talk.addressable_profiles(user, channel)
    known = {p.handle: {"kind": p.kind, "presence": presence_label(p)} for p in profiles}
    return {
        "idempotency_key": f"console-{uuid.uuid4().hex}",
        "channel": channel,
        "root": root,
        "to": to,
        "body": "",
        "error": "",
        "error_field": None,
        "known_handles": known,
    }


# Every name the page reads, so a view passes only what it has.
PAGE_DEFAULTS: dict[str, object] = {
    "conversation": "",
    "thread_conversation": "",
    "channel": None,
    "root": None,
    "page": None,
    "members": [],
    "handle_error": "",
    "handle_value": "",
}


def render_page(request, context: dict, status: int = 200) -> HttpResponse:
    context = PAGE_DEFAULTS | sidebar(request.user) | context
    return render(request, "agents/messages.html", context, status=status)


@require_GET
@login_required
def index(request):
    context = {"composer": composer(request.user, channel=None, root=None), "view": "index"}
    return render_page(request, context)


def channel_context(request, channel: Channel, before=None) -> dict:
    page = talk.page_before(talk.channel_roots(channel), before)
    return {
        "view": "channel",
        "conversation": talk.channel_key(channel),
        "channel": channel,
        "page": page,
        "members": [
            {"profile": p, "presence": presence_label(p)}
            for p in channel.members.select_related("owner")
        ],
        "composer": composer(request.user, channel=channel, root=None),
    }


def thread_context(request, root: Message, before=None) -> dict:
    page = talk.page_before(talk.thread_messages(request.user, root), before)
    to = ""
    if root.channel_id is None:
        person = talk.person_profile(request.user)
        mine = person.handle if person else ""
        to = " ".join(dict.fromkeys(h for h in [root.sender.handle, *root.to_handles] if h != mine))
    return {
        "view": "thread",
        "conversation": talk.channel_key(root.channel) if root.channel else talk.thread_key(root),
        "thread_conversation": talk.thread_key(root),
        "channel": root.channel,
        "root": root,
        "page": page,
        "composer": composer(request.user, channel=root.channel, root=root, to=to),
    }


@require_GET
@login_required
def channel_view(request, channel_id):
    try:
        channel = talk.get_channel_for_user(request.user, channel_id)
        context = channel_context(request, channel, request.GET.get("before"))
    except NotFound as error:
        raise Http404(error.message) from None
    talk.mark_read(user=request.user, conversation=talk.channel_key(channel))
    return render_page(request, context)


def load_thread(user, root_id) -> Message:
    """A thread root `user` may read: a direct thread of theirs, or a root in their channel."""
    message = talk.get_message_for_user(user, root_id)
    if message.thread_root_id is not None:
        raise NotFound("thread: this message is a reply; open its thread", field="thread_root_id")
    if message.channel_id is None:
        return talk.get_direct_thread_for_user(user, root_id)
    return message


@require_GET
@login_required
def thread_view(request, root_id):
    try:
        root = load_thread(request.user, root_id)
        context = thread_context(request, root, request.GET.get("before"))
    except NotFound as error:
        raise Http404(error.message) from None
    if root.channel_id is None:
        talk.mark_read(user=request.user, conversation=talk.thread_key(root))
    return render_page(request, context)


@require_POST
@login_required
def claim_handle(request):
    problem: DomainError
    try:
        args = ClaimProfileIn.model_validate({"handle": request.POST.get("handle", "")})
        talk.claim_person_handle(user=request.user, handle=args.handle)
    except ValidationError as error:
        problem = describe_validation_error(error)
    except DomainError as error:
        problem = error
    else:
        return redirect(safe_next(request))
    context = {
        "view": "index",
        "composer": composer(request.user, channel=None, root=None),
        "handle_error": problem.message,
        "handle_value": request.POST.get("handle", ""),
    }
    return render_page(request, context, status=problem.http_status)


def safe_next(request) -> str:
    target = request.POST.get("next", "")
    return target if target.startswith("/messages/") else reverse("agents:messages")


@require_POST
@login_required
def send(request):
    """A person's message. The form carries an idempotency key made with the page, so a double
    click (or a resubmitted form) sends once and shows the first result."""
    data = request.POST
    channel_id, root_id = data.get("channel") or None, data.get("thread_root_id") or None
    try:
        channel = talk.get_channel_for_user(request.user, channel_id) if channel_id else None
        root = load_thread(request.user, root_id) if root_id else None
    except NotFound as error:
        raise Http404(error.message) from None
    fields = {
        "body": data.get("body", ""),
        "to": data.get("to", ""),
        "idempotency_key": data.get("idempotency_key", ""),
        "thread_root_id": root_id,
    }
    problem: DomainError
    try:
        args = (ChannelMessageIn if channel else AgentMessageIn).model_validate(fields)
        result = talk.send_from_console(user=request.user, channel=channel, **args.model_dump())
    except ValidationError as error:
        problem = describe_validation_error(error)
    except DomainError as error:
        problem = error
    else:
        message = result.message
        if message.thread_root_id is not None:
            url = reverse("agents:thread", args=[message.thread_root_id])
        elif channel is not None:
            url = reverse("agents:channel", args=[channel.pk])
        else:
            url = reverse("agents:thread", args=[message.pk])  # a new direct thread
        return redirect(f"{url}#m-{message.pk}")
    if root is not None:
        context = thread_context(request, root)
    elif channel is not None:
        context = channel_context(request, channel)
    else:
        context = {"view": "index", "composer": composer(request.user, channel=None, root=None)}
    explanation = problem.message
    if problem.code == "idempotency_key_reused":
        # This form was sent before with other content (edited after going back): the page's
        # fresh key makes the next press a new message, and the person is told so.
        explanation = "This form was already sent with other text; press Send to send this as new"
    else:
        context["composer"]["idempotency_key"] = fields["idempotency_key"]
    context["composer"].update(
        body=fields["body"], to=fields["to"], error=explanation, error_field=problem.field
    )
    return render_page(request, context, status=problem.http_status)


@require_GET
@login_required
def live(request):
    """The messages an open page is missing after `after` (a message id), as HTML: the page
    fetches this when its websocket signals a new message in its conversation."""
    kind, _, pk = request.GET.get("conversation", "").partition(":")
    after = request.GET.get("after") or None
    try:
        if kind == "channel":
            channel = talk.get_channel_for_user(request.user, pk)
            messages = talk.messages_after(talk.channel_roots(channel), after)
            talk.mark_read(user=request.user, conversation=talk.channel_key(channel))
        elif kind == "thread":
            root = load_thread(request.user, pk)
            messages = talk.messages_after(talk.thread_messages(request.user, root), after)
            if root.channel_id is None:
                talk.mark_read(user=request.user, conversation=talk.thread_key(root))
        else:
            raise NotFound("conversation: expected channel:<id> or thread:<id>")
    except NotFound as error:
        raise Http404(error.message) from None
    return render(request, "agents/_messages.html", {"messages": messages, "user": request.user})
