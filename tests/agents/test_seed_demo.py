"""`manage.py seed_demo`: the owner's first login shows the product working. Their own two agents
talk in a channel and a direct thread, three proposals wait in three states, and the read-only
demo token is told what it lacks, over REST and over MCP."""

import json
import re
from html import unescape
from io import StringIO

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from dulwich.refs import SYMREF

from agents.management import demo
from agents.models import AccessToken, AgentProfile, Channel, InboxEntry, Message
from osfoundry.auth import authenticate_bearer
from rooms.git.store import DatabaseRefs
from rooms.models import (
    AppRevision,
    LauncherApp,
    Project,
    Proposal,
    RepositoryVersion,
    ReviewComment,
    Room,
    RoomEvent,
)
from tests.mcpclient import call_tool

READ_ONLY = (
    "This token can only read: it lacks the osfoundry:write scope; create a token with "
    "osfoundry:write"
)


@pytest.fixture(autouse=True)
def _credentials_in_tmp(tmp_path, monkeypatch):
    monkeypatch.setattr(
        "agents.management.commands.seed_demo.CREDENTIALS", tmp_path / "demo-credentials.json"
    )


def seed() -> dict:
    out = StringIO()
    call_command("seed_demo", "--json", stdout=out)
    return json.loads(out.getvalue())


def logged_in(client, data):
    assert client.login(username="owner", password=data["owner"]["password"])
    return client


def text_of(response) -> str:
    """What a person reads: the page's main part without tags, its whitespace collapsed."""
    html = response.content.decode()
    body = html[html.index("<main") :]
    return " ".join(unescape(re.sub(r"<[^>]+>", "", body)).split())


@pytest.mark.django_db
def test_seed_demo_json_has_what_scripts_rely_on():
    data = seed()
    for key in ("project_id", "room_id", "local_room_id", "repository_id", "version_id"):
        assert data[key]
    assert set(data["owner"]) == {"username", "password"}
    assert set(data["member"]) == {"username", "password"}
    room = Room.objects.get(pk=data["room_id"])
    assert room.name == "Team Falcon" and room.owner.username == "owner"
    assert room.members.filter(username="member").exists()
    assert Room.objects.get(pk=data["local_room_id"]).kind == Room.Kind.LOCAL
    tokens = {name: authenticate_bearer(raw) for name, raw in data["agent_tokens"].items()}
    assert (
        tokens["write"].scopes == tokens["planner"].scopes == {"osfoundry:read", "osfoundry:write"}
    )
    assert tokens["read"].scopes == {"osfoundry:read"}
    version = room.project.repositories.get(pk=data["repository_id"]).versions.get()
    assert str(version.pk) == data["version_id"] and "src/App.tsx" in version.files


@pytest.mark.django_db
def test_the_demo_agents_are_the_owners_own_with_their_handles():
    data = seed()
    owner = get_user_model().objects.get(username="owner")
    for name, handle in (("write", "falcon-builder"), ("planner", "falcon-planner")):
        principal = authenticate_bearer(data["agent_tokens"][name])
        assert principal.user == owner
        profile = AgentProfile.objects.get(connection_key=principal.token_key)
        assert (profile.handle, profile.owner, profile.kind) == (handle, owner, "external")
        assert data["handles"][name] == handle
    assert authenticate_bearer(data["agent_tokens"]["read"]).user == owner
    assert not get_user_model().objects.filter(username="agent").exists()


@pytest.mark.django_db
def test_a_second_run_creates_nothing_new():
    models = (
        get_user_model(),
        Project,
        Room,
        AccessToken,
        AgentProfile,
        Channel,
        Message,
        InboxEntry,
        Proposal,
        ReviewComment,
        LauncherApp,
        AppRevision,
        RoomEvent,
    )
    first = seed()
    counts = {model.__name__: model.objects.count() for model in models}
    second = seed()
    assert second == first  # the same passwords, tokens and ids
    assert {model.__name__: model.objects.count() for model in models} == counts
    assert counts["Proposal"] == 4 and counts["Message"] == 6 and counts["AccessToken"] == 3


