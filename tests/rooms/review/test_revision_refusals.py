"""What updates, revisions and "Request changes" refuse, word for word: each refusal names its
field and its code, says how to go on, and stores nothing."""

import pytest

from osfoundry.errors import Conflict, Invalid, NotFound, Unavailable
from rooms.models import (
    Proposal,
    ProposalKey,
    Repository,
    RepositoryVersion,
    ReviewComment,
    Room,
)
from rooms.review.revisions import request_changes, revise_proposal
from rooms.services import approve_proposal, propose_repo_version
from tests.rooms.helpers import changed, propose, update


@pytest.fixture
def repo_proposal(room, agent, files):
    repository = Repository.objects.create(project=room.project, name="timer")
    version = RepositoryVersion.objects.create(
        repository=repository, commit_hash="a" * 40, files=files | {"README.md": "# Timer\n"}
    )
    return propose_repo_version(
        caller=agent,
        room_id=str(room.pk),
        name="Timer from repo",
        repository_id=str(repository.pk),
        version_id=str(version.pk),
        idempotency_key="repo-key-0001",
    ).proposal


def revise(caller, proposal, files, key="revise-0001"):
    return revise_proposal(
        caller=caller, proposal_id=str(proposal.pk), files=files, idempotency_key=key
    )


def test_a_repository_app_is_not_updated_with_files(room, owner, agent, files, repo_proposal):
    app = approve_proposal(owner=owner, proposal_id=repo_proposal.pk)
    with pytest.raises(Invalid) as caught:
        update(app, agent, changed(files, "v2"))
    assert (caught.value.code, caught.value.field) == ("invalid", "instance_id")
    assert caught.value.message == (
        "instance_id: a repository app is updated by proposing a new pinned version "
        "(propose_room_repo_app)"
    )
    assert list(Proposal.objects.values_list("status", flat=True)) == ["approved"]
    assert not ProposalKey.objects.filter(operation="propose_update").exists()


def test_an_update_identical_to_the_running_revision_is_refused_as_unchanged(
    room, owner, agent, files
):
    app = approve_proposal(owner=owner, proposal_id=propose(room, agent, files).pk)
    with pytest.raises(Invalid) as caught:
        update(app, agent, files)
    assert (caught.value.code, caught.value.field) == ("unchanged", "files")
    assert caught.value.message == ("files: identical to “Standup timer” v1; nothing to review")


def test_the_owner_cannot_revise_the_agents_proposal(room, owner, agent, files):
    proposal = propose(room, agent, files)
    with pytest.raises(NotFound) as caught:
        revise(owner, proposal, changed(files, "mine"))
    assert (caught.value.code, caught.value.field) == ("not_found", "proposal_id")
    # The same answer as for a proposal that does not exist: nothing is given away.
    assert caught.value.message == f"Proposal {str(proposal.pk)!r} not found"
    assert list(Proposal.objects.values_list("pk", "status")) == [(proposal.pk, "pending")]


def turn_local(room):
    """What the admin can do to a cloud Room that already has proposals and apps."""
    room.kind = Room.Kind.LOCAL
    room.save(update_fields=["kind"])


def assert_local_room_refused(caught):
    assert (caught.value.code, caught.value.field) == ("local_room", "room_id")
    assert caught.value.message == "Local Rooms are unavailable"


def test_a_proposal_in_a_room_turned_local_is_not_revised(room, agent, files):
    proposal = propose(room, agent, files)
    turn_local(room)
    with pytest.raises(Unavailable) as caught:
        revise(agent, proposal, changed(files, "v2"))
    assert_local_room_refused(caught)
    assert list(Proposal.objects.values_list("pk", "status")) == [(proposal.pk, "pending")]
    assert not ProposalKey.objects.filter(operation="revise_proposal").exists()


