"""A parked wait woken up: what it reads, from the hints the wake-up carries or from the
database, and for which profile (agents.inbox.reopen_inbox, page_from_hints)."""

import asyncio
import itertools

import pytest

from agents import inbox
from agents.inbox import read_inbox, wait_for_messages
from agents.models import AgentProfile, agent_key
from agents.sending import send_agent_message, send_channel_message
from osfoundry import wakeups
from osfoundry.auth import Unauthenticated
from tests.agents.waiting import in_thread, lasting_access, parked, send, wait, wake_ups_live

pytestmark = pytest.mark.django_db(transaction=True)


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
    await wake_ups_live()
    waiting = asyncio.create_task(
        wait_for_messages(
            connection="pat:moved",
            load_profile=connection_loader,
            check_access=lasting_access,
            timeout_s=1,
        )
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
        connection="pat:moved",
        load_profile=connection_loader,
        check_access=lasting_access,
        timeout_s=0,
    )
    assert [m["body"] for m in page.messages] == ["for alice"]


async def test_a_connection_whose_profile_keeps_changing_is_an_error_and_parks_nothing(alice, bob):
    profiles = itertools.cycle([alice, bob])

    def flapping():
        return AgentProfile.objects.get(pk=next(profiles).pk), None

    with pytest.raises(RuntimeError, match="keeps changing"):
        await wait_for_messages(
            connection="pat:flapping",
            load_profile=flapping,
            check_access=lasting_access,
            timeout_s=50,
        )
    assert wakeups.registry.count() == 0


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


class Revocable:
    """load_profile and check_access for bob's connection, refused once `revoked` is set."""

    def __init__(self, profile):
        self.pk = profile.pk
        self.revoked = False

    def check_access(self):
        if self.revoked:
            raise Unauthenticated("This token was revoked")
        return None

    def load_profile(self):
        self.check_access()
        return AgentProfile.objects.get(pk=self.pk), None

    def wait(self, **arguments):
        return wait_for_messages(
            connection="test:revoked",
            load_profile=self.load_profile,
            check_access=self.check_access,
            **arguments,
        )


async def test_a_wake_up_without_hints_checks_access_before_reading(alice, bob):
    access = Revocable(bob)
    await wake_ups_live()
    waiting = asyncio.create_task(access.wait(timeout_s=50))
    await parked()
    access.revoked = True
    wakeups.notify([agent_key(bob.pk)])  # what revoking a token does (agents/revocation.py)
    with pytest.raises(Unauthenticated, match="revoked"):
        await asyncio.wait_for(waiting, 10)
    assert wakeups.registry.count() == 0


@pytest.mark.parametrize("hints", ["continue the cursor", "leave a gap"])
async def test_a_wake_up_that_carries_its_messages_checks_access_before_handing_them_over(
    alice, bob, monkeypatch, hints
):
    # Access ended without a wake-up of its own (the person deactivated with update()); the
    # next send's hints make the page without a read, or send the wait back to its inbox.
    access = Revocable(bob)
    await wake_ups_live()
    waiting = asyncio.create_task(access.wait(after_sequence=0, timeout_s=50))
    await parked()
    if hints == "leave a gap":
        await unnotified(monkeypatch, (alice, "bob-codex", "lost wake-up", "key-00000"))
    access.revoked = True
    await send(alice, "bob-codex", "not for a revoked token", "key-00001")
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
    await wake_ups_live()
    waiting = asyncio.create_task(
        wait_for_messages(
            connection="test:moved",
            load_profile=load_profile,
            check_access=lasting_access,
            timeout_s=1,
        )
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
