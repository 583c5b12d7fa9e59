"""Every Room tool through the official MCP client against a live server."""

import asyncio
import threading
import time

from django.db import connection

from osfoundry import wakeups
from rooms import services
from rooms.models import Proposal, Room
from tests.mcpclient import call_tool, connect
from tests.polling import until_async
from tests.rooms.helpers import APP


def propose(room, agent, files, key="key-00001"):
    return services.propose_snippet(
        caller=agent, room_id=str(room.pk), name="Timer", files=files, idempotency_key=key
    ).proposal


def approved_app(room, agent, files):
    proposal = propose(room, agent, files)
    return services.approve_proposal(owner=room.owner, proposal_id=proposal.pk)


def test_list_rooms_marks_local_rooms_unavailable(
    asgi_server, room, room_factory, agent, token_factory
):
    local = room_factory(name="Desk", kind=Room.Kind.LOCAL, members=[agent])
    result = call_tool(asgi_server.mcp_url, token_factory(agent), "list_rooms", {})
    rooms = {r["room_id"]: r for r in result.structured_content["rooms"]}
    assert rooms[str(room.pk)]["available"] is True
    assert rooms[str(local.pk)]["available"] is False


def test_read_room(asgi_server, room, agent, token_factory):
    result = call_tool(
        asgi_server.mcp_url, token_factory(agent), "read_room", {"room_id": str(room.pk)}
    )
    assert not result.is_error
    assert result.structured_content["name"] == "Team Falcon"


def test_every_tool_on_a_local_room_answers_unavailable(
    asgi_server, room_factory, agent, token_factory, files
):
    local = room_factory(name="Desk", kind=Room.Kind.LOCAL, members=[agent])
    token = token_factory(agent)
    room_id = str(local.pk)
    calls = [
        ("read_room", {"room_id": room_id}),
        ("list_room_apps", {"room_id": room_id}),
        ("read_room_app_status", {"room_id": room_id, "instance_id": room_id}),
        (
            "propose_room_snippet_app",
            {"room_id": room_id, "name": "T", "files": files, "idempotency_key": "key-00001"},
        ),
        ("poll_resource_events", {"resource_type": "room", "resource_id": room_id, "timeout_s": 0}),
    ]
    for name, arguments in calls:
        result = call_tool(asgi_server.mcp_url, token, name, arguments)
        assert result.is_error, name
        assert result.structured_content["error"]["message"] == "Local Rooms are unavailable"
    assert not Proposal.objects.exists()


def test_stranger_gets_not_found(asgi_server, room, stranger, token_factory):
    result = call_tool(
        asgi_server.mcp_url, token_factory(stranger), "read_room", {"room_id": str(room.pk)}
    )
    assert result.is_error
    error = result.structured_content["error"]
    assert error["code"] == "not_found"
    assert "list_rooms" in error["message"]


def test_list_room_apps_and_read_app_status(asgi_server, room, agent, token_factory, files):
    app = approved_app(room, agent, files)
    token = token_factory(agent)
    apps = call_tool(
        asgi_server.mcp_url, token, "list_room_apps", {"room_id": str(room.pk), "limit": 1}
    )
    assert [a["instance_id"] for a in apps.structured_content["apps"]] == [str(app.pk)]
    status = call_tool(
        asgi_server.mcp_url,
        token,
        "read_room_app_status",
        {"room_id": str(room.pk), "instance_id": str(app.pk)},
    )
    data = status.structured_content
    assert data["instance_id"] == str(app.pk)
    assert data["build"]["state"] == "ready"
    assert data["build"]["detail"].startswith("Checked when proposed: src/App.tsx")
    assert "files" not in data


def test_propose_snippet_is_pending_and_says_how_to_wait(
    asgi_server, room, agent, token_factory, files
):
    arguments = {
        "room_id": str(room.pk),
        "name": "Standup timer",
        "files": files,
        "idempotency_key": "snip-0123456789",
    }
    token = token_factory(agent)
    result = call_tool(asgi_server.mcp_url, token, "propose_room_snippet_app", arguments)
    assert not result.is_error
    data = result.structured_content
    assert data["status"] == "pending"
    assert "Connected → Needs your approval" in data["next_step"]
    assert "end your turn" in data["next_step"]
    proposal = Proposal.objects.get()
    assert proposal.files == files and proposal.proposed_by == agent
    assert not room.apps.exists()
    # A retry with the same key returns the same proposal, marked as a replay.
    again = call_tool(asgi_server.mcp_url, token, "propose_room_snippet_app", arguments)
    assert again.structured_content["proposal_id"] == str(proposal.pk)
    assert again.structured_content["replay"] is True
    assert Proposal.objects.count() == 1


