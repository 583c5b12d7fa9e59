"""A retry of a proposal the owner already decided answers the decision, with no "wait for
approval" step: over REST and MCP (rooms/api.py and rooms/tools.py, proposal results)."""

import json

from rooms.models import Proposal
from rooms.services import approve_proposal, decline_proposal
from tests.mcpclient import call_tool


def test_a_rest_retry_after_approval_reports_the_app_and_no_next_step(
    client, room, owner, agent, token_factory, files
):
    token = token_factory(agent)
    body = {"name": "Timer", "files": files, "idempotency_key": "decided-0001"}

    def post():
        return client.post(
            f"/api/v1/rooms/{room.pk}/proposals/snippet",
            json.dumps(body),
            content_type="application/json",
            HTTP_AUTHORIZATION=f"Bearer {token}",
        )

    created = post().json()
    assert "next_step" in created  # pending: the caller is told how to wait
    app = approve_proposal(owner=owner, proposal_id=created["proposal_id"])
    retry = post()
    assert retry.status_code == 200
    data = retry.json()
    assert (data["proposal_id"], data["status"], data["replay"]) == (
        created["proposal_id"],
        "approved",
        True,
    )
    assert data["instance_id"] == str(app.pk)
    assert "next_step" not in data
    assert data["review_url"].endswith(f"/proposals/{created['proposal_id']}/")
    assert Proposal.objects.count() == 1


def test_an_mcp_retry_after_a_decline_reports_it_and_no_next_step(
    asgi_server, room, owner, agent, token_factory, files
):
    token = token_factory(agent)
    arguments = {
        "room_id": str(room.pk),
        "name": "Timer",
        "files": files,
        "idempotency_key": "decided-0002",
    }
    first = call_tool(asgi_server.mcp_url, token, "propose_room_snippet_app", arguments)
    proposal_id = first.structured_content["proposal_id"]
    assert "next_step" in first.structured_content
    decline_proposal(owner=owner, proposal_id=proposal_id, reason="not now")
    again = call_tool(asgi_server.mcp_url, token, "propose_room_snippet_app", arguments)
    assert not again.is_error
    data = again.structured_content
    assert (data["proposal_id"], data["status"], data["replay"]) == (proposal_id, "declined", True)
    assert "next_step" not in data
    assert data["review_url"] == f"{asgi_server.url}/proposals/{proposal_id}/"
    assert Proposal.objects.count() == 1
