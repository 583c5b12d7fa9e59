"""Branches over git with Debian's `git` against a live server: a commit pinned once is reported
from its stored verdict on any branch, a deleted branch keeps its versions, and requests that
name no repository or carry no usable password are told so."""

import httpx
import pytest

from rooms.models import GitRef, Repository, RepositoryVersion
from rooms.runtime import verdicts
from tests.rooms.gitclient import clone_url, git, write_files

LEFT_PAD = 'import leftPad from "left-pad";\nexport default () => <p>{leftPad("1", 2)}</p>;\n'


@pytest.fixture
def pushed(asgi_server, project, agent, token_factory, tmp_path):
    """A work tree and a function that commits files and pushes a refspec, returning git's
    output."""
    project.members.add(agent)
    home, work = tmp_path / "home", tmp_path / "work"
    work.mkdir()
    git(work, "init", "-q", "-b", "main", home=home)
    url = clone_url(asgi_server.url, project.name, "timer", token_factory(agent))

    def push(refspec: str, files: dict[str, str] | None = None, check: bool = True) -> str:
        if files is not None:
            write_files(work, files)
            git(work, "add", "-A", home=home)
            git(work, "commit", "-q", "-m", refspec, home=home)
        return git(work, "push", url, refspec, home=home, check=check).stderr

    return push


def test_a_commit_pushed_to_another_branch_is_reported_from_its_stored_verdict(pushed, files):
    pushed("main", files)
    version = RepositoryVersion.objects.get()
    again = pushed("main:feature")
    assert f"remote: version {version.pk} of main ({version.short_hash}): runs in the Room" in again
    assert RepositoryVersion.objects.count() == 1  # one commit, one version


def test_an_app_that_cannot_run_is_told_so_again_on_another_branch(pushed, files):
    first = pushed("main", files | {"src/App.tsx": LEFT_PAD})
    again = pushed("main:feature")
    version = RepositoryVersion.objects.get()
    assert verdicts.known(version) is False
    for output in (first, again):
        assert f"({version.short_hash}): cannot run in the Room:" in output
        assert "remote:   src/App.tsx:1:21: module 'left-pad' is not available" in output


def test_deleting_a_branch_keeps_its_pinned_versions(pushed, files):
    pushed("main", files)
    pushed("main:feature")
    deleted = pushed(":feature")
    assert "[deleted]" in deleted and "feature" in deleted
    assert not GitRef.objects.filter(name="refs/heads/feature").exists()
    assert GitRef.objects.filter(name="refs/heads/main").exists()
    assert RepositoryVersion.objects.count() == 1
    assert "remote: version" not in deleted  # nothing pinned by a deletion


def test_a_path_naming_no_repository_says_how_to_clone(asgi_server):
    response = httpx.get(asgi_server.url + "/git/only-a-project")
    assert response.status_code == 404
    assert response.text == "Not found: clone <origin>/git/<project>/<repository>.git\n"


@pytest.mark.parametrize(
    "authorization",
    ["Bearer osf_pat_whatever", "Basic !!not-base64!!", "Basic " + "Og=="],  # ":" no password
    ids=["bearer", "garbled-basic", "empty-password"],
)
def test_a_header_without_a_usable_password_gets_the_basic_challenge(
    asgi_server, project, authorization
):
    Repository.objects.create(project=project, name="timer")
    url = asgi_server.url + f"/git/{project.name}/timer.git/info/refs?service=git-upload-pack"
    response = httpx.get(url, headers={"Authorization": authorization})
    assert response.status_code == 401
    assert response.headers["www-authenticate"] == 'Basic realm="osFoundry"'
    assert response.text.startswith("Authentication required")


def test_a_room_owner_outside_the_project_fetches_but_cannot_push(
    asgi_server, project, room, owner, token_factory, tmp_path, files
):
    # `owner` owns a Room of the project (they review its versions) but is not a member.
    assert not project.members.filter(pk=owner.pk).exists()
    Repository.objects.create(project=project, name="timer")
    home, work = tmp_path / "home", tmp_path / "work"
    url = clone_url(asgi_server.url, project.name, "timer", token_factory(owner))
    cloned = git(tmp_path, "clone", url, "work", home=home)
    assert "empty repository" in cloned.stderr
    write_files(work, files)
    git(work, "add", "-A", home=home)
    git(work, "commit", "-q", "-m", "owner", home=home)
    refused = git(work, "push", url, "HEAD:main", home=home, check=False)
    assert refused.returncode != 0
    assert f"Repository {project.name}/timer not found" in refused.stderr
    assert not GitRef.objects.filter(name="refs/heads/main").exists()
