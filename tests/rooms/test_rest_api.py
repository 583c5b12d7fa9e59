"""The REST API through Django's test client: success, domain errors, auth and scopes."""

import json

import pytest

from agents.tokens import revoke_access_token
from rooms.models import Proposal, Room
from rooms.services import approve_proposal
from tests.refusals import api_not_found


@pytest.fixture
def write_token(agent, token_factory):
    return token_factory(agent)


@pytest.fixture
def read_token(agent, token_factory):
    return token_factory(agent, "osfoundry:read")


def call(client, method, path, token=None, body=None):
    headers = {"HTTP_AUTHORIZATION": f"Bearer {token}"} if token else {}
    if body is None:
        return getattr(client, method)(f"/api/v1{path}", **headers)
    return getattr(client, method)(
        f"/api/v1{path}", json.dumps(body), content_type="application/json", **headers
    )


def propose(client, room, token, files, key="key-000001"):
    body = {"name": "Timer", "files": files, "idempotency_key": key}
    return call(client, "post", f"/rooms/{room.pk}/proposals/snippet", token, body)


def test_list_and_read_rooms(client, room, read_token):
    response = call(client, "get", "/rooms", read_token)
    assert response.status_code == 200
    assert [r["room_id"] for r in response.json()["rooms"]] == [str(room.pk)]
    detail = call(client, "get", f"/rooms/{room.pk}", read_token).json()
    assert detail["name"] == "Team Falcon" and detail["kind"] == "cloud"


def test_propose_then_replay_then_status(client, room, owner, write_token, files):
    created = propose(client, room, write_token, files)
    assert created.status_code == 201
    body = created.json()
    assert body["status"] == "pending" and body["replay"] is False
    assert "Connected → Needs your approval" in body["next_step"]
    replay = propose(client, room, write_token, files)
    assert replay.status_code == 200 and replay.json()["replay"] is True
    approve_proposal(owner=owner, proposal_id=body["proposal_id"])
    status = call(client, "get", f"/proposals/{body['proposal_id']}", write_token).json()
    assert status["status"] == "approved" and status["instance_id"]
    apps = call(client, "get", f"/rooms/{room.pk}/apps?limit=1", write_token).json()["apps"]
    assert apps[0]["instance_id"] == status["instance_id"]
    app = call(client, "get", f"/rooms/{room.pk}/apps/{status['instance_id']}", write_token)
    assert app.json()["build"]["state"] == "ready"
    assert app.json()["build"]["detail"].startswith("Checked when proposed: src/App.tsx")


def test_reused_key_with_new_content_is_409(client, room, write_token, files):
    propose(client, room, write_token, files)
    response = propose(client, room, write_token, {**files, "src/x.ts": "1"})
    assert response.status_code == 409
    assert response.json()["error"]["code"] == "idempotency_key_reused"
    assert Proposal.objects.count() == 1


def test_missing_or_bad_token_is_401(client, room, write_token):
    for token in (None, "osf_wrong", "garbage"):
        response = call(client, "get", "/rooms", token)
        assert response.status_code == 401
        assert response.json()["error"]["code"] == "invalid_token"
        assert response["WWW-Authenticate"].startswith("Bearer")


def test_revoked_token_is_401(client, agent, room):
    from agents.tokens import create_access_token

    token, raw = create_access_token(user=agent, scopes="osfoundry:read")
    revoke_access_token(token=token)
    assert call(client, "get", "/rooms", raw).status_code == 401


def test_read_only_token_cannot_propose(client, room, read_token, files):
    response = propose(client, room, read_token, files)
    assert response.status_code == 403
    assert response.json()["error"] == {
        "code": "insufficient_scope",
        "message": "This token can only read: it lacks the osfoundry:write scope; create a "
        "token with osfoundry:write",
    }
    assert 'scope="osfoundry:write"' in response["WWW-Authenticate"]
    assert not Proposal.objects.exists()


def test_stranger_gets_404_for_room_and_proposal(
    client, room, stranger, token_factory, write_token, files
):
    proposal_id = propose(client, room, write_token, files).json()["proposal_id"]
    token = token_factory(stranger)
    api_not_found(call(client, "get", f"/rooms/{room.pk}", token), "Room", "room_id")
    api_not_found(call(client, "get", f"/proposals/{proposal_id}", token), "Proposal")
    api_not_found(propose(client, room, token, files, key="key-stranger"), "Room", "room_id")


def test_member_gets_404_for_pending_content(
    client, room, member, token_factory, write_token, files
):
    proposal_id = propose(client, room, write_token, files).json()["proposal_id"]
    response = call(client, "get", f"/proposals/{proposal_id}", token_factory(member))
    api_not_found(response, "Proposal", "proposal_id")


def test_local_room_is_unavailable(client, room_factory, agent, write_token, files):
    local = room_factory(kind=Room.Kind.LOCAL, members=[agent])
    for path in (f"/rooms/{local.pk}", f"/rooms/{local.pk}/apps", f"/rooms/{local.pk}/events"):
        response = call(client, "get", path, write_token)
        assert response.status_code == 409
        assert response.json()["error"]["message"] == "Local Rooms are unavailable"
    assert propose(client, local, write_token, files).json()["error"]["message"] == (
        "Local Rooms are unavailable"
    )