def test_reused_key_with_other_content_is_refused(asgi_server, room, agent, token_factory, files):
    token = token_factory(agent)
    arguments = {
        "room_id": str(room.pk),
        "name": "A",
        "files": files,
        "idempotency_key": "key-00001",
    }
    call_tool(asgi_server.mcp_url, token, "propose_room_snippet_app", arguments)
    result = call_tool(
        asgi_server.mcp_url, token, "propose_room_snippet_app", {**arguments, "name": "B"}
    )
    assert result.is_error
    assert result.structured_content["error"]["field"] == "idempotency_key"
    assert Proposal.objects.count() == 1


def test_propose_repo_version(asgi_server, room, agent, token_factory):
    from rooms.models import Repository, RepositoryVersion

    repository = Repository.objects.create(project=room.project, name="timer")
    version = RepositoryVersion.objects.create(
        repository=repository, commit_hash="a" * 40, files={"src/App.tsx": APP}
    )
    result = call_tool(
        asgi_server.mcp_url,
        token_factory(agent),
        "propose_room_repo_app",
        {
            "room_id": str(room.pk),
            "name": "Timer",
            "repository_id": str(repository.pk),
            "version_id": str(version.pk),
            "idempotency_key": "repo-0000001",
        },
    )
    assert not result.is_error
    assert result.structured_content["kind"] == "repo"
    assert Proposal.objects.get().repository_version == version


def test_poll_returns_existing_events_at_once(asgi_server, room, agent, token_factory, files):
    propose(room, agent, files)
    result = call_tool(
        asgi_server.mcp_url,
        token_factory(agent),
        "poll_resource_events",
        {"resource_type": "room", "resource_id": str(room.pk), "timeout_s": 50},
    )
    data = result.structured_content
    assert [e["type"] for e in data["events"]] == ["proposal.created"]
    assert data["next_after_sequence"] == 1


def test_poll_returns_an_empty_list_after_the_timeout(asgi_server, room, agent, token_factory):
    result = call_tool(
        asgi_server.mcp_url,
        token_factory(agent),
        "poll_resource_events",
        {"resource_type": "room", "resource_id": str(room.pk), "after_sequence": 0, "timeout_s": 0},
    )
    assert result.structured_content == {"events": [], "next_after_sequence": 0}


def test_parked_poll_wakes_when_the_owner_approves(asgi_server, room, agent, token_factory, files):
    proposal = propose(room, agent, files)
    token = token_factory(agent)

    def approve_once_parked():
        deadline = time.monotonic() + 20
        while wakeups.registry.count() == 0 and time.monotonic() < deadline:
            time.sleep(0.01)
        try:
            services.approve_proposal(owner=room.owner, proposal_id=proposal.pk)
        finally:
            connection.close()  # else it outlives the run and the test database stays in use

    approver = threading.Thread(target=approve_once_parked)
    approver.start()
    result = call_tool(
        asgi_server.mcp_url,
        token,
        "poll_resource_events",
        {
            "resource_type": "room",
            "resource_id": str(room.pk),
            "after_sequence": 1,
            "timeout_s": 50,
        },
    )
    approver.join()
    types = [e["type"] for e in result.structured_content["events"]]
    assert "proposal.approved" in types
    assert wakeups.registry.count() == 0


def test_poll_waiter_is_released_when_the_client_goes_away(asgi_server, room, agent, token_factory):
    token = token_factory(agent)

    async def run():
        async with connect(asgi_server.mcp_url, token) as client:
            call = asyncio.ensure_future(
                client.call_tool(
                    "poll_resource_events",
                    {"resource_type": "room", "resource_id": str(room.pk), "timeout_s": 50},
                )
            )
            await until_async(wakeups.registry.count, "the poll to park")
            call.cancel()

    asyncio.run(run())
    deadline = time.monotonic() + 20
    while wakeups.registry.count() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert wakeups.registry.count() == 0
