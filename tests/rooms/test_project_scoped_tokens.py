"""A personal token scoped to one project finds only that project's Rooms, proposals and
repositories, through every interface (REST, both MCP paths, the long-polls, the websocket
feed): the other projects' things are "not found" exactly as they are for a stranger."""

import httpx
import pytest
from channels.testing import WebsocketCommunicator

from agents.longpoll import PATH as WAIT_PATH
from agents.models import AccessToken
from agents.sending import send_channel_message
from agents.services import add_channel_member, claim_connected_profile, create_channel
from agents.tokens import create_access_token
from osfoundry.asgi import application
from osfoundry.auth import authenticate_bearer
from osfoundry.errors import Forbidden, Invalid, NotFound
from rooms.access import get_repo_version_for_user, get_repository_for_user
from rooms.models import Project, Proposal, Repository, RepositoryVersion, Room
from rooms.services import propose_snippet
from tests.mcpclient import call_tool

BOTH = "osfoundry:read osfoundry:write"


@pytest.fixture
def other_project(agent, stranger):
    other = Project.objects.create(name="Other")
    other.members.add(agent, stranger)
    return other


@pytest.fixture
def other_room(other_project, owner, agent):
    room = Room.objects.create(project=other_project, name="Elsewhere", owner=owner)
    room.members.add(agent)
    return room


@pytest.fixture
def scoped(agent, project, room, other_room):
    """A token of `agent`, who belongs to Rooms in two projects, for `project` only."""
    project.members.add(agent)
    return create_access_token(user=agent, scopes=BOTH, name="falcon only", project_id=project.pk)


@pytest.fixture
def scoped_token(scoped):
    return scoped[1]


def test_a_token_cannot_be_scoped_to_a_project_its_person_is_not_in(agent, stranger):
    theirs = Project.objects.create(name="Theirs")
    theirs.members.add(stranger)
    with pytest.raises(Invalid) as refused:
        create_access_token(user=agent, scopes=BOTH, project_id=theirs.pk)
    assert refused.value.field == "project"
    assert "is not a project of yours" in refused.value.message
    assert not AccessToken.objects.exists()


def test_rest_lists_and_reads_only_the_tokens_project(
    client, room, other_room, scoped_token, stranger, token_factory
):
    auth = {"HTTP_AUTHORIZATION": f"Bearer {scoped_token}"}
    listed = client.get("/api/v1/rooms", **auth).json()["rooms"]
    assert [r["room_id"] for r in listed] == [str(room.pk)]
    assert client.get(f"/api/v1/rooms/{room.pk}", **auth).status_code == 200
    mine = client.get(f"/api/v1/rooms/{other_room.pk}", **auth)
    strangers = client.get(
        f"/api/v1/rooms/{other_room.pk}",
        HTTP_AUTHORIZATION=f"Bearer {token_factory(stranger)}",
    )
    assert mine.status_code == strangers.status_code == 404
    assert mine.json() == strangers.json()
    for path in (f"/rooms/{other_room.pk}/apps", f"/rooms/{other_room.pk}/events"):
        assert client.get("/api/v1" + path, **auth).status_code == 404


def test_rest_refuses_a_proposal_to_a_room_of_another_project(
    client, other_room, scoped_token, files
):
    response = client.post(
        f"/api/v1/rooms/{other_room.pk}/proposals/snippet",
        {"name": "Timer", "files": files, "idempotency_key": "scoped-0001"},
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {scoped_token}",
    )
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "not_found"
    assert not Proposal.objects.exists()


def test_rest_hides_its_persons_own_proposal_in_another_project(
    client, agent, other_room, scoped_token, files
):
    # Made by the same person through a token that reaches every project.
    proposal = propose_snippet(
        caller=agent, room_id=other_room.pk, name="T", files=files, idempotency_key="wide-0001"
    ).proposal
    auth = {"HTTP_AUTHORIZATION": f"Bearer {scoped_token}"}
    response = client.get(f"/api/v1/proposals/{proposal.pk}", **auth)
    assert response.status_code == 404


def test_a_repository_of_another_project_is_not_found(agent, other_project, scoped_token):
    repo = Repository.objects.create(project=other_project, name="lib")
    version = RepositoryVersion.objects.create(
        repository=repo, commit_hash="a" * 40, files={"src/App.tsx": "x"}
    )
    user = authenticate_bearer(scoped_token).user
    with pytest.raises(NotFound):
        get_repo_version_for_user(user, repository_id=repo.pk, version_id=version.pk)
    # Without the token the same person reads it.
    assert get_repo_version_for_user(agent, repository_id=repo.pk, version_id=version.pk)


