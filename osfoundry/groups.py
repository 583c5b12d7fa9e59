"""Channel-layer group sends from synchronous code: a request's or database thread's on_commit,
the admin, a management command. Every app's live signals go through `group_send`.

A signed-in person's live sockets (the Rooms feed of every tab, the Messages page) all join one
group, `person_group`: each app sends its signals for a person there, and a socket ignores the
kinds it has no handler for (`PersonSocket`)."""

import asyncio
import logging

from asgiref.sync import async_to_sync
from channels.consumer import get_handler_name
from channels.layers import get_channel_layer

logger = logging.getLogger(__name__)


def person_group(user_id) -> str:
    """The one group of a person's live sockets."""
    return f"person.{user_id}"


class PersonSocket:
    """For a consumer in `person_group`: another feed's signals to the person pass it by, where
    a consumer would otherwise fail on a message type it has no handler for."""

    async def dispatch(self, message):
        if message["type"].startswith("websocket.") or hasattr(self, get_handler_name(message)):
            await super().dispatch(message)  # type: ignore[misc]


_sending: set[asyncio.Task] = set()  # strong references until each scheduled send is done


def group_send(group: str, message: dict) -> None:
    """Send `message` to `group`; nothing without a channel layer. Raises what the layer raises.

    From a thread that runs an event loop (a script or a test driving one), where async_to_sync
    cannot run, the send is scheduled on that loop and a failure is logged."""
    layer = get_channel_layer()
    if layer is None:
        return
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        async_to_sync(layer.group_send)(group, message)
        return
    task = loop.create_task(layer.group_send(group, message))
    _sending.add(task)
    task.add_done_callback(_sent)


def _sent(task: asyncio.Task) -> None:
    _sending.discard(task)
    if not task.cancelled() and task.exception() is not None:
        logger.error("could not send a group message", exc_info=task.exception())
