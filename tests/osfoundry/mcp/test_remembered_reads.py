"""A busy agent's calls skip the database for the token check and read_room (osfoundry.trust,
rooms.live.remembered_rooms), and still never outlive what ended or changed: whatever revokes a
token, deactivates its person, removes a member or renames a Room is heard before the next call.

The server here is one process; with Redis, wake-ups it publishes itself come back to nobody
(each process forgets on its own notify), so trusting memory is forced on for the test:
without a live subscription a process trusts nothing (tested below), which is correct but
proves nothing about forgetting."""

from datetime import timedelta

import pytest
from django.utils import timezone

from agents.models import AccessToken
from agents.tokens import create_access_token, revoke_access_token
from osfoundry import auth, memory, trust, wakeups
from osfoundry.mcp import protocol
from osfoundry.mcp.protocol import EXTERNAL_MCP_PATH
from rooms.models import Project, Room
from tests.mcpclient import rpc

BOTH = "osfoundry:read osfoundry:write"


@pytest.fixture
def trusting(monkeypatch):
    monkeypatch.setattr(wakeups.registry, "is_reliable", lambda: True)


@pytest.fixture
def database_checks(monkeypatch):
    """How many times a token was read from the database."""
    reads = []
    real = auth.authenticate_bearer

    def counted(raw, *, resource=None):
        reads.append(raw)
        return real(raw, resource=resource)

    monkeypatch.setattr(auth, "authenticate_bearer", counted)
    monkeypatch.setattr(protocol, "authenticate_bearer", counted)
    return reads


def read_room(server, token: str, room_id) -> tuple[int, dict]:
    response = rpc(
        server.url + EXTERNAL_MCP_PATH,
        "tools/call",
        {"name": "read_room", "arguments": {"room_id": str(room_id)}},
        token=token,
    )
    return response.status_code, response.json()


def room_answer(server, token: str, room_id) -> dict:
    status, body = read_room(server, token, room_id)
    assert status == 200, body
    return body["result"]


def assert_refused_as_unauthenticated(server, token: str, room_id) -> None:
    status, body = read_room(server, token, room_id)
    assert status == 401
    assert body["error"]["code"] == -32001
    assert "result" not in body


def test_a_token_is_read_once_and_then_remembered(
    asgi_server, trusting, database_checks, room, agent, token_factory
):
    token = token_factory(agent)
    for _ in range(3):
        assert (
            room_answer(asgi_server, token, room.pk)["structuredContent"]["name"] == "Team Falcon"
        )
    assert database_checks == [token]


def test_a_revoked_token_is_refused_at_the_next_call(
    asgi_server, trusting, database_checks, room, agent
):
    token, raw = create_access_token(user=agent, scopes=BOTH)
    room_answer(asgi_server, raw, room.pk)
    room_answer(asgi_server, raw, room.pk)
    revoke_access_token(token=token)
    assert_refused_as_unauthenticated(asgi_server, raw, room.pk)
    assert database_checks == [raw, raw]  # remembered once, read again after the revocation


def test_a_deactivated_person_is_refused_at_the_next_call(
    asgi_server, trusting, room, agent, token_factory
):
    token = token_factory(agent)
    room_answer(asgi_server, token, room.pk)
    agent.is_active = False
    agent.save()
    assert_refused_as_unauthenticated(asgi_server, token, room.pk)


def test_a_token_given_an_expiry_through_its_form_is_refused_once_expired(
    asgi_server, trusting, room, agent
):
    token, raw = create_access_token(user=agent, scopes=BOTH)
    room_answer(asgi_server, raw, room.pk)
    token.expires_at = timezone.now() - timedelta(seconds=1)
    token.save()  # as the admin's edit form saves it
    assert_refused_as_unauthenticated(asgi_server, raw, room.pk)


def test_a_token_is_never_trusted_past_its_expiry(monkeypatch, trusting, agent):
    raws = {}
    for name, expires_in in (("hour", timedelta(hours=1)), ("soon", timedelta(seconds=5))):
        token, raws[name] = create_access_token(user=agent, scopes=BOTH, name=name)
        AccessToken.objects.filter(pk=token.pk).update(expires_at=timezone.now() + expires_in)
        assert auth.authenticate_remembered(raws[name]) is not None
    now = memory.monotonic()
    monkeypatch.setattr(memory, "monotonic", lambda: now + 6)
    assert trust.known_principal(raws["hour"], None) is not None  # trusted for TRUST_S
    assert trust.known_principal(raws["soon"], None) is None  # expired: ask the database


