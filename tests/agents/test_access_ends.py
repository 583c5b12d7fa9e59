"""Every way access can end ends parked and idle long-polls at once (agents/revocation.py).

Each test parks a REST long-poll (timeout_s=50) on a live server, after a first poll made the
server remember the connection (so the parked call trusted that memory and read nothing), then
ends access the way an admin or a script would: through the ORM, a service, or a cascade. The
parked call must answer the refusal; had it not noticed, it would answer 200 [] at its timeout
and the test would fail on that answer.
"""

import threading
from datetime import timedelta

import httpx
import pytest
from django.utils import timezone

from agents.models import AccessToken, AgentProfile
from agents.sending import send_agent_message, send_channel_message
from agents.services import claim_connected_profile, create_channel
from agents.tokens import revoke_access_token
from osfoundry import wakeups
from tests.mcpclient import rpc

from .test_long_poll_http import parked, wait

pytestmark = pytest.mark.django_db(transaction=True)


class ParkedWait:
    """A REST long-poll parked in a thread; answer() is its response once it returned."""

    def __init__(self, server, token, **query):
        assert wait(server, token, timeout_s=0).status_code == 200  # remembered from now on
        self.responses: list[httpx.Response] = []
        query = {"timeout_s": 50, **query}
        self.thread = threading.Thread(
            target=lambda: self.responses.append(wait(server, token, **query))
        )
        self.thread.start()
        parked(1)

    def answer(self) -> httpx.Response:
        self.thread.join(60)
        assert self.responses, "the long-poll never answered"
        return self.responses[0]


@pytest.fixture
def bob(agent_token, member):
    """bob-codex's raw token and profile."""
    return agent_token(member, "bob-codex")


def token_of(profile: AgentProfile) -> AccessToken:
    return AccessToken.objects.get(pk=int(profile.connection_key.removeprefix("pat:")))


def refused(response: httpx.Response, status: int, code: str) -> str:
    assert response.status_code == status, response.text
    error = response.json()["error"]
    assert error["code"] == code
    return error["message"]


def test_deactivating_the_user_ends_a_parked_wait(asgi_server, bob, member):
    token, _profile = bob
    parked_wait = ParkedWait(asgi_server, token)
    member.is_active = False
    member.save()
    refused(parked_wait.answer(), 401, "invalid_token")
    assert wakeups.registry.count() == 0
    # An idle re-poll is refused too: nothing this process remembered of the token counts.
    refused(wait(asgi_server, token, timeout_s=0), 401, "invalid_token")


def test_deleting_the_token_ends_a_parked_wait(asgi_server, bob):
    token, profile = bob
    parked_wait = ParkedWait(asgi_server, token)
    token_of(profile).delete()
    refused(parked_wait.answer(), 401, "invalid_token")
    refused(wait(asgi_server, token, timeout_s=0), 401, "invalid_token")


def test_revoking_the_token_ends_a_parked_wait(asgi_server, bob):
    token, profile = bob
    parked_wait = ParkedWait(asgi_server, token)
    revoke_access_token(token=token_of(profile))
    refused(parked_wait.answer(), 401, "invalid_token")


def test_an_expiry_set_in_the_past_ends_a_parked_wait(asgi_server, bob):
    token, profile = bob
    parked_wait = ParkedWait(asgi_server, token)
    row = token_of(profile)
    row.expires_at = timezone.now() - timedelta(seconds=1)
    row.save()
    refused(parked_wait.answer(), 401, "invalid_token")


def test_a_token_that_expires_while_parked_ends_the_wait_at_its_expiry(asgi_server, bob):
    token, profile = bob
    AccessToken.objects.filter(pk=token_of(profile).pk).update(
        expires_at=timezone.now() + timedelta(seconds=3)
    )
    # Nothing tells the server when the time comes (update() sends no signal): the wait
    # itself must not outlive the token.
    response = wait(asgi_server, token, timeout_s=50)
    message = refused(response, 401, "invalid_token")
    assert message == "This token expired while the call waited; use a valid token"


def test_deleting_the_user_ends_a_parked_wait(asgi_server, bob, member):
    token, profile = bob
    parked_wait = ParkedWait(asgi_server, token)
    member.delete()
    refused(parked_wait.answer(), 401, "invalid_token")
    assert not AgentProfile.objects.filter(pk=profile.pk).exists()


def test_deleting_the_profile_ends_a_parked_wait(asgi_server, bob):
    token, profile = bob
    parked_wait = ParkedWait(asgi_server, token)
    AgentProfile.objects.get(pk=profile.pk).delete()
    refused(parked_wait.answer(), 404, "no_profile")