def test_git_finds_only_the_tokens_projects_repositories(
    agent, project, other_project, scoped_token, stranger
):
    # What the git server will do with the password of a clone or push.
    mine = Repository.objects.create(project=project, name="app")
    elsewhere = Repository.objects.create(project=other_project, name="lib")
    user = authenticate_bearer(scoped_token).user
    assert get_repository_for_user(user, mine.pk) == mine
    with pytest.raises(NotFound) as refused:
        get_repository_for_user(user, elsewhere.pk)
    with pytest.raises(NotFound) as strangers:
        get_repository_for_user(stranger, mine.pk)
    assert str(refused.value).replace(str(elsewhere.pk), "?") == str(strangers.value).replace(
        str(mine.pk), "?"
    )
    assert get_repository_for_user(agent, elsewhere.pk) == elsewhere  # unscoped: both


@pytest.mark.parametrize("path", ["/api/v1/mcp", "/api/v1/external-mcp"])
def test_mcp_finds_only_the_tokens_project_on_both_paths(
    asgi_server, room, other_room, scoped_token, path
):
    url = asgi_server.url + path
    listed = call_tool(url, scoped_token, "list_rooms", {})
    assert [r["room_id"] for r in listed.structured_content["rooms"]] == [str(room.pk)]
    for tool, arguments in (
        ("read_room", {"room_id": str(other_room.pk)}),
        ("list_room_apps", {"room_id": str(other_room.pk), "limit": 5}),
        (
            "poll_resource_events",
            {"resource_type": "room", "resource_id": str(other_room.pk), "timeout_s": 0},
        ),
    ):
        result = call_tool(url, scoped_token, tool, arguments)
        assert result.is_error, tool
        assert result.structured_content["error"]["code"] == "not_found", tool
    assert not call_tool(url, scoped_token, "read_room", {"room_id": str(room.pk)}).is_error


def test_an_mcp_proposal_records_its_token_and_stays_in_the_project(
    asgi_server, scoped, room, other_room, files
):
    token, raw = scoped
    arguments = {"name": "Timer", "files": files, "idempotency_key": "mcp-scoped-1"}
    outside = call_tool(
        asgi_server.mcp_url,
        raw,
        "propose_room_snippet_app",
        {"room_id": str(other_room.pk), **arguments},
    )
    assert outside.structured_content["error"]["code"] == "not_found"
    inside = call_tool(
        asgi_server.mcp_url, raw, "propose_room_snippet_app", {"room_id": str(room.pk), **arguments}
    )
    assert not inside.is_error
    proposal = Proposal.objects.get()
    assert (proposal.room, proposal.proposed_via) == (room, f"pat:{token.pk}")


@pytest.mark.django_db(transaction=True)
async def test_the_websocket_feed_closes_on_a_room_of_another_project(
    room, other_room, scoped_token
):
    headers = [(b"host", b"127.0.0.1"), (b"authorization", f"Bearer {scoped_token}".encode())]
    outside = WebsocketCommunicator(application, f"/ws/rooms/{other_room.pk}/events/", headers)
    connected, code = await outside.connect()
    assert (connected, code) == (False, 4404)
    inside = WebsocketCommunicator(application, f"/ws/rooms/{room.pk}/events/", headers)
    connected, _ = await inside.connect()
    assert connected
    await inside.disconnect()


def test_the_message_long_poll_gets_nothing_from_another_projects_channel(
    asgi_server, owner, agent, project, other_project, scoped, token_factory
):
    token, raw = scoped
    bob = claim_connected_profile(user=agent, connection_key=f"pat:{token.pk}", handle="bob-codex")
    project.members.add(owner)
    other_project.members.add(owner)
    alice_key = authenticate_bearer(token_factory(owner)).token_key
    alice = claim_connected_profile(user=owner, connection_key=alice_key, handle="alice-claude")
    elsewhere = create_channel(project=other_project, name="ops", members=[alice.profile])
    with pytest.raises(Forbidden):
        add_channel_member(channel=elsewhere, profile=bob.profile)
    elsewhere.members.add(bob.profile)  # as if it joined before its token was scoped
    here = create_channel(project=project, name="ops", members=[alice.profile, bob.profile])
    sent = send_channel_message(
        sender=alice.profile,
        channel=str(elsewhere.pk),
        to="bob-codex",
        body="not for you",
        idempotency_key="ops-away-01",
    )
    assert [s["handle"] for s in sent.as_dict()["skipped"]] == ["bob-codex"]
    send_channel_message(
        sender=alice.profile,
        channel=str(here.pk),
        to="bob-codex",
        body="for you",
        idempotency_key="ops-here-01",
    )
    response = httpx.get(
        asgi_server.url + WAIT_PATH,
        params={"timeout_s": 0, "after_sequence": 0},
        headers={"Authorization": f"Bearer {raw}"},
        timeout=30,
    )
    assert response.status_code == 200
    assert [m["body"] for m in response.json()["messages"]] == ["for you"]
