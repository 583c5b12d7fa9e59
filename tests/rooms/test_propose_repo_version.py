import subprocess

import pytest

from osfoundry.errors import Invalid, NotFound
from rooms.gitimport import import_repo_version
from rooms.models import Project, Proposal, Repository, RepositoryVersion
from rooms.services import propose_repo_version
from tests.rooms.helpers import APP


@pytest.fixture
def version(project):
    repo = Repository.objects.create(project=project, name="timer")
    return RepositoryVersion.objects.create(
        repository=repo, commit_hash="c" * 40, files={"src/App.tsx": APP, "logo.png": None}
    )


def propose(room, agent, version, **overrides):
    args = {
        "caller": agent,
        "room_id": str(room.pk),
        "name": "Timer from repo",
        "repository_id": str(version.repository_id),
        "version_id": str(version.pk),
        "idempotency_key": "repo-key-01",
    }
    return propose_repo_version(**{**args, **overrides})


def test_a_pinned_version_becomes_a_pending_repo_proposal(room, agent, version):
    proposal = propose(room, agent, version).proposal
    assert proposal.kind == Proposal.Kind.REPO
    assert proposal.repository_version == version
    assert proposal.file_count == 2
    assert proposal.files == {}


def test_a_version_of_another_project_is_not_found(room, agent):
    other = Project.objects.create(name="Other")
    repo = Repository.objects.create(project=other, name="x")
    foreign = RepositoryVersion.objects.create(repository=repo, commit_hash="d" * 40)
    with pytest.raises(NotFound) as error:
        propose(room, agent, foreign)
    assert error.value.field == "version_id"
    assert not Proposal.objects.exists()


def test_version_and_repository_must_match(room, agent, version, project):
    other = Repository.objects.create(project=project, name="other")
    with pytest.raises(Invalid) as error:
        propose(room, agent, version, repository_id=str(other.pk))
    assert error.value.field == "version_id"


def git(path, *args):
    subprocess.run(["git", "-C", str(path), *args], check=True, capture_output=True)


def test_import_pins_a_commit_with_its_files(tmp_path, project):
    git(tmp_path, "init", "-q")
    git(tmp_path, "config", "user.email", "t@example.com")
    git(tmp_path, "config", "user.name", "t")
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "App.tsx").write_text("export default () => null;\n")
    (tmp_path / "blob.bin").write_bytes(b"\x00\x01\x02")
    git(tmp_path, "add", ".")
    git(tmp_path, "commit", "-q", "-m", "first")
    repo = Repository.objects.create(project=project, name="imported")
    version, created = import_repo_version(repository=repo, path=tmp_path, ref="HEAD")
    assert created and len(version.commit_hash) == 40
    assert version.files == {"src/App.tsx": "export default () => null;\n", "blob.bin": None}
    assert version.message == "first"
    again, created_again = import_repo_version(repository=repo, path=tmp_path, ref="HEAD")
    assert again.pk == version.pk and not created_again


def test_import_of_an_unknown_ref_is_a_clear_error(tmp_path, project):
    git(tmp_path, "init", "-q")
    repo = Repository.objects.create(project=project, name="empty")
    with pytest.raises(Invalid) as error:
        import_repo_version(repository=repo, path=tmp_path, ref="nope")
    assert error.value.message.startswith("ref: 'nope' names no commit in")
    assert error.value.field == "ref"
    assert not RepositoryVersion.objects.exists()


def test_import_of_a_folder_that_is_not_a_repository(tmp_path, project):
    repo = Repository.objects.create(project=project, name="none")
    with pytest.raises(Invalid) as error:
        import_repo_version(repository=repo, path=tmp_path, ref="HEAD")
    assert "is not a git repository" in error.value.message
