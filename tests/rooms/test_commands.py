import json
import subprocess
from io import StringIO

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command

from agents.models import AccessToken
from osfoundry.auth import authenticate_bearer
from rooms.models import Project, Proposal, Repository, Room


@pytest.fixture(autouse=True)
def _credentials_in_tmp(tmp_path, monkeypatch):
    monkeypatch.setattr(
        "agents.management.commands.seed_demo.CREDENTIALS", tmp_path / "demo-credentials.json"
    )


def seed() -> dict:
    out = StringIO()
    call_command("seed_demo", "--json", stdout=out)
    return json.loads(out.getvalue())


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
    write = authenticate_bearer(data["agent_tokens"]["write"])
    read = authenticate_bearer(data["agent_tokens"]["read"])
    assert write.scopes == {"osfoundry:read", "osfoundry:write"}
    assert read.scopes == {"osfoundry:read"}
    version = Repository.objects.get(pk=data["repository_id"]).versions.get()
    assert str(version.pk) == data["version_id"] and "src/App.tsx" in version.files


@pytest.mark.django_db
def test_seed_demo_is_idempotent():
    first, second = seed(), seed()
    assert first == second
    assert Project.objects.count() == 1 and Room.objects.count() == 2
    assert AccessToken.objects.active().count() == 2
    assert Proposal.objects.count() == 1


@pytest.mark.django_db
def test_the_first_login_has_a_proposal_to_review_and_an_admin():
    data = seed()
    proposal = Proposal.objects.get(pk=data["pending_proposal_id"])
    assert proposal.is_pending and str(proposal.room_id) == data["room_id"]
    admin = get_user_model().objects.get(username=data["admin"]["username"])
    assert admin.is_staff and admin.is_superuser
    assert admin.check_password(data["admin"]["password"])


@pytest.mark.django_db
def test_seed_demo_prints_what_to_open_and_lines_to_paste():
    out = StringIO()
    call_command("seed_demo", "--origin", "http://127.0.0.1:8123", stdout=out)
    text = out.getvalue()
    data = seed()  # the same again, as JSON
    token, room = data["agent_tokens"]["write"], data["room_id"]
    assert "Open first:    http://127.0.0.1:8123/ and log in as the owner" in text
    assert f"http://127.0.0.1:8123/proposals/{data['pending_proposal_id']}/" in text
    assert (
        "claude mcp add --transport http osfoundry http://127.0.0.1:8123/api/v1/mcp "
        f'--header "Authorization: Bearer {token}"'
    ) in text
    assert f"http://127.0.0.1:8123/api/v1/rooms/{room}/apps" in text
    assert "Admin login:   admin / " in text


@pytest.mark.django_db
def test_create_token_prints_a_working_token_once(agent):
    out = StringIO()
    call_command("create_token", "--user", "agent", "--scopes", "osfoundry:read", stdout=out)
    raw = out.getvalue().strip()
    assert authenticate_bearer(raw).user == agent
    stored = AccessToken.objects.get()
    assert raw not in stored.token_hash and stored.prefix == raw[:10]


def test_create_token_for_one_project_with_an_expiry(agent, project):
    project.members.add(agent)
    out = StringIO()
    arguments = ["--user", "agent", "--project", str(project.pk), "--expires-days", "7"]
    call_command("create_token", *arguments, stdout=out)
    principal = authenticate_bearer(out.getvalue().strip())
    assert principal.project_id == project.pk and principal.expires_at is not None
    with pytest.raises(CommandError, match="is not a project of yours"):
        call_command("create_token", "--user", "agent", "--project", "nope")


@pytest.mark.django_db
def test_create_token_refuses_unknown_scopes_and_users(agent):
    with pytest.raises(CommandError, match="not valid"):
        call_command("create_token", "--user", "agent", "--scopes", "admin")
    with pytest.raises(CommandError, match="No user 'ghost'"):
        call_command("create_token", "--user", "ghost")
    assert not AccessToken.objects.exists()


@pytest.mark.django_db
def test_import_repo_version_command(tmp_path, project):
    Repository.objects.create(project=project, name="timer")
    run = lambda *a: subprocess.run(["git", "-C", str(tmp_path), *a], check=True)  # noqa: E731
    run("init", "-q")
    (tmp_path / "App.tsx").write_text("x")
    run("add", ".")
    run("-c", "user.name=t", "-c", "user.email=t@e", "commit", "-q", "-m", "m")
    out = StringIO()
    call_command("import_repo_version", str(tmp_path), "--repository", "timer", stdout=out)
    assert out.getvalue().startswith("Imported timer@")
    with pytest.raises(CommandError, match="no repository named 'nope'"):
        call_command("import_repo_version", str(tmp_path), "--repository", "nope")


@pytest.mark.django_db
def test_import_repo_version_names_the_project_and_explains_git_errors(tmp_path, project):
    from rooms.models import Project

    other = Project.objects.create(name="Other")
    Repository.objects.create(project=project, name="timer")
    Repository.objects.create(project=other, name="timer")
    with pytest.raises(CommandError, match="several repository named 'timer'"):
        call_command("import_repo_version", str(tmp_path), "--repository", "timer")
    with pytest.raises(CommandError, match=f"path: {tmp_path} is not a git repository"):
        call_command(
            "import_repo_version", str(tmp_path), "--repository", "timer", "--project", "Other"
        )


def test_highlight_css_writes_the_stylesheet_and_check_finds_a_stale_one(tmp_path, monkeypatch):
    from rooms.management.commands import highlight_css

    target = tmp_path / "highlight.css"
    monkeypatch.setattr(highlight_css, "TARGET", target)
    with pytest.raises(CommandError, match="is stale; run `manage.py highlight_css`"):
        call_command("highlight_css", "--check")
    out = StringIO()
    call_command("highlight_css", stdout=out)
    assert out.getvalue().strip() == f"Wrote {target}"
    call_command("highlight_css", "--check")  # current now
    target.write_text(target.read_text() + "/* edited */")
    with pytest.raises(CommandError, match="is stale"):
        call_command("highlight_css", "--check")
