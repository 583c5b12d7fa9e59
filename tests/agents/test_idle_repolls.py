"""An idle re-poll parks without a database hop, and never at the price of a message: whatever
the wake-ups cannot vouch for sends the poll back to the database."""

import asyncio
from datetime import timedelta

import pytest
from django.utils import timezone

from agents import idle
from agents.inbox import confirm_delivery, record_delivered, wait_for_messages
from agents.models import AgentProfile
from agents.sequences import InboxSequences
from agents.tokens import revoke_access_token
from osfoundry import wakeups
from osfoundry.auth import Unauthenticated
from osfoundry.wakeups import Registry
from tests.agents.waiting import wake_ups_live
from tests.polling import until_async

from .test_wait_for_messages import in_thread, send

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
async def _wake_ups_live():
    await wake_ups_live()


class Loader:
    """load_profile for one profile, counting the database reads, and its check_access,
    counting the checks."""

    def __init__(self, profile, access_ends_at=None):
        self.pk = profile.pk
        self.access_ends_at = access_ends_at
        self.reads = 0
        self.checks = 0

    def __call__(self):
        self.reads += 1
        return AgentProfile.objects.get(pk=self.pk), self.access_ends_at

    def check_access(self):
        self.checks += 1
        return self.access_ends_at


async def wait_on(loader, connection="pat:bob", **arguments):
    return await wait_for_messages(
        connection=connection, load_profile=loader, check_access=loader.check_access, **arguments
    )


async def poll(loader, connection="pat:bob", **arguments):
    """The page a poll returns; its receipt is confirmed only where a test says so."""
    page, _receipt = await wait_on(loader, connection, **arguments)
    return page


async def test_an_idle_re_poll_reads_only_whether_its_caller_may_still_read(bob):
    loader = Loader(bob)
    await poll(loader, timeout_s=0)
    reads, checks = loader.reads, loader.checks
    page = await poll(loader, timeout_s=1)
    assert page.as_dict() == {"messages": [], "next_after_sequence": 0, "has_more": False}
    assert (loader.reads, loader.checks) == (reads, checks + 1)
    assert wakeups.registry.count() == 0


async def test_a_message_sent_between_two_polls_is_read(alice, bob):
    loader = Loader(bob)
    await poll(loader, timeout_s=0)
    await send(alice, "bob-codex", "between polls", "key-00001")
    page, receipt = await wait_on(loader, timeout_s=50)
    assert [m["body"] for m in page.messages] == ["between polls"]
    await confirm_delivery(receipt)
    reads = loader.reads
    # Delivered and recorded: the next poll is idle again.
    assert (await poll(loader, timeout_s=1)).messages == []
    assert loader.reads == reads


async def test_a_wake_up_without_its_entries_sends_the_next_poll_to_the_database(
    alice, bob, monkeypatch
):
    loader = Loader(bob)
    await poll(loader, timeout_s=0)
    # As from another process, when the entries were too large to travel with the wake-up.
    notify = wakeups.notify
    monkeypatch.setattr(wakeups, "notify", lambda keys, hints=None: notify(keys))
    await send(alice, "bob-codex", "big", "key-00001")
    page = await poll(loader, timeout_s=50)
    assert [m["body"] for m in page.messages] == ["big"]


async def test_without_reliable_wake_ups_every_poll_reads(bob, monkeypatch):
    loader = Loader(bob)
    await poll(loader, timeout_s=0)
    monkeypatch.setattr(wakeups.registry, "is_reliable", lambda: False)
    reads = loader.reads
    await poll(loader, timeout_s=1)
    assert loader.reads == reads + 1


async def test_the_token_and_cursors_are_read_again_after_the_recheck_interval(bob, monkeypatch):
    loader = Loader(bob)
    monkeypatch.setattr(idle, "IDLE_RECHECK_S", 0)
    await poll(loader, timeout_s=0)
    reads = loader.reads
    await poll(loader, timeout_s=1)
    assert loader.reads == reads + 1


def test_what_was_read_is_trusted_only_while_access_lasts():
    ended = timezone.now() - timedelta(seconds=1)
    idle.memory.remember("pat:gone", idle.InboxState(1, 0, 0, 0, ended))
    idle.memory.remember("pat:kept", idle.InboxState(2, 0, 0, 0, None))
    assert idle.memory.known.get("pat:gone") is None
    assert idle.memory.known.get("pat:kept") is not None


async def test_a_wait_whose_access_ended_is_refused(bob):
    loader = Loader(bob, access_ends_at=timezone.now() - timedelta(seconds=1))
    with pytest.raises(Unauthenticated, match="expired while the call waited"):
        await poll(loader, timeout_s=0)
    assert idle.memory.profile_id("pat:bob") is None  # forgotten, not trusted