def test_a_person_removed_from_the_project_leaves_its_channels(
    asgi_server, bob, agent_token, owner, member, project
):
    token, profile = bob
    _alice_token, alice = agent_token(owner, "alice-claude")
    channel = create_channel(project=project, name="general", members=[alice, profile])
    parked_wait = ParkedWait(asgi_server, token)
    project.members.remove(member)
    assert list(channel.members.values_list("handle", flat=True)) == ["alice-claude"]
    posted = send_channel_message(
        sender=alice,
        channel="general",
        to="bob-codex",
        body="after you left",
        idempotency_key="k-0001",
    )
    assert [s["handle"] for s in posted.skipped] == ["bob-codex"]
    # bob's own second agent still reaches him: its message is the first the parked wait sees.
    second = claim_connected_profile(
        user=member, connection_key="pat:second", handle="bob-second"
    ).profile
    send_agent_message(sender=second, to="bob-codex", body="still here", idempotency_key="k-0002")
    response = parked_wait.answer()
    assert response.status_code == 200
    assert [m["body"] for m in response.json()["messages"]] == ["still here"]


class ParkedCall:
    """A raw MCP tools/call parked in a thread (after `parked` waiters registered)."""

    def __init__(self, server, token, name, arguments, waiters=1):
        self.responses: list[httpx.Response] = []
        self.thread = threading.Thread(
            target=lambda: self.responses.append(
                rpc(
                    server.mcp_url,
                    "tools/call",
                    {"name": name, "arguments": arguments},
                    token=token,
                )
            )
        )
        self.thread.start()
        parked(waiters)

    def answer(self) -> httpx.Response:
        self.thread.join(60)
        assert self.responses, "the call never answered"
        return self.responses[0]


def test_a_parked_mcp_wait_answers_401_when_its_token_is_revoked(asgi_server, bob):
    token, profile = bob
    call = ParkedCall(asgi_server, token, "wait_for_messages", {"timeout_s": 50})
    revoke_access_token(token=token_of(profile))
    response = call.answer()
    assert response.status_code == 401
    assert 'error="invalid_token"' in response.headers["www-authenticate"]
    assert response.json()["error"]["message"] == (
        "Connect osFoundry to continue: in Claude Code run /mcp and choose Authenticate, "
        f"or add {asgi_server.url}/api/v1/mcp instead"
    )


def test_a_parked_room_poll_ends_when_its_member_is_removed(
    asgi_server, room, agent, token_factory
):
    token = token_factory(agent)
    arguments = {"resource_type": "room", "resource_id": str(room.pk), "timeout_s": 50}
    call = ParkedCall(asgi_server, token, "poll_resource_events", arguments)
    room.members.remove(agent)
    result = call.answer().json()["result"]
    assert result["isError"] is True
    assert result["structuredContent"]["error"]["code"] == "not_found"


def test_a_parked_room_poll_answers_401_when_its_person_is_deactivated(
    asgi_server, room, agent, token_factory
):
    token = token_factory(agent)
    arguments = {"resource_type": "room", "resource_id": str(room.pk), "timeout_s": 50}
    call = ParkedCall(asgi_server, token, "poll_resource_events", arguments)
    agent.is_active = False
    agent.save()
    response = call.answer()
    assert response.status_code == 401
    assert 'error="invalid_token"' in response.headers["www-authenticate"]


@pytest.mark.parametrize("cleared", ["the project's members", "the person's projects"])
def test_clearing_memberships_takes_the_agents_out_of_the_channels_and_wakes_them(
    agent_token, owner, member, project, monkeypatch, cleared
):
    from agents.models import agent_key
    from osfoundry.trust import ACCESS_KEY

    _alice_token, alice = agent_token(owner, "alice-claude")
    _bob_token, bob = agent_token(member, "bob-codex")
    channel = create_channel(project=project, name="general", members=[alice, bob])
    notified = []
    monkeypatch.setattr(wakeups, "notify", lambda keys, hints=None: notified.append(keys))
    if cleared == "the project's members":
        project.members.clear()
        left = [alice, bob]
    else:
        member.projects.clear()
        left = [bob]
    stayed = sorted({"alice-claude", "bob-codex"} - {p.handle for p in left})
    assert sorted(channel.members.values_list("handle", flat=True)) == stayed
    # Their waits check access again (a wake-up without entries), at once.
    assert [sorted(keys) for keys in notified] == [
        sorted([ACCESS_KEY, *(agent_key(p.pk) for p in left)])
    ]


@pytest.mark.parametrize("clear", ["room", "person"])
def test_a_parked_room_poll_ends_when_the_members_are_cleared(
    asgi_server, room, agent, token_factory, clear
):
    # clear() sends one pre_clear signal, naming no member: from the Room's side or the person's.
    token = token_factory(agent)
    arguments = {"resource_type": "room", "resource_id": str(room.pk), "timeout_s": 50}
    call = ParkedCall(asgi_server, token, "poll_resource_events", arguments)
    if clear == "room":
        room.members.clear()
    else:
        agent.member_rooms.clear()
    result = call.answer().json()["result"]
    assert result["isError"] is True
    assert result["structuredContent"]["error"]["code"] == "not_found"
