import asyncio
import itertools
import time

import pytest
from asgiref.sync import sync_to_async
from django.db import connection

from agents import idle
from agents.idle import BUSY_LOOP_NOTE
from agents.inbox import record_delivered, wait_for_messages
from agents.models import AgentProfile
from agents.sending import send_agent_message
from osfoundry import wakeups
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


async def test_an_after_sequence_beyond_the_latest_message_is_refused(bob):
    with pytest.raises(Invalid) as error:
        await wait(bob, after_sequence=7, timeout_s=0)
    assert error.value.field == "after_sequence"
    assert "beyond your latest message (0)" in error.value.message
    assert wakeups.registry.count() == 0


async def test_a_repeated_zero_timeout_waits_instead_of_spinning(alice, bob):
    first = await wait(bob, after_sequence=0, timeout_s=0)
    assert first.note is None
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


async def test_hints_that_skip_an_entry_make_the_wait_read_the_database(alice, bob, monkeypatch):
    held = []
    monkeypatch.setattr(wakeups, "notify", lambda keys, hints=None: held.append((keys, hints)))
    waiting = asyncio.create_task(wait(bob, after_sequence=0, timeout_s=50))
    await parked()
    await send(alice, "bob-codex", "large", "key-00001")
    await send(alice, "bob-codex", "small", "key-00002")
    (first_keys, _), (second_keys, second_hints) = held
    # Both wake-ups reach the waiter before it runs, the first without its entry (too large
    # to travel): the hints start at sequence 2, so they cannot make the page alone.
    wakeups.registry.wake_local(first_keys)
    wakeups.registry.wake_local(second_keys, second_hints)
    page = await asyncio.wait_for(waiting, 10)
    assert [(m["sequence"], m["body"]) for m in page.messages] == [(1, "large"), (2, "small")]


class Switching:
    """load_profile for a connection whose profile changes to `later` once `switch` is set."""

    def __init__(self, first, later):
        self.first, self.later, self.switched = first, later, False
        self.reads = 0

    def __call__(self):
        self.reads += 1
        profile = self.later if self.switched else self.first
        return AgentProfile.objects.get(pk=profile.pk), None


async def test_a_parked_wait_whose_connection_changed_profile_hands_over_nothing(
    alice, bob, monkeypatch
):
    connection_loader = Switching(bob, alice)
    waiting = asyncio.create_task(
        wait_for_messages(connection="pat:moved", load_profile=connection_loader, timeout_s=1)
    )
    await parked()
    connection_loader.switched = True  # the connection now speaks for alice
    reads = connection_loader.reads
    notify = wakeups.notify
    monkeypatch.setattr(wakeups, "notify", lambda keys, hints=None: notify(keys))
    await send(alice, "bob-codex", "for bob only", "key-00001")
    page, receipt = await asyncio.wait_for(waiting, 10)
    assert connection_loader.reads > reads  # the wake-up checked the connection again
    assert (page.messages, page.next_after_sequence, receipt) == ([], 0, None)
    monkeypatch.setattr(wakeups, "notify", notify)
    await send(bob, "alice-claude", "for alice", "key-00002")
    page, _receipt = await wait_for_messages(
        connection="pat:moved", load_profile=connection_loader, timeout_s=0
    )
    assert [m["body"] for m in page.messages] == ["for alice"]


async def test_a_connection_whose_profile_keeps_changing_is_an_error_and_parks_nothing(alice, bob):
    profiles = itertools.cycle([alice, bob])

    def flapping():
        return AgentProfile.objects.get(pk=next(profiles).pk), None

    with pytest.raises(RuntimeError, match="keeps changing"):
        await wait_for_messages(connection="pat:flapping", load_profile=flapping, timeout_s=50)
    assert wakeups.registry.count() == 0
