"""Access that ends without a signal ends the long-polls too.

`QuerySet.update()`, a data migration or SQL deactivate a user without sending post_save, so no
wake-up tells any process. Django's own checks read `is_active` per request; a long-poll (REST
and MCP) checks its principal against the database when it parks and before it hands over
anything it woke for, so nothing a process remembered of the connection outlives access by more
than the one wait already parked (which may still end with its empty page).
"""

import asyncio
import threading

import httpx
import pytest
from django.contrib.auth.models import User
from mcp.shared.exceptions import MCPError

from agents.models import AgentProfile, InboxEntry
from agents.sending import send_agent_message
from osfoundry.mcp.jsonrpc import UNAUTHORIZED
from tests.mcpclient import connect

from .test_access_ends import ParkedWait, refused
from .test_long_poll_http import parked, wait

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def alice(agent_token, owner):
    return agent_token(owner, "alice-claude")[1]


@pytest.fixture
def bob(agent_token, member):
    """bob-codex's raw token and profile."""
    return agent_token(member, "bob-codex")


def set_active_without_signals(user, is_active: bool) -> None:
    assert User.objects.filter(pk=user.pk).update(is_active=is_active) == 1


def send_to_bob(alice, body: str) -> None:
    sent = send_agent_message(sender=alice, to="bob-codex", body=body, idempotency_key=body)
    assert [d["handle"] for d in sent.delivered] == ["bob-codex"]


def delivered_cursor(profile: AgentProfile) -> int:
    return AgentProfile.objects.get(pk=profile.pk).last_delivered_sequence


def test_an_idle_re_poll_is_refused_once_the_user_is_deactivated_without_a_signal(
    asgi_server, bob, member
):
    token, _profile = bob
    assert wait(asgi_server, token, timeout_s=0).status_code == 200  # remembered from now on
    set_active_without_signals(member, False)
    auth = {"Authorization": f"Bearer {token}"}
    assert httpx.get(asgi_server.url + "/api/v1/rooms", headers=auth).status_code == 401
    refused(wait(asgi_server, token, timeout_s=1), 401, "invalid_token")


def test_a_parked_wait_hands_over_nothing_sent_after_a_deactivation_without_a_signal(
    asgi_server, alice, bob, member
):
    token, profile = bob
    parked_wait = ParkedWait(asgi_server, token)
    set_active_without_signals(member, False)
    send_to_bob(alice, "after the deactivation")
    refused(parked_wait.answer(), 401, "invalid_token")
    assert delivered_cursor(profile) == 0
    # Kept, not lost: once the person is active again, the next poll delivers it.
    set_active_without_signals(member, True)
    response = wait(asgi_server, token, timeout_s=0)
    assert [m["body"] for m in response.json()["messages"]] == ["after the deactivation"]


class ParkedMcpWait:
    """wait_for_messages through the official client, parked in a thread of its own; what it
    answered is either the tool's result or the error the client raised."""

    def __init__(self, server, token):
        self.outcome: list = []

        async def call():
            async with connect(server.mcp_url, token) as client:
                return await client.call_tool("wait_for_messages", {"timeout_s": 50})

        def run():
            try:
                self.outcome.append(asyncio.run(call()))
            except BaseException as exc:  # the client raises (in a group) on a 401
                self.outcome.append(exc)

        self.thread = threading.Thread(target=run)
        self.thread.start()
        parked(1)

    def answer(self):
        self.thread.join(60)
        assert self.outcome, "the call never answered"
        return self.outcome[0]


def raised(error: BaseException) -> list[BaseException]:
    """The errors inside the groups the client raised."""
    if isinstance(error, BaseExceptionGroup):
        return [leaf for inner in error.exceptions for leaf in raised(inner)]
    return [error]


def test_a_parked_mcp_wait_hands_over_nothing_sent_after_a_deactivation_without_a_signal(
    asgi_server, alice, bob, member
):
    token, profile = bob
    call = ParkedMcpWait(asgi_server, token)
    set_active_without_signals(member, False)
    send_to_bob(alice, "after the deactivation")
    answer = call.answer()
    assert isinstance(answer, BaseException), f"the wait answered {answer!r}"
    # The endpoint's 401, as the client reports it: sign in again.
    [error] = raised(answer)
    assert isinstance(error, MCPError) and error.code == UNAUTHORIZED, repr(error)
    assert error.message.startswith("Connect osFoundry to continue")
    assert delivered_cursor(profile) == 0
    assert InboxEntry.objects.filter(recipient=profile).count() == 1
