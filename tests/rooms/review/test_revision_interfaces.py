"""The revision tools through the official MCP client, and their REST mirrors."""

import json

from rooms import services
from rooms.models import Proposal
from rooms.review.revisions import request_changes
from tests.mcpclient import call_tool
from tests.rooms.helpers import changed


def approved_app(room, agent, files):
    proposal = services.propose_snippet(
        caller=agent, room_id=str(room.pk), name="Timer", files=files, idempotency_key="key-00001"
    ).proposal
    return services.approve_proposal(owner=room.owner, proposal_id=proposal.pk)


def test_update_review_revise_and_read_over_mcp(
    asgi_server, room, owner, agent, token_factory, files
):
    app = approved_app(room, agent, files)
    token = token_factory(agent)
    result = call_tool(
        asgi_server.mcp_url,
        token,
        "propose_room_app_update",
        {
            "room_id": str(room.pk),
            "instance_id": str(app.pk),
            "files": changed(files, "v2"),
            "idempotency_key": "update-0001",
        },
    )
    assert not result.is_error, result.content
    update = result.structured_content
    assert update["status"] == "pending" and update["base_revision"] == 1
    assert update["instance_id"] == str(app.pk)
    assert update["review_url"] == f"{asgi_server.url}/proposals/{update['proposal_id']}/"
    assert "read_room_proposal" in update["next_step"]

    request_changes(
        owner=owner,
        proposal_id=update["proposal_id"],
        summary="One thing",
        comments=[{"path": "src/App.tsx", "line_start": 2, "line_end": 2, "body": "Rename it"}],
    )
    review = call_tool(
        asgi_server.mcp_url, token, "read_room_proposal", {"proposal_id": update["proposal_id"]}
    ).structured_content
    assert review["status"] == "changes_requested"
    assert review["decision"]["reason"] == "One thing" and review["decision"]["by"] == "owner"
    (comment,) = review["comments"]
    assert (comment["path"], comment["line_start"], comment["body"]) == (
        "src/App.tsx",
        2,
        "Rename it",
    )
    assert comment["outdated"] is False
    assert review["review_url"].endswith(f"/proposals/{update['proposal_id']}/")

    revised = call_tool(
        asgi_server.mcp_url,
        token,
        "revise_room_proposal",
        {
            "proposal_id": update["proposal_id"],
            "files": changed(files, "v3"),
            "idempotency_key": "revise-0001",
        },
    ).structured_content
    assert revised["previous_proposal_id"] == update["proposal_id"] and revised["revision"] == 2
    assert Proposal.objects.get(pk=revised["proposal_id"]).is_pending


def test_revision_tools_refuse_bad_input_with_the_field(
    asgi_server, room, agent, token_factory, files
):
    app = approved_app(room, agent, files)
    token = token_factory(agent)
    unknown = call_tool(
        asgi_server.mcp_url,
        token,
        "propose_room_app_update",
        {
            "room_id": str(room.pk),
            "instance_id": "nope",
            "files": files,
            "idempotency_key": "update-0001",
        },
    )
    assert unknown.is_error
    assert unknown.structured_content["error"]["field"] == "instance_id"
    same = call_tool(
        asgi_server.mcp_url,
        token,
        "propose_room_app_update",
        {
            "room_id": str(room.pk),
            "instance_id": str(app.pk),
            "files": files,
            "idempotency_key": "update-0002",
        },
    )
    assert same.is_error and "nothing to review" in same.structured_content["error"]["message"]
    extra = call_tool(
        asgi_server.mcp_url,
        token,
        "revise_room_proposal",
        {"proposal_id": str(app.proposal_id), "files": files, "idempotency_key": "x" * 8, "why": 1},
    )
    assert extra.is_error
    assert Proposal.objects.count() == 1


def rest(client, method, path, token, body=None):
    headers = {"HTTP_AUTHORIZATION": f"Bearer {token}"}
    if body is None:
        return getattr(client, method)(f"/api/v1{path}", **headers)
    return getattr(client, method)(
        f"/api/v1{path}", json.dumps(body), content_type="application/json", **headers
    )


def test_rest_mirrors(client, room, owner, agent, member, token_factory, files):
    app = approved_app(room, agent, files)
    token = token_factory(agent)
    body = {"files": changed(files, "v2"), "idempotency_key": "update-0001", "name": "Timer 2"}
    created = rest(client, "post", f"/rooms/{room.pk}/apps/{app.pk}/updates", token, body)
    assert created.status_code == 201, created.content
    proposal_id = created.json()["proposal_id"]
    assert created.json()["name"] == "Timer 2"
    replay = rest(client, "post", f"/rooms/{room.pk}/apps/{app.pk}/updates", token, body)
    assert replay.status_code == 200 and replay.json()["replay"] is True
    assert "/revisions" in created.json()["next_step"]

    request_changes(owner=owner, proposal_id=proposal_id, summary="Not yet")
    read = rest(client, "get", f"/proposals/{proposal_id}", token).json()
    assert read["status"] == "changes_requested" and read["decision"]["reason"] == "Not yet"
    assert read["comments"] == [] and read["review_url"].endswith(f"/proposals/{proposal_id}/")

    revision = rest(
        client,
        "post",
        f"/proposals/{proposal_id}/revisions",
        token,
        {"files": changed(files, "v3"), "idempotency_key": "revise-0001"},
    )
    assert revision.status_code == 201 and revision.json()["revision"] == 2
    strange = rest(
        client,
        "post",
        f"/proposals/{proposal_id}/revisions",
        token_factory(member),
        {"files": changed(files, "v4"), "idempotency_key": "revise-0002"},
    )
    assert strange.status_code == 404
    assert strange.json()["error"]["field"] == "proposal_id"
    bad = rest(
        client,
        "post",
        f"/rooms/{room.pk}/apps/{app.pk}/updates",
        token,
        {"files": "not a map", "idempotency_key": "update-0003"},
    )
    assert bad.status_code == 422 or bad.status_code == 400
    assert "files" in bad.content.decode()
    read_only = rest(
        client,
        "post",
        f"/rooms/{room.pk}/apps/{app.pk}/updates",
        token_factory(agent, "osfoundry:read"),
        {"files": changed(files, "v5"), "idempotency_key": "update-0004"},
    )
    assert read_only.status_code == 403
    assert Proposal.objects.filter(app=app).count() == 3  # v1, the update and its revision
