"""The console's live Messages websocket: a person gets a signal (ids only) for each message
they can read, after commit; strangers are not in a message's audience; no session, no feed."""

import pytest
from channels.testing import WebsocketCommunicator

from agents import feed as feed_module
from agents.feed import audience, publish_message
from agents.models import Message
from agents.sending import send_agent_message, send_channel_message
from osfoundry.asgi import application
from osfoundry.groups import person_group
from tests.rooms.live.test_event_feed import session_headers

from .test_wait_for_messages import in_thread

pytestmark = pytest.mark.django_db(transaction=True)


def feed(headers):
    return WebsocketCommunicator(application, "/ws/messages/", headers=headers)


async def test_a_channel_post_signals_the_members_owners(owner, channel_factory, alice, bob):
    general = await in_thread(channel_factory)("general", members=[alice, bob])
    socket = feed(await in_thread(session_headers)(owner))
    connected, _ = await socket.connect()
    assert connected
    result = await in_thread(send_channel_message)(
        sender=bob, channel="general", body="green", idempotency_key="bob-feed-01"
    )
    frame = await socket.receive_json_from(timeout=10)
    assert frame == {
        "type": "message.created",
        "conversation": f"channel:{general.pk}",
        "message_id": str(result.message.pk),
        "thread_root_id": str(result.message.pk),
        "is_reply": False,
    }
    await socket.disconnect()


def test_the_audience_is_whoever_can_read_the_message(
    owner, member, stranger, channel_factory, alice, bob, profile_factory
):
    eve = profile_factory(stranger, "eve-agent")
    general = channel_factory("general", members=[alice, bob])
    posted = send_channel_message(
        sender=bob, channel=str(general.pk), body="hi", idempotency_key="bob-feed-02"
    ).message
    assert audience(posted) == {owner.pk, member.pk}
    direct = send_agent_message(
        sender=bob, to="alice-claude", body="psst", idempotency_key="bob-feed-03"
    ).message
    assert audience(direct) == {owner.pk, member.pk}
    assert stranger.pk not in audience(direct) and eve.owner_id == stranger.pk


async def test_without_a_session_the_feed_is_refused():
    socket = feed([(b"host", b"127.0.0.1"), (b"origin", b"http://127.0.0.1")])
    connected, code = await socket.connect()
    assert not connected and code == 4401
    # The server then reports the closed socket: the refused consumer ends cleanly (it joined
    # no group to leave).
    await socket.disconnect()


def test_a_message_gone_before_its_signal_signals_nobody(owner, alice, bob, monkeypatch):
    sent = []
    monkeypatch.setattr(feed_module, "group_send", lambda group, event: sent.append(group))
    message = send_agent_message(
        sender=bob, to="alice-claude", body="gone", idempotency_key="bob-feed-04"
    ).message
    # Signalled after its commit; as again by a late publish while it is stored.
    assert sent == [person_group(user_id) for user_id in sorted(audience(message))]
    sent.clear()
    publish_message(message.pk)
    assert sent == [person_group(user_id) for user_id in sorted(audience(message))]
    sent.clear()
    Message.objects.filter(pk=message.pk).delete()
    publish_message(message.pk)
    assert sent == []


async def test_a_persons_sockets_share_one_group_and_each_hears_only_its_own_signals(
    owner, channel_factory, alice, bob, room_factory
):
    from tests.rooms.live.test_person_event_feed import greeting, person_feed

    await in_thread(channel_factory)("general", members=[alice, bob])
    messages = feed(await in_thread(session_headers)(owner))
    assert (await messages.connect())[0]
    rooms = await person_feed(owner)
    await greeting(rooms)

    await in_thread(send_channel_message)(
        sender=bob, channel="general", body="green", idempotency_key="bob-feed-04"
    )
    assert (await messages.receive_json_from(timeout=10))["type"] == "message.created"
    assert await rooms.receive_nothing(timeout=0.3)  # passed by, the feed stays open

    created = await in_thread(room_factory)(name="Kestrel")
    frame = await rooms.receive_json_from(timeout=5)
    assert frame["joined"] == [{"room_id": str(created.pk), "name": "Kestrel"}]
    assert await messages.receive_nothing(timeout=0.3)
    await messages.disconnect()
    await rooms.disconnect()
