"""An approved app's files for the Room page's runtime: owner and members only."""

import pytest
from django.urls import reverse

from rooms.models import Repository, RepositoryVersion
from rooms.runtime import rules
from rooms.services import approve_proposal, propose_repo_version, propose_snippet
from tests.refusals import refused_by_view
from tests.rooms.helpers import stored_unchecked


def approve_snippet(room, agent, owner, files, name="Standup timer"):
    proposal = propose_snippet(
        caller=agent, room_id=str(room.pk), name=name, files=files, idempotency_key="key-snip-1"
    ).proposal
    return approve_proposal(owner=owner, proposal_id=proposal.pk)


def approve_repo(room, agent, owner, version_files):
    repository = Repository.objects.create(project=room.project, name="timer")
    version = RepositoryVersion.objects.create(
        repository=repository, commit_hash="a" * 40, files=version_files
    )
    proposal = propose_repo_version(
        caller=agent,
        room_id=str(room.pk),
        name="Timer repo",
        repository_id=str(repository.pk),
        version_id=str(version.pk),
        idempotency_key="key-repo-1",
    ).proposal
    return approve_proposal(owner=owner, proposal_id=proposal.pk)


def files_url(app):
    return reverse("rooms:app_files", args=[app.room_id, app.pk])


@pytest.mark.parametrize("who", ["owner", "member"])
def test_owner_and_members_get_an_approved_snippets_files(client, request, room, agent, files, who):
    app = approve_snippet(room, agent, request.getfixturevalue("owner"), files)
    client.force_login(request.getfixturevalue(who))
    response = client.get(files_url(app))
    assert response.status_code == 200
    assert response.json() == {
        "name": "Standup timer",
        "entry": "src/App.tsx",
        "status": "approved",
        "files": files,
        "packages": None,  # no package from the registry: no module table to fetch
    }
    assert "no-store" in response["Cache-Control"]


def test_stranger_gets_404(client, room, agent, owner, stranger, files):
    app = approve_snippet(room, agent, owner, files)
    client.force_login(stranger)
    response = client.get(files_url(app))
    refused_by_view(response, "rooms:app_files")
    assert response.json()["error"]["code"] == "not_found"
    assert "App.tsx" not in response.content.decode()


def test_anonymous_is_asked_to_log_in(client, room, agent, owner, files):
    app = approve_snippet(room, agent, owner, files)
    response = client.get(files_url(app))
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "login_required"


def test_repository_version_runs_from_its_src_folder(client, room, agent, owner, files):
    app = approve_repo(
        room,
        agent,
        owner,
        {**files, "README.md": "# Timer", "src/logo.png": None, "scripts/build.js": "x"},
    )
    client.force_login(owner)
    response = client.get(files_url(app))
    assert response.status_code == 200
    assert response.json()["files"] == files


def test_repository_version_without_entry_says_why(client, room, agent, owner):
    # Such a version is refused when proposed (tests/rooms/runtime/test_runnable_proposals.py); one
    # approved before that check still gets a clear answer instead of a broken tab.
    repository = Repository.objects.create(project=room.project, name="site")
    version = RepositoryVersion.objects.create(
        repository=repository,
        commit_hash="b" * 40,
        files={"index.html": "<p>hi</p>", "src/main.ts": "1"},
    )
    proposal = stored_unchecked(room, agent, version=version)
    app = approve_proposal(owner=owner, proposal_id=proposal.pk)
    client.force_login(owner)
    response = client.get(files_url(app))
    assert response.status_code == 409
    error = response.json()["error"]
    assert error["code"] == "not_runnable"
    assert "has no src/App.tsx" in error["message"]


def test_a_repository_version_runs_up_to_the_runtimes_byte_limit(
    client, room, agent, owner, monkeypatch
):
    monkeypatch.setattr(rules, "APP_MAX_BYTES", 60)
    repository = Repository.objects.create(project=room.project, name="big")
    entry = {"src/App.tsx": "x" * 50}
    versions = [
        RepositoryVersion.objects.create(
            repository=repository, commit_hash=commit * 40, files={**entry, "src/b.ts": extra}
        )
        for commit, extra in (("c", "y" * 10), ("d", "y" * 11))
    ]
    apps = [
        approve_proposal(owner=owner, proposal_id=stored_unchecked(room, agent, version=v).pk)
        for v in versions
    ]
    client.force_login(owner)
    at_the_limit = client.get(files_url(apps[0]))
    assert at_the_limit.json()["files"] == {**entry, "src/b.ts": "y" * 10}
    over = client.get(files_url(apps[1]))
    assert over.status_code == 409
    assert over.json()["error"]["code"] == "not_runnable"
    assert over.json()["error"]["message"] == (
        f"{versions[1]} has 61 bytes of app code under src/; the Room runs at most 60 bytes in "
        "the browser; trim src/ and propose that version."
    )
