"""What the tasks methods refuse, word for word, over 2026-07-28: a task id that is not a
string, one nobody gave this caller, input for a task that asks for none, a listen whose
taskIds are not a list of strings, a cancel with a read-only token."""

import pytest

from tests.mcpclient import modern_rpc


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