@pytest.mark.django_db
def test_the_demo_repository_serves_its_version_on_main_and_keeps_a_moved_main():
    data = seed()
    version = RepositoryVersion.objects.get(pk=data["version_id"])
    refs = DatabaseRefs(data["repository_id"])
    assert refs.read_loose_ref(b"HEAD") == SYMREF + b"refs/heads/main"
    assert refs[b"HEAD"] == refs[b"refs/heads/main"] == version.commit_hash.encode()
    moved = b"f" * 40  # an agent pushed: the next `make run` leaves main where it is
    refs.set_if_equals(b"refs/heads/main", version.commit_hash.encode(), moved)
    seed()
    assert refs[b"refs/heads/main"] == moved


@pytest.mark.django_db
def test_the_owner_sees_the_agents_channel_on_the_messages_page(client):
    data = seed()
    client = logged_in(client, data)
    index = text_of(client.get("/messages/"))
    assert "#team-falcon Demo" in index
    assert "@falcon-builder, @falcon-planner" in index  # the direct thread
    assert "You write as @owner" in index
    page = client.get(f"/messages/channels/{data['channel_id']}/")
    assert page.status_code == 200
    text = text_of(page)
    bodies = [body for _sender, _to, body in demo.CHANNEL_MESSAGES]
    positions = [text.index(body) for body in bodies]
    assert positions == sorted(positions)  # oldest first, as posted
    assert text.count("@owner (mention)") == 2  # the owner is mentioned, and reached
    assert '<mark class="mention" data-handle="owner">@owner</mark>' in page.content.decode()


@pytest.mark.django_db
def test_the_owner_sees_the_direct_thread_between_the_agents(client):
    data = seed()
    page = logged_in(client, data).get(f"/messages/threads/{data['direct_thread_id']}/")
    assert page.status_code == 200
    text = text_of(page)
    assert "Direct thread Thread started by @falcon-builder" in text
    assert text.index(demo.DIRECT_QUESTION) < text.index(demo.DIRECT_ANSWER)
    assert "to @falcon-planner" in text and "to @falcon-builder" in text


@pytest.mark.django_db
def test_the_three_proposals_wait_in_their_states():
    data = seed()
    update = Proposal.objects.get(pk=data["update_proposal_id"])
    assert update.is_pending and update.is_update and update.base_revision == 1
    timer = update.app.proposal
    assert (timer.name, timer.status, update.app.revision) == ("Standup timer", "approved", 1)
    assert "<button onClick={reset}>Reset</button>" in update.files["src/App.tsx"]
    shuffle = Proposal.objects.get(pk=data["pending_proposal_id"])
    assert (shuffle.name, shuffle.is_pending, shuffle.app) == ("Speaker shuffle", True, None)
    parking = Proposal.objects.get(pk=data["changes_requested_proposal_id"])
    assert (parking.name, parking.status) == ("Parking lot", Proposal.Status.CHANGES_REQUESTED)
    assert parking.changes_summary == demo.PARKING_SUMMARY
    comment = parking.comments.get()
    line = parking.files["src/App.tsx"].split("\n")[comment.line_start - 1]
    assert (comment.path, comment.body, comment.author.username) == (
        "src/App.tsx",
        demo.PARKING_COMMENT,
        "owner",
    )
    assert "<input" in line and comment.line_end == comment.line_start


@pytest.mark.django_db
def test_the_inbox_opens_on_the_update_proposed_by_the_owners_agent(client):
    data = seed()
    client = logged_in(client, data)
    text = text_of(client.get("/"))
    assert text.index("Standup timer update of v1") < text.index("Speaker shuffle")
    assert "falcon-builder · Claude Code (demo)" in text
    assert "falcon-planner · Codex (demo)" in text
    card = client.get(f"/proposals/{data['update_proposal_id']}/").content.decode()
    assert "diff-pill-modified" in card