@pytest.mark.parametrize(
    ("query", "message"),
    [("limit=0", "limit: must be at least 1"), ("limit=51", "limit: must be at most 50")],
)
def test_limit_out_of_range_names_the_field(client, room, read_token, query, message):
    response = call(client, "get", f"/rooms/{room.pk}/apps?{query}", read_token)
    assert response.status_code == 400
    assert response.json()["error"]["message"] == message


def test_events_after_a_sequence(client, room, write_token, files):
    propose(client, room, write_token, files)
    page = call(client, "get", f"/rooms/{room.pk}/events?after_sequence=0", write_token).json()
    assert [e["type"] for e in page["events"]] == ["proposal.created"]
    assert page["next_after_sequence"] == 1
    bad = call(client, "get", f"/rooms/{room.pk}/events?after_sequence=-1", write_token)
    assert bad.status_code == 400
    assert bad.json()["error"]["field"] == "after_sequence"


def test_invalid_json_is_a_clear_400(client, room, write_token):
    response = client.post(
        f"/api/v1/rooms/{room.pk}/proposals/snippet",
        "{not json",
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {write_token}",
    )
    assert response.status_code == 400
    assert response.json()["error"]["message"].startswith("body: not valid JSON")


def test_body_that_is_not_an_object_is_a_clear_400(client, room, write_token):
    response = call(client, "post", f"/rooms/{room.pk}/proposals/snippet", write_token, [1, 2])
    assert response.status_code == 400
    assert Proposal.objects.count() == 0


def test_openapi_docs_are_served(client):
    assert client.get("/api/v1/docs").status_code == 200
    schema = client.get("/api/v1/openapi.json").json()
    assert "/api/v1/rooms/{room_id}/proposals/snippet" in schema["paths"]
    # The long-poll is served before Django; it is listed all the same, with its parameters.
    wait = schema["paths"]["/api/v1/agents/messages/wait"]["get"]
    assert [p["name"] for p in wait["parameters"]] == ["after_sequence", "timeout_s", "limit"]
    assert wait["security"] == [{"Bearer": []}]


def test_an_oversized_body_is_413_pointing_to_the_repository_route(client, room, write_token):
    from django.conf import settings

    body = {"name": "Big", "files": {"src/App.tsx": "x" * (settings.DATA_UPLOAD_MAX_MEMORY_SIZE)}}
    response = call(client, "post", f"/rooms/{room.pk}/proposals/snippet", write_token, body)
    assert response.status_code == 413
    assert "propose_room_repo_app" in response.json()["error"]["message"]
    assert not Proposal.objects.exists()


def test_propose_a_repository_version(client, room, project, write_token, owner):
    from rooms.models import Repository, RepositoryVersion

    repo = Repository.objects.create(project=project, name="timer")
    version = RepositoryVersion.objects.create(
        repository=repo,
        commit_hash="c" * 40,
        files={"src/App.tsx": "export default () => null;\n", "logo.png": None},
    )
    body = {
        "name": "Timer",
        "repository_id": str(repo.pk),
        "version_id": str(version.pk),
        "idempotency_key": "repo-key-0001",
    }
    response = call(client, "post", f"/rooms/{room.pk}/proposals/repo", write_token, body)
    assert response.status_code == 201
    data = response.json()
    proposal = Proposal.objects.get()
    assert (data["proposal_id"], data["kind"], data["status"]) == (
        str(proposal.pk),
        "repo",
        "pending",
    )
    assert (data["file_count"], data["replay"]) == (2, False)
    assert f"/api/v1/proposals/{proposal.pk}" in data["next_step"]
    assert proposal.repository_version == version
    again = call(client, "post", f"/rooms/{room.pk}/proposals/repo", write_token, body)
    assert (again.status_code, again.json()["replay"]) == (200, True)
    wrong = call(
        client,
        "post",
        f"/rooms/{room.pk}/proposals/repo",
        write_token,
        {**body, "repository_id": str(room.pk), "idempotency_key": "repo-key-0002"},
    )
    assert wrong.status_code == 400
    assert wrong.json()["error"]["field"] == "version_id"
    assert Proposal.objects.count() == 1


def test_an_unexpected_error_is_a_json_500_and_is_logged(client, write_token, monkeypatch, caplog):
    from rooms import access

    def broken(user):
        raise RuntimeError("a bug in a service")

    monkeypatch.setattr(access, "list_rooms", broken)
    with caplog.at_level("ERROR", logger="osfoundry.api"):
        response = call(client, "get", "/rooms", write_token)
    assert response.status_code == 500
    assert response.json() == {
        "error": {"code": "server_error", "message": "Unexpected error; it was logged"}
    }
    (record,) = [r for r in caplog.records if r.name == "osfoundry.api"]
    assert record.getMessage() == "unhandled API error"
    assert "a bug in a service" in str(record.exc_info[1])