def test_a_member_removed_no_longer_reads_the_room(
    asgi_server, trusting, room, agent, token_factory
):
    token = token_factory(agent)
    room_answer(asgi_server, token, room.pk)
    room.members.remove(agent)
    result = room_answer(asgi_server, token, room.pk)
    assert result["isError"] is True
    assert result["structuredContent"]["error"]["code"] == "not_found"
    assert result["structuredContent"]["error"]["field"] == "room_id"


def test_a_renamed_room_reads_with_its_new_name(asgi_server, trusting, room, agent, token_factory):
    token = token_factory(agent)
    assert room_answer(asgi_server, token, room.pk)["structuredContent"]["name"] == "Team Falcon"
    room.name = "Team Osprey"
    room.save()
    assert room_answer(asgi_server, token, room.pk)["structuredContent"]["name"] == "Team Osprey"
    room.project.name = "Renamed project"
    room.project.save()
    assert room_answer(asgi_server, token, room.pk)["structuredContent"]["project"] == (
        "Renamed project"
    )


def test_the_room_is_remembered_between_calls(asgi_server, trusting, room, agent, token_factory):
    # update() sends no signal: what a process remembers outlives it (for at most
    # rooms.live.remembered_rooms.REMEMBER_S), which shows that the second read came from memory.
    token = token_factory(agent)
    room_answer(asgi_server, token, room.pk)
    Room.objects.filter(pk=room.pk).update(name="Renamed quietly")
    assert room_answer(asgi_server, token, room.pk)["structuredContent"]["name"] == "Team Falcon"


def test_a_remembered_room_is_not_found_for_a_token_of_another_project(
    asgi_server, trusting, room, agent, token_factory
):
    token = token_factory(agent)
    room_answer(asgi_server, token, room.pk)  # remembered, for readers of its project
    elsewhere = Project.objects.create(name="Elsewhere")
    elsewhere.members.add(agent)
    _token, scoped = create_access_token(user=agent, scopes=BOTH, project_id=elsewhere.pk)
    result = room_answer(asgi_server, scoped, room.pk)
    assert result["structuredContent"]["error"]["code"] == "not_found"


def test_a_remembered_room_is_not_found_for_a_stranger(
    asgi_server, trusting, room, agent, stranger, token_factory
):
    room_answer(asgi_server, token_factory(agent), room.pk)
    result = room_answer(asgi_server, token_factory(stranger), room.pk)
    assert result["structuredContent"]["error"]["code"] == "not_found"


def test_nothing_is_remembered_while_wake_ups_may_be_missed(
    asgi_server, monkeypatch, database_checks, room, agent, token_factory
):
    monkeypatch.setattr(wakeups.registry, "is_reliable", lambda: False)
    token = token_factory(agent)
    room_answer(asgi_server, token, room.pk)
    Room.objects.filter(pk=room.pk).update(name="Renamed quietly")
    assert room_answer(asgi_server, token, room.pk)["structuredContent"]["name"] == (
        "Renamed quietly"
    )
    assert database_checks == [token, token]


def test_a_call_that_parks_checks_its_token_in_the_database(
    asgi_server, trusting, database_checks, room, agent, token_factory
):
    token = token_factory(agent)
    room_answer(asgi_server, token, room.pk)
    arguments = {"resource_type": "room", "resource_id": str(room.pk), "timeout_s": 0}
    response = rpc(
        asgi_server.url + EXTERNAL_MCP_PATH,
        "tools/call",
        {"name": "poll_resource_events", "arguments": arguments},
        token=token,
    )
    assert response.json()["result"]["isError"] is False
    assert database_checks == [token, token]


def test_an_over_long_token_is_refused_without_a_database_read(
    asgi_server, trusting, database_checks, room
):
    assert_refused_as_unauthenticated(asgi_server, "x" * (auth.MAX_TOKEN_CHARS + 1), room.pk)
    assert database_checks == []


def test_a_token_checked_a_moment_ago_is_vouched_for_without_a_database_read(
    trusting, database_checks, agent, token_factory
):
    # Two calls of one agent checked at once: the second finds what the first remembered.
    token = token_factory(agent)
    first = auth.authenticate_remembered(token)
    second = auth.authenticate_remembered(token)
    assert first is not None and second is first
    assert second.user.pk == agent.pk
    assert database_checks == [token]
