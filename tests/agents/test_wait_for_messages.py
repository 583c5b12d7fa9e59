import asyncio
import time

import pytest
from asgiref.sync import sync_to_async
from django.db import connection

from agents import idle, inbox
from agents.idle import BUSY_LOOP_NOTE
from agents.inbox import read_inbox, record_delivered, wait_for_messages
from agents.models import AgentProfile, agent_key
from agents.sending import send_agent_message, send_channel_message
from osfoundry import wakeups
from osfoundry.auth import Unauthenticated
from osfoundry.disconnect import DisconnectWatcher
from osfoundry.errors import Invalid

pytestmark = pytest.mark.django_db(transaction=True)


def in_thread(fn):
    """sync_to_async that leaves no connection open in its thread (the test database must
    be droppable at the end of the run)."""

    def run(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        finally:
            connection.close()

    return sync_to_async(run)


def send(sender, to, body, key):
    return in_thread(send_agent_message)(sender=sender, to=to, body=body, idempotency_key=key)


def loader(profile):
    return lambda: (AgentProfile.objects.get(pk=profile.pk), None)


async def wait(profile, **arguments):
    page, _receipt = await wait_for_messages(
        connection=f"test:{profile.pk}", load_profile=loader(profile), **arguments
    )
    return page


async def parked(count=1):
    while wakeups.registry.count() < count:
        await asyncio.sleep(0.01)


async def test_waiting_messages_return_at_once_with_their_sequences(alice, bob):
    await send(alice, "bob-codex", "one", "key-00001")
    await send(alice, "bob-codex", "two", "key-00002")
    page = await wait(bob, after_sequence=0, timeout_s=50)
    assert [(m["sequence"], m["body"], m["from"]) for m in page.messages] == [
        (1, "one", "alice-claude"),
        (2, "two", "alice-claude"),
    ]
    assert page.next_after_sequence == 2
    assert page.as_dict()["has_more"] is False


async def test_an_idle_wait_returns_an_empty_list_after_the_timeout(bob):
    page = await wait(bob, timeout_s=1)
    assert page.as_dict() == {"messages": [], "next_after_sequence": 0, "has_more": False}
    assert wakeups.registry.count() == 0


async def test_a_send_wakes_the_parked_recipient(alice, bob):
    waiting = asyncio.create_task(wait(bob, timeout_s=50))
    await parked()
    await send(alice, "bob-codex", "are you there?", "key-00001")
    page = await asyncio.wait_for(waiting, 10)
    assert [m["body"] for m in page.messages] == ["are you there?"]
    assert wakeups.registry.count() == 0


async def test_a_body_mention_reaches_the_mentioned_agents_wait(
    alice, bob, profile_factory, stranger
):
    carol = await in_thread(profile_factory)(stranger, "carol")
    waiting = asyncio.create_task(wait(carol, timeout_s=50))
    await parked()
    await send(alice, "bob-codex", "cc @carol", "key-00001")
    page = await asyncio.wait_for(waiting, 10)
    assert [(m["body"], m["via"]) for m in page.messages] == [("cc @carol", "mention")]
    assert "started" not in page.messages[0]


async def test_limit_pages_and_has_more(alice, bob):
    for n in range(3):
        await send(alice, "bob-codex", f"m{n}", f"key-0000{n}")
    page = await wait(bob, after_sequence=0, limit=2)
    assert (page.next_after_sequence, page.has_more) == (2, True)


async def test_without_after_sequence_it_resumes_from_the_stored_cursor(alice, bob):
    await send(alice, "bob-codex", "one", "key-00001")
    await send(alice, "bob-codex", "two", "key-00002")
    first = await wait(bob, limit=1)
    assert [m["sequence"] for m in first.messages] == [1]
    # The response was never confirmed written: the same message comes again.
    again = await wait(bob, limit=1)
    assert [m["sequence"] for m in again.messages] == [1]
    await in_thread(record_delivered)(profile_id=bob.pk, sequence=again.next_after_sequence)
    after = await wait(bob, limit=1)
    assert [m["sequence"] for m in after.messages] == [2]


async def test_the_stored_cursor_never_moves_back(alice, bob):
    await send(alice, "bob-codex", "one", "key-00001")
    await in_thread(record_delivered)(profile_id=bob.pk, sequence=1)
    await in_thread(record_delivered)(profile_id=bob.pk, sequence=0)
    await in_thread(bob.refresh_from_db)()
    assert bob.last_delivered_sequence == 1


async def test_recording_a_delivery_moves_only_that_profiles_cursor(alice, bob):
    await send(alice, "bob-codex", "one", "key-00001")
    await send(bob, "alice-claude", "two", "key-00002")
    await in_thread(record_delivered)(profile_id=bob.pk, sequence=1)
    await in_thread(alice.refresh_from_db)()
    assert (alice.last_inbox_sequence, alice.last_delivered_sequence) == (1, 0)


async def test_an_after_sequence_beyond_the_latest_message_is_refused(bob):
    with pytest.raises(Invalid) as error:
        await wait(bob, after_sequence=7, timeout_s=0)
    assert error.value.field == "after_sequence"
    assert "beyond your latest message (0)" in error.value.message
    assert wakeups.registry.count() == 0


async def test_a_repeated_zero_timeout_waits_instead_of_spinning(alice, bob):
    first = await wait(bob, after_sequence=0, timeout_s=0)
    assert first.as_dict() == {"messages": [], "next_after_sequence": 0, "has_more": False}
    waiting = asyncio.create_task(wait(bob, after_sequence=0, timeout_s=0))
    await parked()  # the repeat parks rather than answering at once
    await send(alice, "bob-codex", "while you wait", "key-00001")
    page = await asyncio.wait_for(waiting, 10)
    assert [m["body"] for m in page.messages] == ["while you wait"]
    assert page.as_dict()["note"] == BUSY_LOOP_NOTE


async def test_a_waiter_whose_client_left_unparks_and_leaves_nothing_behind(bob):
    left = asyncio.Event()

    async def receive():  # the server's receive(): the client goes away when `left` is set
        await left.wait()
        return {"type": "http.disconnect"}

    client = DisconnectWatcher(receive)
    client.start()
    waiting = asyncio.create_task(
        wait_for_messages(
            connection="test:gone", load_profile=loader(bob), timeout_s=50, client=client
        )
    )
    await parked()
    left.set()
    page, receipt = await asyncio.wait_for(waiting, 10)
    assert client.disconnected
    assert (page.messages, receipt) == ([], None)
    assert wakeups.registry.count() == 0


def test_hints_are_used_only_when_they_continue_the_cursor():
    from agents.inbox import page_from_hints

    hint = {"sequence": 4}
    assert page_from_hints([hint, {"sequence": 5}], 3, 50).messages == [hint, {"sequence": 5}]
    assert page_from_hints([{"sequence": 5}], 3, 50) is None  # a gap: re-read
    assert page_from_hints([{"sequence": 3}], 3, 50) is None  # already delivered
    page = page_from_hints([hint, {"sequence": 5}], 3, 1)
    assert (page.messages, page.next_after_sequence, page.has_more) == ([hint], 4, True)
    # Every hint on the page, or one already delivered left out: nothing more to read.
    for hints in ([hint, {"sequence": 5}], [{"sequence": 3}, hint]):
        page = page_from_hints(hints, 3, 50)
        assert (page.next_after_sequence, page.has_more) == (hints[-1]["sequence"], False)


async def test_a_stale_profile_id_for_a_connection_is_corrected(alice, bob):
    await send(alice, "bob-codex", "hello", "key-00001")
    # What a stale memory would say: the connection long-polled as alice.
    idle.memory.known["pat:test"] = idle.Known(alice.pk, 0, time.monotonic() + 60, None)
    page, _receipt = await wait_for_messages(
        connection="pat:test", load_profile=loader(bob), timeout_s=0
    )
    assert [m["body"] for m in page.messages] == ["hello"]
    assert idle.memory.profile_id("pat:test") == bob.pk
    assert wakeups.registry.count() == 0


async def test_an_after_sequence_below_the_stored_cursor_delivers_again(alice, bob):
    """At-least-once: a client that lost what it got (or never processed it) asks from the last
    sequence it processed and receives everything after it again, whatever was recorded."""
    for n in (1, 2, 3):
        await send(alice, "bob-codex", f"m{n}", f"key-0000{n}")
    await in_thread(record_delivered)(profile_id=bob.pk, sequence=3)
    again = await wait(bob, after_sequence=1, timeout_s=0)
    assert [m["body"] for m in again.messages] == ["m2", "m3"]
    everything = await wait(bob, after_sequence=0, timeout_s=0)
    assert [m["sequence"] for m in everything.messages] == [1, 2, 3]
    await in_thread(bob.refresh_from_db)()
    assert bob.last_delivered_sequence == 3  # re-reading never moves the cursor back


def without_hints(monkeypatch):
    """Sends wake their recipients as another process's large message does: no entries ride
    along, so a parked wait must read them (agents.inbox.reopen_inbox)."""
    notify = wakeups.notify
    monkeypatch.setattr(wakeups, "notify", lambda keys, hints=None: notify(keys))


async def test_a_wake_up_without_hints_reads_what_came_after_the_cursor(alice, bob, monkeypatch):
    await send(alice, "bob-codex", "one", "key-00001")
    without_hints(monkeypatch)
    waiting = asyncio.create_task(wait(bob, after_sequence=1, timeout_s=50))
    await parked()
    await send(alice, "bob-codex", "two", "key-00002")
    page = await asyncio.wait_for(waiting, 10)
    assert [(m["sequence"], m["body"]) for m in page.messages] == [(2, "two")]
    assert (page.next_after_sequence, page.has_more) == (2, False)


async def test_a_wake_up_without_hints_checks_access_before_reading(alice, bob):
    revoked = False

    def load_profile():
        if revoked:
            raise Unauthenticated("This token was revoked")
        return AgentProfile.objects.get(pk=bob.pk), None

    waiting = asyncio.create_task(
        wait_for_messages(connection="test:revoked", load_profile=load_profile, timeout_s=50)
    )
    await parked()
    revoked = True
    wakeups.notify([agent_key(bob.pk)])  # what revoking a token does (agents/revocation.py)
    with pytest.raises(Unauthenticated, match="revoked"):
        await asyncio.wait_for(waiting, 10)
    assert wakeups.registry.count() == 0


async def test_a_connection_that_now_belongs_to_another_profile_reads_nothing(
    alice, bob, monkeypatch
):
    """The token was claimed for alice while bob's wait was parked: bob's new message is not
    handed to it; the wait answers empty and the next poll starts from the new profile."""
    profile = bob

    def load_profile():
        return AgentProfile.objects.get(pk=profile.pk), None

    without_hints(monkeypatch)
    waiting = asyncio.create_task(
        wait_for_messages(connection="test:moved", load_profile=load_profile, timeout_s=1)
    )
    await parked()
    profile = alice
    await send(alice, "bob-codex", "for bob only", "key-00001")
    page, receipt = await asyncio.wait_for(waiting, 10)
    assert page.as_dict() == {"messages": [], "next_after_sequence": 0, "has_more": False}
    assert receipt is None


def reads_of(monkeypatch):
    """Every read of the inbox from now on (agents.inbox.read_inbox), by its cursor."""
    reads = []

    def counted(**arguments):
        reads.append(arguments["after_sequence"])
        return read_inbox(**arguments)

    monkeypatch.setattr(inbox, "read_inbox", counted)
    return reads


async def unnotified(monkeypatch, *sends):
    """Send without waking anyone, as if the wake-up was lost."""
    notify = wakeups.notify
    monkeypatch.setattr(wakeups, "notify", lambda keys, hints=None: None)
    for sender, to, body, key in sends:
        await send(sender, to, body, key)
    monkeypatch.setattr(wakeups, "notify", notify)


def test_a_page_is_one_query_of_the_callers_own_inbox(
    alice, bob, channel_factory, django_assert_num_queries
):
    channel_factory(members=[alice, bob])
    for n in (1, 2):
        send_agent_message(sender=alice, to="bob-codex", body=f"m{n}", idempotency_key=f"key-0{n}")
    send_channel_message(
        sender=alice, channel="general", to="bob-codex", body="m3", idempotency_key="key-03"
    )
    send_agent_message(sender=bob, to="alice-claude", body="not for bob", idempotency_key="key-04")
    with django_assert_num_queries(1):
        page = read_inbox(profile_id=bob.pk, after_sequence=0, limit=3)
        assert [
            (m["from"], m["body"], m.get("channel", {}).get("name")) for m in page.messages
        ] == [
            ("alice-claude", "m1", None),
            ("alice-claude", "m2", None),
            ("alice-claude", "m3", "general"),
        ]
    assert (page.next_after_sequence, page.has_more) == (3, False)


async def test_hints_that_continue_the_cursor_answer_without_a_read_a_page_at_a_time(
    alice, bob, monkeypatch
):
    waiting = asyncio.create_task(wait(bob, after_sequence=0, limit=1, timeout_s=50))
    await parked()
    await unnotified(
        monkeypatch, (alice, "bob-codex", "one", "key-1"), (alice, "bob-codex", "two", "key-2")
    )
    hints = (await in_thread(read_inbox)(profile_id=bob.pk, after_sequence=0, limit=50)).messages
    reads = reads_of(monkeypatch)
    wakeups.notify([agent_key(bob.pk)], {agent_key(bob.pk): hints})
    page = await asyncio.wait_for(waiting, 10)
    assert [m["body"] for m in page.messages] == ["one"]
    assert (page.next_after_sequence, page.has_more) == (1, True)
    assert reads == []


async def test_hints_after_a_gap_are_read_back_from_the_cursor(alice, bob, monkeypatch):
    waiting = asyncio.create_task(wait(bob, after_sequence=0, timeout_s=50))
    await parked()
    await unnotified(monkeypatch, (alice, "bob-codex", "lost wake-up", "key-1"))
    reads = reads_of(monkeypatch)
    await send(alice, "bob-codex", "woken", "key-2")  # its hint is sequence 2: a gap after 0
    page = await asyncio.wait_for(waiting, 10)
    assert [(m["sequence"], m["body"]) for m in page.messages] == [
        (1, "lost wake-up"),
        (2, "woken"),
    ]
    assert reads == [0]


async def test_a_wake_up_without_news_keeps_the_wait_parked(alice, bob, monkeypatch):
    waiting = asyncio.create_task(wait(bob, timeout_s=50))
    await parked()
    reads = reads_of(monkeypatch)
    wakeups.notify([agent_key(bob.pk)])  # e.g. another of bob's tokens was revoked
    async with asyncio.timeout(10):
        while not reads:  # the woken wait read its inbox: nothing new
            await asyncio.sleep(0.01)
    assert not waiting.done()
    await send(alice, "bob-codex", "news", "key-00001")
    page = await asyncio.wait_for(waiting, 10)
    assert [m["body"] for m in page.messages] == ["news"]
