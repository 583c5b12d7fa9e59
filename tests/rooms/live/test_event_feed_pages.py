"""The websocket feeds read the Room's events in pages of 50: a burst longer than a page arrives
whole and in order, the signals of events already sent send nothing again, and a refused socket
ends cleanly when its client goes (rooms/live/consumers.py)."""

import pytest
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from django.db import transaction

from osfoundry.asgi import application
from rooms import events
from rooms.models import Room

from .test_event_feed import feed, session_headers
from .test_person_event_feed import greeting, person_feed

pytestmark = pytest.mark.django_db(transaction=True)

BURST = 55  # more than one page (the feeds read 50 at a time)


@database_sync_to_async
def rename_burst(room, count, first=1):
    """`count` events in one transaction: each sends its signal after the commit, and the
    first signal's read finds them all."""
    with transaction.atomic():
        locked = Room.objects.select_for_update().get(pk=room.pk)
        for n in range(first, first + count):
            events.append_room_event(room=locked, type=events.APP_RENAMED, payload={"name": f"{n}"})


async def receive_sequences(communicator, count):
    frames = [await communicator.receive_json_from(timeout=5) for _ in range(count)]
    assert [frame["name"] for frame in frames] == [str(frame["sequence"]) for frame in frames]
    return [frame["sequence"] for frame in frames]


async def test_a_room_feed_sends_a_burst_longer_than_a_page_once_and_in_order(room, member):
    communicator = feed(room, await database_sync_to_async(session_headers)(member))
    assert (await communicator.connect())[0]
    await rename_burst(room, BURST)
    assert await receive_sequences(communicator, BURST) == list(range(1, BURST + 1))
    # The burst's other 54 signals name events already sent: the next frame is the next event.
    await rename_burst(room, 1, first=BURST + 1)
    assert await receive_sequences(communicator, 1) == [BURST + 1]
    await communicator.disconnect()


async def test_a_room_feed_sends_a_backlog_longer_than_a_page(room, owner):
    await rename_burst(room, BURST)
    communicator = feed(room, await database_sync_to_async(session_headers)(owner), after=2)
    assert (await communicator.connect())[0]
    assert await receive_sequences(communicator, BURST - 2) == list(range(3, BURST + 1))
    await rename_burst(room, 1, first=BURST + 1)
    assert await receive_sequences(communicator, 1) == [BURST + 1]
    await communicator.disconnect()


async def test_the_person_feed_sends_a_burst_longer_than_a_page_once_and_in_order(room, member):
    communicator = await person_feed(member)
    await greeting(communicator)
    await rename_burst(room, BURST)
    assert await receive_sequences(communicator, BURST) == list(range(1, BURST + 1))
    await rename_burst(room, 1, first=BURST + 1)
    assert await receive_sequences(communicator, 1) == [BURST + 1]
    await communicator.disconnect()


async def test_a_refused_room_feed_ends_cleanly_when_its_client_goes(room, stranger):
    communicator = feed(room, await database_sync_to_async(session_headers)(stranger))
    assert await communicator.connect() == (False, 4404)
    await communicator.disconnect()  # raises what the consumer's disconnect raised


async def test_a_refused_person_feed_ends_cleanly_when_its_client_goes():
    headers = [(b"host", b"127.0.0.1"), (b"origin", b"http://127.0.0.1")]
    communicator = WebsocketCommunicator(application, "/ws/events/", headers=headers)
    assert await communicator.connect() == (False, 4401)
    await communicator.disconnect()  # raises what the consumer's disconnect raised
