"""A wait at its edges: the moment the caller's access ends, what presence records for a wait
that answers at once or cannot wait at all, and which polls count as busy re-polls. The clock
is frozen on a presence bucket's boundary, so each recorded moment is exact."""

import asyncio
from datetime import UTC, datetime, timedelta

import pytest
from django.utils import timezone

from agents.idle import BUSY_LOOP_NOTE
from agents.inbox import confirm_delivery, wait_for_messages
from agents.models import AgentProfile
from osfoundry.auth import Unauthenticated
from osfoundry.errors import NotFound
from tests.agents.waiting import lasting_access, listening_until, loader, send, wait

pytestmark = pytest.mark.django_db(transaction=True)

NOW = datetime(2026, 12, 2, 9, 0, 0, tzinfo=UTC)  # on a 10-second presence bucket


@pytest.fixture
def frozen(monkeypatch):
    monkeypatch.setattr(timezone, "now", lambda: NOW)


async def wait_ending(profile, access_ends_at, **arguments):
    """A wait whose access (the token's expiry, say) ends at `access_ends_at`."""

    def load_profile():
        return AgentProfile.objects.get(pk=profile.pk), access_ends_at

    page, _receipt = await wait_for_messages(
        connection=f"test:{profile.pk}",
        load_profile=load_profile,
        check_access=lambda: access_ends_at,
        **arguments,
    )
    return page


async def recorded_listening(profile):
    return (await listening_until(profile)).listening_until


async def test_a_wait_that_answers_at_once_records_listening_until_now(frozen, alice, bob):
    await send(alice, "bob-codex", "waiting already", "key-edge-01")
    page = await wait(bob, timeout_s=50)
    assert [message["body"] for message in page.messages] == ["waiting already"]
    assert await recorded_listening(bob) == NOW


async def test_a_wait_is_listening_only_until_the_callers_access_ends(frozen, bob):
    # The token expires in 20 s; the wait asked for 50: presence must not outlive the token.
    waiting = asyncio.create_task(wait_ending(bob, NOW + timedelta(seconds=20), timeout_s=50))
    assert await recorded_listening(bob) == NOW + timedelta(seconds=20)
    waiting.cancel()


async def test_a_wait_whose_access_already_ended_records_no_listening_and_is_refused(frozen, bob):
    with pytest.raises(Unauthenticated) as refused:
        await wait_ending(bob, NOW - timedelta(seconds=10), timeout_s=50)
    assert refused.value.message == "This token expired while the call waited; use a valid token"
    assert await recorded_listening(bob) == NOW


async def test_access_ending_this_instant_is_ended_and_a_moment_later_is_not(frozen, bob):
    with pytest.raises(Unauthenticated):
        await wait_ending(bob, NOW, timeout_s=0)
    page = await wait_ending(bob, NOW + timedelta(milliseconds=500), timeout_s=0)
    assert page.messages == [] and page.note is None


async def test_an_empty_wait_that_waited_is_no_busy_re_poll(bob):
    # Only a poll that did not wait (timeout_s=0) counts toward the busy-loop note.
    assert (await wait(bob, timeout_s=1)).messages == []
    answered_from_memory = await wait(bob, timeout_s=0)  # this process knows bob is idle
    assert (answered_from_memory.messages, answered_from_memory.note) == ([], None)
    assert (await wait(bob, timeout_s=0)).note == BUSY_LOOP_NOTE


async def test_a_connection_refused_once_is_checked_again_not_answered_from_memory(alice, bob):
    connection = f"test:{bob.pk}"
    await send(alice, "bob-codex", "one", "key-edge-02")
    page, receipt = await wait_for_messages(
        connection=connection, load_profile=loader(bob), check_access=lasting_access, timeout_s=0
    )
    await confirm_delivery(receipt)  # this process now remembers bob's connection as idle

    def gone():
        raise NotFound("Agent profile not found")

    # A re-read (after_sequence=0) finds the connection's profile gone (its token is valid)...
    with pytest.raises(NotFound):
        await wait_for_messages(
            connection=connection,
            load_profile=gone,
            check_access=lasting_access,
            after_sequence=0,
            timeout_s=0,
        )
    # ...so the next idle poll must ask again, not answer from what the process remembered.
    with pytest.raises(NotFound):
        await wait_for_messages(
            connection=connection, load_profile=gone, check_access=lasting_access, timeout_s=0
        )