async def test_revoking_the_token_ends_the_trust_at_once(bob):
    from agents.models import AccessToken

    loader = Loader(bob)
    connection = bob.connection_key
    await poll(loader, connection, timeout_s=0)
    token = await in_thread(AccessToken.objects.get)(pk=int(connection.removeprefix("pat:")))
    await in_thread(revoke_access_token)(token=token)
    reads = loader.reads
    await poll(loader, connection, timeout_s=1)
    assert loader.reads == reads + 1


async def test_a_moved_stored_cursor_is_followed(alice, bob):
    loader = Loader(bob)
    await send(alice, "bob-codex", "one", "key-00001")
    first = await poll(loader, timeout_s=0)
    assert [m["sequence"] for m in first.messages] == [1]
    # Another process wrote the response and moved the stored cursor; this one did not see it.
    await in_thread(record_delivered)(profile_id=bob.pk, sequence=1)
    waiting = asyncio.create_task(poll(loader, timeout_s=50))
    await until_async(lambda: wakeups.registry.count() >= 1, "the poll to park")
    await send(alice, "bob-codex", "two", "key-00002")
    page = await asyncio.wait_for(waiting, 10)
    assert [m["sequence"] for m in page.messages] == [2]


def test_a_read_that_raced_a_wake_up_is_not_recorded():
    registry = Registry()
    known = InboxSequences(registry)
    before = known.generation
    registry.wake_local(["agent:1"])  # something happened that the read may not have seen
    known.confirm("agent:1", 5, before)
    assert known.latest("agent:1") is None
    known.confirm("agent:1", 5, known.generation)
    assert known.latest("agent:1") == 5


def test_hints_only_move_the_latest_sequence_forward():
    registry = Registry()
    known = InboxSequences(registry)
    registry.wake_local(["agent:1"], {"agent:1": [{"sequence": 7}, {"sequence": 6}]})
    assert known.latest("agent:1") == 7
    known.confirm("agent:1", 5, known.generation)  # an older read arriving late
    assert known.latest("agent:1") == 7
    # A wake-up whose hints are older (another process's, delivered late) changes nothing.
    registry.wake_local(["agent:1"], {"agent:1": [{"sequence": 6}]})
    assert known.latest("agent:1") == 7
    registry.wake_local(["room:1"])  # another family's wake-up: nothing to do with inboxes
    assert known.latest("agent:1") == 7
    registry.wake_all_local()  # a resubscription: wake-ups may have been missed
    assert known.latest("agent:1") is None


def test_nothing_is_known_while_wake_ups_may_be_missed():
    registry = Registry()
    known = InboxSequences(registry)
    known.confirm("agent:1", 3, known.generation)
    registry.is_reliable = lambda: False
    assert known.latest("agent:1") is None
    registry.is_reliable = lambda: True
    registry.forget_all()  # the subscription was lost meanwhile
    assert known.latest("agent:1") is None


def test_the_remembered_sequences_are_bounded():
    # 20,000 agents fit many times over; past the bound everything is read again, once.
    known = InboxSequences(Registry())
    known.max_entries = 3
    for n in range(3):
        known.confirm(f"agent:{n}", 1, known.generation)
    assert known.latest("agent:0") == 1
    known.confirm("agent:new", 4, known.generation)
    assert known.latest("agent:0") is None
    assert known.latest("agent:new") == 4


async def test_a_delivery_confirmed_after_the_connection_was_forgotten_moves_the_cursor(alice, bob):
    loader = Loader(bob)
    await send(alice, "bob-codex", "one", "key-00001")
    page, receipt = await wait_on(loader, timeout_s=0)
    assert [m["sequence"] for m in page.messages] == [1]
    idle.memory.forget("pat:bob")  # as when the connection's access changed meanwhile
    await confirm_delivery(receipt)
    stored = await in_thread(AgentProfile.objects.get)(pk=bob.pk)
    assert stored.last_delivered_sequence == 1
    assert idle.memory.profile_id("pat:bob") is None  # nothing half-remembered
    assert (await poll(loader, timeout_s=0)).messages == []  # read again: already delivered


def test_the_memory_of_connections_starts_over_past_its_bound():
    memory = idle.InboxMemory()
    memory.known.max_entries = 2
    for n in (1, 2, 3, 4):
        memory.remember(f"pat:{n}", idle.InboxState(n, 0, 0, 0, None))
    assert [memory.profile_id(f"pat:{n}") for n in (1, 2, 3, 4)] == [None, None, 3, 4]


def test_many_zero_timeout_polls_forget_only_the_stale_ones():
    memory = idle.InboxMemory()
    for n in range(9_999):
        memory.zero_polls.put(n, 0, ttl=-1)  # polls of long ago
    memory.zero_poll(20_001, 5)  # a busy loop in progress
    memory.zero_poll(20_002, 7)  # past the bound: the stale entries go, the recent one stays
    assert len(memory.zero_polls) == 2
    assert memory.wait_budget(20_001, 5, 0) == (idle.REPEAT_MIN_WAIT_S, idle.BUSY_LOOP_NOTE)
    assert memory.wait_budget(3, 0, 0) == (0.0, None)
