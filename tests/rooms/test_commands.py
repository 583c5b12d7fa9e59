import subprocess
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from agents.models import AccessToken
from osfoundry.auth import authenticate_bearer
from rooms.models import Repository


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