@pytest.mark.django_db
def test_seed_demo_prints_where_to_look_first_and_lines_to_paste():
    out = StringIO()
    call_command("seed_demo", "--origin", "http://127.0.0.1:8123", stdout=out)
    lines = out.getvalue().splitlines()
    data = seed()  # the same again, as JSON
    token, room = data["agent_tokens"]["write"], data["room_id"]
    origin = "http://127.0.0.1:8123"
    assert lines[:5] == [
        "osFoundry demo is ready.",
        f"  Open first:    {origin}/ and log in as the owner: 2 proposals wait for your review",
        "                   Standup timer (an update, shown as a diff) "
        f"{origin}/proposals/{data['update_proposal_id']}/",
        "                   Speaker shuffle (a new app)                "
        f"{origin}/proposals/{data['pending_proposal_id']}/",
        f"  Then:          {origin}/messages/channels/{data['channel_id']}/ : your agents "
        "@falcon-planner and @falcon-builder talk in #team-falcon (and in a direct thread "
        "beside it)",
    ]
    text = "\n".join(lines)
    assert f"{origin}/proposals/{data['changes_requested_proposal_id']}/" in text
    assert (
        f"claude mcp add --transport http osfoundry {origin}/api/v1/mcp "
        f'--header "Authorization: Bearer {token}"'
    ) in text
    assert f"{origin}/api/v1/rooms/{room}/apps" in text
    assert "Admin login:   admin / " in text


@pytest.mark.django_db
def test_once_decided_the_proposals_are_no_longer_announced(client):
    data = seed()
    owner = get_user_model().objects.get(username="owner")
    from rooms.services import decline_proposal

    for key in ("update_proposal_id", "pending_proposal_id"):
        decline_proposal(owner=owner, proposal_id=data[key])
    out = StringIO()
    call_command("seed_demo", stdout=out)
    assert "  Open first:    http://127.0.0.1:8000/ and log in as the owner\n" in out.getvalue()
    assert Proposal.objects.count() == 4


@pytest.mark.django_db
def test_the_first_login_has_an_admin():
    data = seed()
    admin = get_user_model().objects.get(username=data["admin"]["username"])
    assert admin.is_staff and admin.is_superuser
    assert admin.check_password(data["admin"]["password"])


def rest(client, path, token, body):
    return client.post(
        f"/api/v1{path}",
        json.dumps(body),
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {token}",
    )


@pytest.mark.django_db
def test_the_read_only_demo_token_is_told_what_it_lacks_over_rest(client, files):
    data = seed()
    token, room = data["agent_tokens"]["read"], data["room_id"]
    calls = [
        ("/agents/profile", {"handle": "demo-reader"}),
        (
            "/agents/messages",
            {"to": "falcon-builder", "body": "hi", "idempotency_key": "read-only-0001"},
        ),
        (
            f"/rooms/{room}/proposals/snippet",
            {"name": "Hi", "files": files, "idempotency_key": "read-only-0002"},
        ),
    ]
    for path, body in calls:
        response = rest(client, path, token, body)
        assert response.status_code == 403, path
        assert response.json() == {"error": {"code": "insufficient_scope", "message": READ_ONLY}}
    assert Proposal.objects.count() == 4 and Message.objects.count() == 6
    assert not AgentProfile.objects.filter(handle="demo-reader").exists()


def test_the_read_only_demo_token_is_told_what_it_lacks_over_mcp(asgi_server, files):
    data = seed()
    token, room = data["agent_tokens"]["read"], data["room_id"]
    calls = [
        ("claim_connected_profile", {"handle": "demo-reader"}),
        (
            "send_agent_message",
            {"to": "falcon-builder", "body": "hi", "idempotency_key": "read-only-0001"},
        ),
        (
            "propose_room_snippet_app",
            {"room_id": room, "name": "Hi", "files": files, "idempotency_key": "read-only-0002"},
        ),
    ]
    for name, arguments in calls:
        result = call_tool(asgi_server.mcp_url, token, name, arguments)
        assert result.is_error, name
        assert result.structured_content == {
            "error": {"code": "insufficient_scope", "message": READ_ONLY}
        }
    read = call_tool(asgi_server.mcp_url, token, "read_room", {"room_id": room})
    assert not read.is_error  # it reads
    assert Proposal.objects.count() == 4 and Message.objects.count() == 6
    assert not AgentProfile.objects.filter(handle="demo-reader").exists()
