"""Proposals as tasks (the Tasks extension), through the official Python client in its automatic
mode (it chooses 2026-07-28): the owner's decision in the console completes the proposer's task,
pushed as notifications/tasks on subscriptions/listen and read back with tasks/get; tasks/cancel
withdraws; a retry answers the same task; another token sees none of it; the row outlives the
server. A client that did not declare the extension gets today's result."""

import asyncio
import json

import pytest
from django.test import Client
from django.urls import reverse

from rooms.models import Proposal, ProposalTask, RoomEvent
from rooms.services import propose_snippet
from tests.live import LiveServer
from tests.mcpclient import connect, modern_rpc
from tests.mcptasks import cancel_task, get_task, listening, propose_as_task, tasks_client


def snippet(room, files, key="task-key-0001", name="Standup timer"):
    return {"room_id": str(room.pk), "name": name, "files": files, "idempotency_key": key}


def decide(owner, task_id, action: str, **fields):
    """The owner's decision on the task's proposal, posted as the console's card posts it (a
    Django test client)."""
    proposal = proposal_of(task_id)
    client = Client()
    client.force_login(owner)
    data = {"content_hash": proposal.content_hash, **fields}
    response = client.post(reverse(f"rooms:{action}", args=[proposal.pk]), data)
    assert response.status_code in (200, 302), response.content[:500]


def proposal_of(task_id: str) -> Proposal:
    return ProposalTask.objects.select_related("proposal").get(pk=task_id).proposal


def run(coroutine):
    return asyncio.run(asyncio.wait_for(coroutine, 60))


def test_the_owners_approval_completes_the_task_and_reaches_its_listener(
    asgi_server, room, agent, owner, token_factory, files
):
    token = token_factory(agent)

    async def scenario():
        async with tasks_client(asgi_server.mcp_url, token) as (client, extension):
            created = await propose_as_task(
                client, "propose_room_snippet_app", snippet(room, files)
            )
            async with listening(client.session, extension, [created.task_id]) as acknowledged:
                # Listening: now the owner approves in the console.
                await asyncio.to_thread(decide, owner, created.task_id, "approve")
                notice = await extension.notices.get()
            got = await get_task(client, created.task_id)
            return client.protocol_version, created, acknowledged, notice, got

    version, created, acknowledged, notice, got = run(scenario())
    assert version == "2026-07-28"
    proposal = proposal_of(created.task_id)
    assert created.status == "working"
    assert proposal.get_absolute_url() in created.status_message
    assert created.poll_interval_ms == 30_000 and created.ttl_ms is None
    assert acknowledged["io.modelcontextprotocol/subscriptionId"]
    assert (notice.task_id, notice.status) == (created.task_id, "completed")
    assert notice.meta["io.modelcontextprotocol/subscriptionId"]
    result = notice.result["structuredContent"]
    assert result["status"] == "approved"
    assert result["instance_id"] == str(proposal.app_id)
    assert result["revision"] == 1
    assert got.result_type == "complete" and got.status == "completed"
    assert got.result == notice.result
    assert got.ttl_ms > 0  # kept a while after the decision


def test_a_tasks_client_call_returns_the_decision_once_it_is_made(
    asgi_server, room, agent, owner, token_factory, files
):
    token = token_factory(agent)

    async def scenario():
        async with tasks_client(asgi_server.mcp_url, token) as (client, _extension):
            call = asyncio.ensure_future(
                client.call_tool("propose_room_snippet_app", snippet(room, files))
            )
            while not await asyncio.to_thread(ProposalTask.objects.exists):
                await asyncio.sleep(0.05)
            task = await asyncio.to_thread(ProposalTask.objects.get)
            await asyncio.to_thread(decide, owner, task.pk, "decline", reason="Use tokens")
            return await call

    result = run(scenario())
    assert result.structured_content["status"] == "declined"
    assert result.structured_content["decision"]["reason"] == "Use tokens"
    assert "Declined by owner: Use tokens" in result.structured_content["next_step"]


def test_requested_changes_complete_the_task_with_the_summary_and_every_line_comment(
    asgi_server, room, agent, owner, token_factory, files
):
    token = token_factory(agent)
    comments = [
        {"path": "src/App.tsx", "line_start": 1, "line_end": 2, "body": "Name the hook"},
        {"path": "src/styles.css", "line_start": 3, "line_end": 3, "body": "Use a token"},
    ]

    async def scenario():
        async with tasks_client(asgi_server.mcp_url, token) as (client, extension):
            created = await propose_as_task(
                client, "propose_room_snippet_app", snippet(room, files)
            )
            async with listening(client.session, extension, [created.task_id]):
                await asyncio.to_thread(
                    decide,
                    owner,
                    created.task_id,
                    "request_changes",
                    summary="Two things",
                    comments=json.dumps(comments),
                )
                return await extension.notices.get()

    notice = run(scenario())
    assert notice.status == "completed"
    data = notice.result["structuredContent"]
    assert data["status"] == "changes_requested"
    assert data["decision"]["reason"] == "Two things"
    assert data["changes_summary"] == "Two things" and data["decline_reason"] is None
    assert ": Two things. Answer with revise_room_proposal" in notice.status_message
    assert [(c["path"], c["line_start"], c["line_end"], c["body"]) for c in data["comments"]] == [
        (c["path"], c["line_start"], c["line_end"], c["body"]) for c in comments
    ]
    assert "revise_room_proposal" in notice.status_message


