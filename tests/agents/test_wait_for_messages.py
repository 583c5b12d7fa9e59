import asyncio

import pytest

from agents import idle
from agents.idle import BUSY_LOOP_NOTE
from agents.inbox import record_delivered, wait_for_messages
from osfoundry import wakeups
from osfoundry.disconnect import DisconnectWatcher
from osfoundry.errors import Invalid
from tests.agents.waiting import (
    in_thread,
    lasting_access,
    loader,
    parked,
    send,
    wait,
    wake_ups_live,
)

pytestmark = pytest.mark.django_db(transaction=True)


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
    await wake_ups_live()
    waiting = asyncio.create_task(
        wait_for_messages(
            connection="test:gone",
            load_profile=loader(bob),
            check_access=lasting_access,
            timeout_s=50,
            client=client,
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
    idle.memory.known.put("pat:test", idle.Known(alice.pk, 0, None))
    page, _receipt = await wait_for_messages(
        connection="pat:test", load_profile=loader(bob), check_access=lasting_access, timeout_s=0
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
