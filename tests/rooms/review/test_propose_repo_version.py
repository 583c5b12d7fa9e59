import subprocess

import pytest

from osfoundry.errors import Conflict, Invalid, NotFound, Unavailable
from rooms.git.importing import import_repo_version
from rooms.models import Project, Proposal, ProposalKey, Repository, RepositoryVersion, Room
from rooms.services import approve_proposal, propose_repo_version
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
    assert proposal.total_bytes == len(APP.encode())  # the binary logo.png counts nothing
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


def test_a_retry_is_a_replay_and_the_key_with_other_arguments_a_conflict(
    room, agent, version, room_factory
):
    first = propose(room, agent, version).proposal
    again = propose(room, agent, version)
    assert (again.replay, again.proposal.pk) == (True, first.pk)
    assert list(ProposalKey.objects.values_list("operation", "key", "proposal")) == [
        ("propose_repo_version", "repo-key-01", first.pk)
    ]
    other_version = RepositoryVersion.objects.create(
        repository=version.repository, commit_hash="e" * 40, files={"src/App.tsx": APP}
    )
    other_repository = Repository.objects.create(project=room.project, name="other")
    other_room = room_factory(members=[agent])
    for changed in (
        {"name": "Another name"},
        {"version_id": str(other_version.pk)},
        {"repository_id": str(other_repository.pk)},
        {"room_id": str(other_room.pk)},
    ):
        with pytest.raises(Conflict) as error:
            propose(room, agent, version, **changed)
        assert error.value.code == "idempotency_key_reused", changed
    assert list(Proposal.objects.values_list("pk", flat=True)) == [first.pk]


def test_each_version_is_a_card_of_its_own_and_the_same_one_again_is_that_card(
    room, agent, version
):
    first = propose(room, agent, version).proposal
    same = propose(room, agent, version, idempotency_key="repo-key-02")
    assert (same.duplicate_of_pending, same.proposal.pk) == (True, first.pk)
    newer = RepositoryVersion.objects.create(
        repository=version.repository, commit_hash="e" * 40, files={"src/App.tsx": APP}
    )
    second = propose(room, agent, newer, idempotency_key="repo-key-03")
    assert not second.duplicate_of_pending
    assert second.proposal.repository_version == newer
    assert Proposal.objects.pending().count() == 2


def test_a_name_or_key_that_cannot_be_shown_is_refused(room, agent, version):
    with pytest.raises(Invalid) as error:
        propose(room, agent, version, name="Timer\x00")
    assert (error.value.code, error.value.field) == ("invalid_name", "name")
    with pytest.raises(Invalid) as error:
        propose(room, agent, version, idempotency_key="repo-key-\x1b")
    assert error.value.field == "idempotency_key"
    assert not Proposal.objects.exists()


def test_a_local_room_takes_no_repository_proposal(room_factory, agent, version):
    local = room_factory(kind=Room.Kind.LOCAL, members=[agent])
    with pytest.raises(Unavailable) as error:
        propose(local, agent, version)
    assert (error.value.code, error.value.field) == ("local_room", "room_id")
    assert not Proposal.objects.exists()


def test_the_tabs_build_state_keeps_500_characters_of_the_summary(room, owner, agent, version):
    unused = {f"src/{'never_imported_' * 4}{n}.ts": "export const x = 1;\n" for n in range(12)}
    version.files = {**version.files, **unused}
    version.save()
    proposal = propose(room, agent, version).proposal
    app = approve_proposal(owner=owner, proposal_id=proposal.pk)
    app.refresh_from_db()
    assert len(app.build_detail) == 500
    assert app.build_detail.startswith(
        "Checked when proposed: src/App.tsx and the 0 files it loads. Never loaded"
    )


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