def test_a_decision_made_before_the_listen_opened_arrives_once_it_does(
    asgi_server, room, agent, owner, token_factory, files
):
    token = token_factory(agent)

    async def scenario():
        async with tasks_client(asgi_server.mcp_url, token) as (client, extension):
            created = await propose_as_task(
                client, "propose_room_snippet_app", snippet(room, files)
            )
            await asyncio.to_thread(decide, owner, created.task_id, "approve")
            async with listening(client.session, extension, [created.task_id]):
                return await extension.notices.get()

    assert run(scenario()).status == "completed"


def test_cancel_withdraws_a_pending_proposal_and_is_refused_once_decided(
    asgi_server, room, agent, owner, token_factory, files
):
    token = token_factory(agent)

    async def scenario():
        async with tasks_client(asgi_server.mcp_url, token) as (client, _extension):
            first = await propose_as_task(client, "propose_room_snippet_app", snippet(room, files))
            acknowledged = await cancel_task(client, first.task_id)
            withdrawn = await get_task(client, first.task_id)
            other = snippet(
                room, {**files, "src/extra.ts": "export const x = 1;\n"}, key="key-2-other"
            )
            second = await propose_as_task(client, "propose_room_snippet_app", other)
            await asyncio.to_thread(decide, owner, second.task_id, "approve")
            refused = modern_rpc(
                asgi_server.mcp_url,
                "tasks/cancel",
                {"taskId": second.task_id},
                token=token,
                tasks=True,
            )
            return first, acknowledged, withdrawn, second, refused

    first, acknowledged, withdrawn, second, refused = run(scenario())
    assert acknowledged.result_type in (None, "complete")
    assert withdrawn.status == "cancelled"
    proposal = proposal_of(first.task_id)
    assert proposal.status == Proposal.Status.WITHDRAWN
    event = RoomEvent.objects.filter(room=room).order_by("sequence").values_list("type", flat=True)
    assert "proposal.withdrawn" in list(event)
    console = Client()
    console.force_login(owner)
    inbox = console.get(reverse("rooms:inbox")).content.decode()
    assert str(proposal.pk) not in inbox
    card = console.get(proposal.get_absolute_url()).content.decode()
    assert "data-withdrawn" in card and "Its agent withdrew it" in card
    error = refused.json()["error"]
    assert error["code"] == -32602
    assert "already approved" in error["message"]
    assert proposal_of(second.task_id).status == Proposal.Status.APPROVED


def test_the_same_key_twice_and_identical_content_answer_the_same_task(
    asgi_server, room, agent, token_factory, files
):
    token = token_factory(agent)

    async def scenario():
        async with tasks_client(asgi_server.mcp_url, token) as (client, _extension):
            first = await propose_as_task(client, "propose_room_snippet_app", snippet(room, files))
            again = await propose_as_task(client, "propose_room_snippet_app", snippet(room, files))
            fresh_key = snippet(room, files, key="another-key-01")
            collapsed = await propose_as_task(client, "propose_room_snippet_app", fresh_key)
            return first, again, collapsed

    first, again, collapsed = run(scenario())
    assert first.task_id == again.task_id == collapsed.task_id
    assert ProposalTask.objects.count() == 1 and Proposal.objects.count() == 1


def test_another_token_finds_no_task(asgi_server, room, agent, token_factory, files):
    mine, theirs = token_factory(agent), token_factory(agent)

    async def scenario():
        async with tasks_client(asgi_server.mcp_url, mine) as (client, _extension):
            created = await propose_as_task(
                client, "propose_room_snippet_app", snippet(room, files)
            )
        return created

    created = run(scenario())
    for method in ("tasks/get", "tasks/cancel"):
        response = modern_rpc(
            asgi_server.mcp_url, method, {"taskId": created.task_id}, token=theirs, tasks=True
        )
        assert response.json()["error"] == {
            "code": -32602,
            "message": "Failed to retrieve task: Task not found",
        }
    assert proposal_of(created.task_id).status == Proposal.Status.PENDING
    assert len(created.task_id) >= 43  # 256 random bits


