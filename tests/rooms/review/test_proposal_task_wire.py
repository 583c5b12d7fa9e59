"""Proposal tasks on the wire, raw: the subscriptions/listen stream as bytes (its content type,
the acknowledged task ids, the graceful end at shutdown), and 2025-11-25's experimental tasks
(params.task on tools/call, tasks/get, tasks/list, tasks/result, tasks/cancel), which the
Python and TypeScript SDKs' legacy modes can send."""

import json
import threading

import httpx
from django.contrib.auth import get_user_model

from osfoundry import wakeups
from rooms.models import Proposal, ProposalTask
from rooms.services import approve_proposal
from tests.mcpclient import MODERN, TASKS, modern_rpc, rpc


def propose_task(server, token, room, files, key="wire-key-0001"):
    arguments = {"room_id": str(room.pk), "name": "Timer", "files": files, "idempotency_key": key}
    params = {"name": "propose_room_snippet_app", "arguments": arguments}
    return modern_rpc(server.mcp_url, "tools/call", params, token=token, tasks=True).json()


def listen_request(task_ids):
    meta = {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {"extensions": {TASKS: {}}},
    }
    body = {
        "jsonrpc": "2.0",
        "id": "listen-1",
        "method": "subscriptions/listen",
        "params": {"_meta": meta, "notifications": {"taskIds": task_ids}},
    }
    headers = {"MCP-Protocol-Version": MODERN, "Mcp-Method": "subscriptions/listen"}
    return body, headers


def frames(response):
    """The JSON-RPC messages of an SSE response, as they arrive."""
    data = []
    for line in response.iter_lines():
        if line.startswith("data: "):
            data.append(line[len("data: ") :])
        elif line == "" and data:
            yield json.loads("\n".join(data))
            data = []


def test_listen_acknowledges_only_the_callers_tasks_and_pushes_the_decision(
    asgi_server, room, agent, owner, token_factory, files
):
    token = token_factory(agent)
    created = propose_task(asgi_server, token, room, files)["result"]
    assert created["resultType"] == "task"
    body, headers = listen_request([created["taskId"], "not-a-task-of-yours"])
    headers["Authorization"] = f"Bearer {token}"
    with httpx.stream("POST", asgi_server.mcp_url, json=body, headers=headers, timeout=30) as r:
        assert r.headers["content-type"] == "text/event-stream"
        assert r.headers["x-accel-buffering"] == "no"
        stream = frames(r)
        ack = next(stream)
        assert ack["method"] == "notifications/subscriptions/acknowledged"
        assert ack["params"]["notifications"] == {"taskIds": [created["taskId"]]}
        assert ack["params"]["_meta"] == {"io.modelcontextprotocol/subscriptionId": "listen-1"}
        proposal = Proposal.objects.get()
        approve_proposal(owner=owner, proposal_id=proposal.pk)
        notice = next(stream)
    assert notice["method"] == "notifications/tasks"
    assert notice["params"]["taskId"] == created["taskId"]
    assert notice["params"]["status"] == "completed"
    assert notice["params"]["_meta"] == {"io.modelcontextprotocol/subscriptionId": "listen-1"}


def test_listen_for_tasks_needs_the_extension_declared(asgi_server, agent, token_factory):
    body, headers = listen_request(["x"])
    body["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"] = {}
    headers["Authorization"] = f"Bearer {token_factory(agent)}"
    response = httpx.post(asgi_server.mcp_url, json=body, headers=headers)
    assert response.status_code == 400
    assert response.json()["error"]["code"] == -32021


def test_listen_needs_a_token_on_both_doors(asgi_server):
    body, headers = listen_request([])
    response = httpx.post(asgi_server.mcp_url, json=body, headers=headers)
    assert response.status_code == 401
    assert "www-authenticate" in response.headers


