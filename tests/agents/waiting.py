"""Helpers of the tests of agents.inbox.wait_for_messages."""

from asgiref.sync import sync_to_async
from django.db import connection

from agents.inbox import wait_for_messages
from agents.models import AgentProfile
from agents.sending import send_agent_message
from osfoundry import wakeups
from tests.polling import until_async


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


def lasting_access():
    """check_access for a caller whose access lasts."""
    return None


async def wake_ups_live():
    """With REDIS_URL, wake-ups vouch for nothing until this process's subscription is up, and
    when it comes up it wakes every parked wait to look in the database: a wait parked before
    that could read between two sends of its test. Wait for it first, as a running server has."""
    if wakeups.bridge is None:
        return
    wakeups.ensure_started()
    await until_async(lambda: wakeups.bridge.is_live, "the wake-up subscription")


async def wait(profile, **arguments):
    await wake_ups_live()
    page, _receipt = await wait_for_messages(
        connection=f"test:{profile.pk}",
        load_profile=loader(profile),
        check_access=lasting_access,
        **arguments,
    )
    return page


async def listening_until(profile):
    """The profile as stored once a wait has recorded its presence (listening_until set)."""

    def stored():
        found = AgentProfile.objects.get(pk=profile.pk)
        return found if found.listening_until is not None else None

    return await until_async(in_thread(stored), "presence to be recorded")


async def parked(count=1):
    # A wait that answered or crashed instead of parking fails the test here, not hangs it.
    await until_async(lambda: wakeups.registry.count() >= count, f"{count} parked waits")