def test_a_task_outlives_the_server_that_made_it(
    asgi_server, room, agent, owner, token_factory, files
):
    token = token_factory(agent)

    async def propose():
        async with tasks_client(asgi_server.mcp_url, token) as (client, _extension):
            return await propose_as_task(client, "propose_room_snippet_app", snippet(room, files))

    created = run(propose())
    asgi_server.stop()
    decide(owner, created.task_id, "approve")
    restarted = LiveServer().start()
    try:

        async def read():
            async with tasks_client(restarted.mcp_url, token) as (client, _extension):
                return await get_task(client, created.task_id)

        got = run(read())
    finally:
        restarted.stop()
    assert got.status == "completed"
    assert got.result["structuredContent"]["status"] == "approved"


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_a_client_without_the_extension_gets_todays_result(
    asgi_server, room, agent, token_factory, files, mode
):
    token = token_factory(agent)

    async def scenario():
        async with connect(asgi_server.mcp_url, token, mode=mode) as client:
            result = await client.call_tool("propose_room_snippet_app", snippet(room, files))
            return client.protocol_version, result

    version, result = asyncio.run(scenario())
    assert version == {"auto": "2026-07-28", "legacy": "2025-11-25"}[mode]
    data = result.structured_content
    assert data["status"] == "pending"
    assert "end your turn" in data["next_step"]
    assert not ProposalTask.objects.exists()


def test_task_methods_need_the_extension_declared(asgi_server, room, agent, token_factory, files):
    token = token_factory(agent)
    propose_snippet(
        caller=agent, room_id=str(room.pk), name="x", files=files, idempotency_key="key-00001"
    )
    response = modern_rpc(asgi_server.mcp_url, "tasks/get", {"taskId": "x" * 43}, token=token)
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == -32021
    assert error["data"] == {
        "requiredCapabilities": {"extensions": {"io.modelcontextprotocol/tasks": {}}}
    }


def test_discover_announces_the_tasks_extension(asgi_server):
    result = modern_rpc(asgi_server.mcp_url, "server/discover").json()["result"]
    assert result["capabilities"]["extensions"] == {"io.modelcontextprotocol/tasks": {}}


# What the tasks methods refuse, word for word, over 2026-07-28: a task id that is not a string,
# one nobody gave this caller, input for a task that asks for none, a listen whose taskIds are not
# a list of strings, a cancel with a read-only token.


def propose_task(server, token, room, files, key="refusal-key-01"):
    arguments = {"room_id": str(room.pk), "name": "Timer", "files": files, "idempotency_key": key}
    params = {"name": "propose_room_snippet_app", "arguments": arguments}
    return modern_rpc(server.mcp_url, "tools/call", params, token=token, tasks=True).json()


def test_a_missing_task_id_is_an_invalid_param(asgi_server, agent, token_factory):
    answer = modern_rpc(
        asgi_server.mcp_url,
        "tasks/get",
        {"taskId": None},
        token=token_factory(agent),
        tasks=True,
        headers={"Mcp-Name": "x"},
    ).json()
    assert answer["error"] == {"code": -32602, "message": "taskId: must be a string"}


def test_a_task_this_caller_was_never_given_is_not_found(
    asgi_server, room, agent, stranger, token_factory, files
):
    created = propose_task(asgi_server, token_factory(agent), room, files)["result"]
    for method in ("tasks/get", "tasks/cancel"):
        answer = modern_rpc(
            asgi_server.mcp_url,
            method,
            {"taskId": created["taskId"]},
            token=token_factory(stranger),
            tasks=True,
        ).json()
        assert answer["error"] == {
            "code": -32602,
            "message": "Failed to retrieve task: Task not found",
        }


def test_input_for_a_proposal_task_is_refused_it_asks_for_none(
    asgi_server, room, agent, token_factory, files
):
    token = token_factory(agent)
    created = propose_task(asgi_server, token, room, files)["result"]
    answer = modern_rpc(
        asgi_server.mcp_url, "tasks/update", {"taskId": created["taskId"]}, token=token, tasks=True
    ).json()
    assert answer["error"] == {
        "code": -32602,
        "message": f"Task {created['taskId']!r} is working: it asks for no input",
    }


@pytest.mark.parametrize("task_ids", ["one", [1, 2], {"a": 1}])
def test_a_listen_whose_task_ids_are_not_a_list_of_strings_is_refused(
    asgi_server, agent, token_factory, task_ids
):
    response = modern_rpc(
        asgi_server.mcp_url,
        "subscriptions/listen",
        {"notifications": {"taskIds": task_ids}},
        token=token_factory(agent),
        tasks=True,
    )
    assert response.status_code == 400
    assert response.json()["error"] == {
        "code": -32602,
        "message": "notifications.taskIds: a list of strings",
    }


def test_a_read_only_token_cannot_cancel_a_task(asgi_server, room, agent, token_factory, files):
    created = propose_task(asgi_server, token_factory(agent), room, files)["result"]
    reader = token_factory(agent, scopes="osfoundry:read")
    response = modern_rpc(
        asgi_server.mcp_url, "tasks/cancel", {"taskId": created["taskId"]}, token=reader, tasks=True
    )
    assert response.status_code == 403
    assert response.json()["error"] == {
        "code": -32001,
        "message": "This token can only read: it lacks the osfoundry:write scope; create a "
        "token with osfoundry:write",
    }
    assert 'error="insufficient_scope"' in response.headers["www-authenticate"]
