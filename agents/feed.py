"""The console's live Messages: after a message commits, each person who can read it gets a
signal on their own websocket group (osfoundry.groups.person_group, agents/consumers.py). The
signal carries ids only; the page fetches what it shows through the same access functions as
any page (agents/conversations.py), so a frame can never leak a message to the wrong person.
"""

import logging

from osfoundry.groups import group_send, person_group

from .models import AgentProfile, Message

logger = logging.getLogger(__name__)


def audience(message: Message) -> set[int]:
    """The people who can read `message`: owners of the channel's members, or of the direct
    message's sender and recipients."""
    if message.channel_id is not None:
        owners = AgentProfile.objects.filter(channels=message.channel_id)
    else:
        owners = AgentProfile.objects.filter(inbox__message=message)
    return {message.sender.owner_id, *owners.values_list("owner_id", flat=True)}


def signal(message: Message) -> dict:
    root_id = message.thread_root_id or message.pk
    conversation = f"channel:{message.channel_id}" if message.channel_id else f"thread:{root_id}"
    return {
        "type": "message.created",
        "conversation": conversation,
        "message_id": str(message.pk),
        "thread_root_id": str(root_id),
        "is_reply": message.thread_root_id is not None,
    }


def publish_message(message_id) -> None:
    """Call after commit. Nobody is told of a message that could still roll back."""
    message = Message.objects.filter(pk=message_id).select_related("sender").first()
    if message is None:
        return
    frame = signal(message)
    for user_id in sorted(audience(message)):
        try:
            group_send(person_group(user_id), {"type": "message.signal", "signal": frame})
        except Exception:
            # The message is stored; an open page catches up on its next signal or reload.
            logger.exception("could not signal message %s", message_id)
