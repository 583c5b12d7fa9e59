"""The console's one websocket per tab: every Room the person sees, each resumable, with counts."""

import pytest
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator

from osfoundry.asgi import application
from rooms.services import decline_proposal

from .test_event_feed import propose, session_headers

pytestmark = pytest.mark.django_db(transaction=True)


async def person_feed(user):
    headers = await database_sync_to_async(session_headers)(user)
    communicator = WebsocketCommunicator(application, "/ws/events/", headers=headers)
    connected, _ = await communicator.connect()
    assert connected
    return communicator


async def greeting(communicator):
    rooms = await communicator.receive_json_from(timeout=5)
    count = await communicator.receive_json_from(timeout=5)
    assert rooms["type"] == "feed.rooms" and count["type"] == "pending.count"
    return rooms, count


async def test_one_socket_carries_every_owned_room_and_the_live_pending_count(
    room_factory, owner, agent, files
):
    first = await database_sync_to_async(room_factory)(name="First", members=[agent])
    second = await database_sync_to_async(room_factory)(name="Second", members=[agent])
    communicator = await person_feed(owner)
    rooms, count = await greeting(communicator)
    assert sorted(rooms["owned"]) == sorted([str(first.pk), str(second.pk)])
    assert count["count"] == 0

    await propose(first, agent, files, "person-1", name="Alpha")
    created = await communicator.receive_json_from(timeout=5)
    assert (created["room_id"], created["name"]) == (str(first.pk), "Alpha")
    assert await communicator.receive_json_from(timeout=5) == {"type": "pending.count", "count": 1}

    proposal = await propose(second, agent, files, "person-2", name="Beta")
    created = await communicator.receive_json_from(timeout=5)
    assert (created["room_id"], created["name"]) == (str(second.pk), "Beta")
    assert (await communicator.receive_json_from(timeout=5))["count"] == 2

    await database_sync_to_async(decline_proposal)(owner=owner, proposal_id=proposal.pk)
    declined = await communicator.receive_json_from(timeout=5)
    assert declined["type"] == "proposal.declined"
    assert (await communicator.receive_json_from(timeout=5))["count"] == 1
    await communicator.disconnect()


async def test_a_room_resumes_after_the_sequence_the_page_rendered(room, owner, agent, files):
    for index in range(3):
        await propose(room, agent, files, f"person-r{index}", name=f"App {index}")
    communicator = await person_feed(owner)
    await greeting(communicator)
    await communicator.send_json_to({"room_id": str(room.pk), "after_sequence": 1})
    replayed = [await communicator.receive_json_from(timeout=5) for _ in range(2)]
    assert [e["sequence"] for e in replayed] == [2, 3]
    assert (await communicator.receive_json_from(timeout=5))["count"] == 3
    await communicator.disconnect()


async def test_members_get_the_redacted_view_and_no_counts_for_rooms_they_do_not_own(
    room, member, agent, files
):
    communicator = await person_feed(member)
    rooms, count = await greeting(communicator)
    assert rooms["owned"] == [] and count["count"] == 0
    await propose(room, agent, files, "person-m1", name="Secret")
    created = await communicator.receive_json_from(timeout=5)
    assert created["type"] == "proposal.created" and "name" not in created
    await propose(room, agent, files, "person-m2", name="Another")
    following = await communicator.receive_json_from(timeout=5)
    assert following["type"] == "proposal.created"  # not a count: the Room is not theirs
    await communicator.disconnect()


async def test_a_frame_for_a_room_not_yours_is_an_error_and_the_feed_goes_on(
    room, room_factory, stranger, owner, agent, files
):
    theirs = await database_sync_to_async(room_factory)(name="Elsewhere", room_owner=stranger)
    communicator = await person_feed(owner)
    await greeting(communicator)
    for frame in ({"room_id": str(theirs.pk), "after_sequence": 0}, {"after_sequence": 0}):
        await communicator.send_json_to(frame)
        error = await communicator.receive_json_from(timeout=5)
        assert error["error"]["code"] == "invalid_frame"
    await propose(room, agent, files, "person-e1", name="Still here")
    assert (await communicator.receive_json_from(timeout=5))["name"] == "Still here"
    await communicator.disconnect()


async def test_anonymous_is_refused():
    headers = [(b"host", b"127.0.0.1"), (b"origin", b"http://127.0.0.1")]
    communicator = WebsocketCommunicator(application, "/ws/events/", headers=headers)
    assert await communicator.connect() == (False, 4401)


async def test_an_open_feed_follows_rooms_the_person_gains_and_resumes_them_from_the_start(
    room, room_factory, stranger, owner, member, agent, files
):
    theirs = await database_sync_to_async(room_factory)(
        name="Elsewhere", room_owner=stranger, members=[agent]
    )
    await propose(theirs, agent, files, "gain-1", name="Before")
    owners, members = await person_feed(owner), await person_feed(member)
    await greeting(owners)
    await greeting(members)

    # A Room created for the owner: named, owned, live from now.
    created = await database_sync_to_async(room_factory)(name="Kestrel", members=[agent])
    frame = await owners.receive_json_from(timeout=5)
    assert frame["type"] == "feed.rooms"
    assert frame["joined"] == [{"room_id": str(created.pk), "name": "Kestrel"}]
    assert str(created.pk) in frame["owned"] and str(room.pk) in frame["owned"]
    # Its own members.add() told the agent, not these two people: nothing more for either.
    assert await owners.receive_nothing(timeout=0.2)
    assert await members.receive_nothing(timeout=0.2)
    await propose(created, agent, files, "gain-2", name="Live")
    assert (await owners.receive_json_from(timeout=5))["name"] == "Live"
    assert (await owners.receive_json_from(timeout=5))["count"] == 1

    # Added as a member of someone else's Room: joined, not owned; resumable from 0.
    await database_sync_to_async(theirs.members.add)(member)
    frame = await members.receive_json_from(timeout=5)
    assert frame["joined"] == [{"room_id": str(theirs.pk), "name": "Elsewhere"}]
    assert frame["owned"] == []
    await members.send_json_to({"room_id": str(theirs.pk), "after_sequence": 0})
    replayed = await members.receive_json_from(timeout=5)
    assert (replayed["room_id"], replayed["sequence"]) == (str(theirs.pk), 1)

    # A save that gains nobody anything sends nothing.
    created.name = "Kestrel Two"
    await database_sync_to_async(created.save)()
    assert await owners.receive_nothing(timeout=0.3)
    await owners.disconnect()
    await members.disconnect()


@pytest.mark.parametrize("frame", ["not json", '{"room_id": 7, "after_sequence": 0}'])
async def test_a_frame_the_person_feed_cannot_read_gets_an_error_and_the_feed_stays(
    room, owner, agent, files, frame
):
    communicator = await person_feed(owner)
    await greeting(communicator)
    await communicator.send_to(text_data=frame)
    error = (await communicator.receive_json_from(timeout=5))["error"]
    assert error["code"] == "invalid_frame"
    await propose(room, agent, files, "person-feed-after-error")
    event = await communicator.receive_json_from(timeout=5)  # the feed goes on
    assert (event["type"], event["sequence"]) == ("proposal.created", 1)
    await communicator.disconnect()