def test_an_app_in_a_room_turned_local_is_not_updated(room, owner, agent, files):
    app = approve_proposal(owner=owner, proposal_id=propose(room, agent, files).pk)
    turn_local(room)
    with pytest.raises(Unavailable) as caught:
        update(app, agent, changed(files, "v2"))
    assert_local_room_refused(caught)
    assert list(Proposal.objects.values_list("status", flat=True)) == ["approved"]


def test_a_repository_proposal_is_not_revised(agent, files, repo_proposal):
    with pytest.raises(Invalid) as caught:
        revise(agent, repo_proposal, changed(files, "v2"))
    assert (caught.value.code, caught.value.field) == ("invalid", "proposal_id")
    assert caught.value.message == (
        "proposal_id: a repository proposal is revised by pushing the changes and proposing "
        "the new pinned version to the same Room (propose_room_repo_app)"
    )
    assert list(Proposal.objects.values_list("status", flat=True)) == ["pending"]


def test_an_approved_proposal_is_refused_with_the_way_to_go_on(room, owner, agent, files):
    proposal = propose(room, agent, files)
    approve_proposal(owner=owner, proposal_id=proposal.pk)
    with pytest.raises(Conflict) as caught:
        revise(agent, proposal, changed(files, "late"))
    assert (caught.value.code, caught.value.field) == ("already_decided", "proposal_id")
    assert caught.value.message == (
        "This proposal was already approved; propose an update of its app instead"
    )
    assert Proposal.objects.count() == 1


def test_a_revision_identical_to_the_one_it_revises_is_refused(room, agent, files):
    proposal = propose(room, agent, files)
    with pytest.raises(Invalid) as caught:
        revise(agent, proposal, files)
    assert (caught.value.code, caught.value.field) == ("unchanged", "files")
    assert caught.value.message == "files: identical to revision 1; nothing to review"
    proposal.refresh_from_db()
    assert proposal.is_pending


def test_a_comment_on_a_repository_file_the_room_does_not_run_is_refused(owner, repo_proposal):
    # A repository card reviews what the Room runs (src/): a comment points into those files.
    comment = {"path": "README.md", "line_start": 1, "line_end": 1, "body": "Say more"}
    with pytest.raises(Invalid) as caught:
        request_changes(owner=owner, proposal_id=repo_proposal.pk, comments=[comment])
    assert (caught.value.code, caught.value.field) == ("invalid", "comments")
    assert caught.value.message == "comments[0].path: 'README.md' is not a file of this proposal"
    repo_proposal.refresh_from_db()
    assert repo_proposal.is_pending and repo_proposal.changes_summary == ""
    assert not ReviewComment.objects.exists()


def test_a_summary_of_exactly_one_thousand_characters_is_taken(room, owner, agent, files):
    proposal = propose(room, agent, files)
    request_changes(owner=owner, proposal_id=proposal.pk, summary=" " + "s" * 1000 + " ")
    proposal.refresh_from_db()
    assert proposal.status == "changes_requested" and proposal.changes_summary == "s" * 1000


def test_a_longer_summary_is_refused_naming_its_field(room, owner, agent, files):
    proposal = propose(room, agent, files)
    with pytest.raises(Invalid) as caught:
        request_changes(owner=owner, proposal_id=proposal.pk, summary="s" * 1001)
    assert (caught.value.field, caught.value.message) == (
        "summary",
        "summary: at most 1,000 characters",
    )
    proposal.refresh_from_db()
    assert proposal.is_pending


def test_a_review_with_nothing_to_say_is_refused_naming_the_summary(room, owner, agent, files):
    proposal = propose(room, agent, files)
    with pytest.raises(Invalid) as caught:
        request_changes(owner=owner, proposal_id=proposal.pk, summary="   ", comments=[])
    assert (caught.value.field, caught.value.message) == (
        "summary",
        "summary: say what to change, or comment on a line of the card",
    )
    proposal.refresh_from_db()
    assert proposal.is_pending and not ReviewComment.objects.exists()