def test_a_shutdown_ends_a_listen_with_its_result(asgi_server, room, agent, token_factory, files):
    token = token_factory(agent)
    created = propose_task(asgi_server, token, room, files)["result"]
    body, headers = listen_request([created["taskId"]])
    headers["Authorization"] = f"Bearer {token}"
    try:
        with httpx.stream("POST", asgi_server.mcp_url, json=body, headers=headers, timeout=30) as r:
            stream = frames(r)
            assert next(stream)["method"] == "notifications/subscriptions/acknowledged"
            threading.Timer(0.2, wakeups.registry.drain).start()
            end = next(stream)
            assert list(stream) == []
    finally:
        wakeups.registry.is_draining = False
    assert end["id"] == "listen-1"
    assert end["result"]["resultType"] == "complete"
    assert end["result"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == "listen-1"


def test_the_2025_11_25_experimental_shape(asgi_server, room, agent, owner, token_factory, files):
    token = token_factory(agent)
    url = asgi_server.mcp_url
    init = rpc(url, "initialize", {"protocolVersion": "2025-11-25", "capabilities": {"tasks": {}}})
    assert init.json()["result"]["capabilities"]["tasks"]["requests"] == {"tools": {"call": {}}}
    arguments = {
        "room_id": str(room.pk),
        "name": "T",
        "files": files,
        "idempotency_key": "v1-key-01",
    }
    params = {"name": "propose_room_snippet_app", "arguments": arguments, "task": {"ttl": 60000}}
    created = rpc(url, "tools/call", params, token=token).json()["result"]
    task = created["task"]
    assert task["status"] == "working" and task["pollInterval"] == 30_000
    assert "review" in created["_meta"]["io.modelcontextprotocol/model-immediate-response"]
    got = rpc(url, "tasks/get", {"taskId": task["taskId"]}, token=token).json()["result"]
    assert (got["taskId"], got["status"]) == (task["taskId"], "working")
    listed = rpc(url, "tasks/list", {}, token=token).json()["result"]["tasks"]
    assert [t["taskId"] for t in listed] == [task["taskId"]]
    threading.Timer(
        0.3, approve_proposal, kwargs={"owner": owner, "proposal_id": Proposal.objects.get().pk}
    ).start()
    result = rpc(url, "tasks/result", {"taskId": task["taskId"]}, token=token).json()["result"]
    assert result["structuredContent"]["status"] == "approved"
    assert result["_meta"]["io.modelcontextprotocol/related-task"] == {"taskId": task["taskId"]}
    refused = rpc(url, "tasks/cancel", {"taskId": task["taskId"]}, token=token).json()["error"]
    assert refused["code"] == -32602 and "already approved" in refused["message"]


def test_a_legacy_call_without_params_task_gets_todays_result(
    asgi_server, room, agent, token_factory, files
):
    arguments = {
        "room_id": str(room.pk),
        "name": "T",
        "files": files,
        "idempotency_key": "v1-key-02",
    }
    params = {"name": "propose_room_snippet_app", "arguments": arguments}
    result = rpc(asgi_server.mcp_url, "tools/call", params, token=token_factory(agent)).json()
    assert result["result"]["structuredContent"]["status"] == "pending"
    assert "task" not in result["result"]


def test_a_listen_whose_person_was_deactivated_hands_over_no_decision(
    asgi_server, room, agent, owner, token_factory, files
):
    token = token_factory(agent)
    created = propose_task(asgi_server, token, room, files, key="wire-key-0009")["result"]
    body, headers = listen_request([created["taskId"]])
    headers["Authorization"] = f"Bearer {token}"
    with httpx.stream("POST", asgi_server.mcp_url, json=body, headers=headers, timeout=30) as r:
        stream = frames(r)
        assert next(stream)["method"] == "notifications/subscriptions/acknowledged"
        # No signal: a bulk update, as a data migration or SQL would make it.
        get_user_model().objects.filter(pk=agent.pk).update(is_active=False)
        approve_proposal(owner=owner, proposal_id=Proposal.objects.get().pk)
        answer = next(stream)
        assert list(stream) == []
    assert answer == {
        "jsonrpc": "2.0",
        "id": "listen-1",
        "error": {"code": -32001, "message": "This token is no longer valid; connect again"},
    }


def test_listen_acknowledges_only_the_kinds_it_honours(asgi_server, agent, token_factory):
    # Tools, prompts and resources never change here: a listen for their list changes is
    # acknowledged with none of them (the revision's rule: what the server does not support
    # is left out), and no task ids it did not ask for.
    body, headers = listen_request([])
    body["params"]["notifications"] = {"toolsListChanged": True, "resourcesListChanged": True}
    headers["Authorization"] = f"Bearer {token_factory(agent)}"
    with httpx.stream("POST", asgi_server.mcp_url, json=body, headers=headers, timeout=30) as r:
        ack = next(frames(r))
    assert ack == {
        "jsonrpc": "2.0",
        "method": "notifications/subscriptions/acknowledged",
        "params": {
            "_meta": {"io.modelcontextprotocol/subscriptionId": "listen-1"},
            "notifications": {},
        },
    }


def test_a_wake_up_re_reads_only_the_tasks_still_working(
    asgi_server, room, agent, owner, token_factory, files, monkeypatch
):
    from rooms.review import tasks

    token = token_factory(agent)
    first = propose_task(asgi_server, token, room, files, key="wire-key-0011")["result"]
    other = {**files, "src/extra.ts": "export const EXTRA = 1;\n"}
    second = propose_task(asgi_server, token, room, other, key="wire-key-0012")
    second = second["result"]
    read = tasks.read_tasks
    asked: list[list[str]] = []

    def spy(principal, task_ids, **kwargs):
        asked.append(sorted(task_ids))
        return read(principal, task_ids, **kwargs)

    monkeypatch.setattr(tasks, "read_tasks", spy)
    body, headers = listen_request([first["taskId"], second["taskId"]])
    headers["Authorization"] = f"Bearer {token}"
    with httpx.stream("POST", asgi_server.mcp_url, json=body, headers=headers, timeout=30) as r:
        stream = frames(r)
        assert next(stream)["method"] == "notifications/subscriptions/acknowledged"
        proposals = dict(ProposalTask.objects.values_list("pk", "proposal_id"))
        approve_proposal(owner=owner, proposal_id=proposals[first["taskId"]])
        assert next(stream)["params"]["taskId"] == first["taskId"]
        asked.clear()
        approve_proposal(owner=owner, proposal_id=proposals[second["taskId"]])
        notice = next(stream)
    assert notice["params"]["taskId"] == second["taskId"]
    assert notice["params"]["status"] == "completed"
    # The first task, decided and announced, is never read again.
    assert asked and all(ids == [second["taskId"]] for ids in asked)
