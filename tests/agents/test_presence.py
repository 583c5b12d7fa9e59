"""Presence: an agent is listening while a wait_for_messages is parked and for a minute after;
the console says so, and an idle agent's back-to-back waits do not each write it."""

import asyncio
from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from agents import presence
from agents.models import AgentProfile
from agents.presence import PRESENCE_WINDOW, is_listening, presence_label
from tests.agents.waiting import listening_until

from .test_wait_for_messages import in_thread, send, wait

pytestmark = pytest.mark.django_db(transaction=True)


def reload(profile):
    return AgentProfile.objects.get(pk=profile.pk)


async def test_a_parked_wait_makes_the_agent_listening_until_it_ends(alice, bob):
    waiting = asyncio.create_task(wait(bob, timeout_s=50))
    parked = await listening_until(bob)
    assert is_listening(parked)
    # Recorded as the wait's end, so it stays true for the whole wait and a minute after.
    assert parked.listening_until > timezone.now() + timedelta(seconds=40)
    await send(alice, "bob-codex", "wake up", "key-pres-01")
    await asyncio.wait_for(waiting, 10)


def test_an_agent_that_never_waited_or_stopped_a_minute_ago_is_not_listening(bob):
    assert presence_label(bob) == "never listened"
    bob.listening_until = timezone.now() - PRESENCE_WINDOW - timedelta(seconds=1)
    assert presence_label(bob) == "not listening"
    bob.listening_until = timezone.now() - PRESENCE_WINDOW + timedelta(seconds=5)
    assert presence_label(bob) == "listening"


async def test_back_to_back_waits_write_presence_only_when_it_would_lapse(bob, monkeypatch):
    writes = []
    original = presence.record_listening

    def counting(records):
        writes.append(records)
        original(records)

    monkeypatch.setattr(presence, "record_listening", counting)
    await wait(bob, timeout_s=0)
    await wait(bob, timeout_s=0)
    await wait(bob, timeout_s=1)
    # The first wait's record covers the next two (they end within PRESENCE_WINDOW of it).
    assert len(writes) == 1


async def test_waits_in_a_busy_process_are_recorded_together(alice, bob, monkeypatch):
    writes = []
    original = presence.record_listening

    def counting(records):
        writes.append(sorted(records))
        original(records)

    monkeypatch.setattr(presence, "record_listening", counting)
    monkeypatch.setattr(presence, "FLUSH_S", 0.2)
    await wait(alice, timeout_s=0)  # a quiet process: written at once
    await wait(bob, timeout_s=0)  # within FLUSH_S of that write: waits for the next flush
    assert writes == [[alice.pk]]
    found = await listening_until(bob)
    assert writes == [[alice.pk], [bob.pk]]
    assert is_listening(found)


def test_the_console_shows_the_owners_agents_presence(client, owner, alice):
    AgentProfile.objects.filter(pk=alice.pk).update(listening_until=timezone.now())
    client.force_login(owner)
    html = client.get(reverse("agents:messages")).content.decode()
    assert 'data-agent="alice-claude"' in html
    assert "data-presence>listening<" in html


@pytest.fixture
def carol(profile_factory, stranger):
    return profile_factory(stranger, "carol-agent")


def counting_writes(monkeypatch) -> list:
    writes = []
    original = presence.record_listening

    def counting(records):
        writes.append(sorted(records))
        original(records)

    monkeypatch.setattr(presence, "record_listening", counting)
    return writes


async def test_waits_while_a_flush_is_scheduled_join_that_flush(alice, bob, carol, monkeypatch):
    writes = counting_writes(monkeypatch)
    monkeypatch.setattr(presence, "FLUSH_S", 0.2)
    await wait(alice, timeout_s=0)  # written at once
    await wait(bob, timeout_s=0)  # schedules the next flush
    await wait(carol, timeout_s=0)  # one is scheduled already
    await listening_until(carol)
    assert writes == [[alice.pk], sorted([bob.pk, carol.pk])]
    assert is_listening(await in_thread(reload)(bob))


async def test_a_scheduled_flush_finding_its_records_written_writes_nothing(
    alice, bob, carol, monkeypatch
):
    writes = counting_writes(monkeypatch)
    takes = []
    take_pending = presence.memory.take_pending
    monkeypatch.setattr(presence.memory, "take_pending", lambda: takes.append(1) or take_pending())
    monkeypatch.setattr(presence, "FLUSH_S", 0.2)
    await wait(alice, timeout_s=0)  # written at once
    await wait(bob, timeout_s=0)  # schedules the next flush
    # FLUSH_S passes before the scheduled flush runs: the next wait writes at once, bob too.
    presence.memory.last_flush -= 1
    await wait(carol, timeout_s=0)
    assert writes == [[alice.pk], sorted([bob.pk, carol.pk])]
    while len(takes) < 3:  # the scheduled flush ran
        await asyncio.sleep(0.01)
    assert writes == [[alice.pk], sorted([bob.pk, carol.pk])]


def test_the_presence_memory_starts_over_past_its_bound():
    memory = presence.PresenceMemory()
    memory.stored.max_entries = 1
    until = timezone.now()
    for profile_id in (1, 2, 3):
        memory.add(profile_id, until)
    assert [memory.is_covered(n, until) for n in (1, 2, 3)] == [False, False, True]
    assert memory.pending == {1: until, 2: until, 3: until}  # what waits to be written stays
