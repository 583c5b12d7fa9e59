"""What approving or declining refuses, word for word: the error's type, code, field and message
(rooms.services.lock_pending_for_owner), and that nothing was decided."""

import uuid

import pytest

from osfoundry.errors import Conflict, DomainError, Forbidden, NotFound
from rooms.models import LauncherApp, Proposal
from rooms.review.revisions import revise_proposal
from rooms.services import approve_proposal, decline_proposal, propose_snippet

DECISIONS = {"approve": approve_proposal, "decline": decline_proposal}


@pytest.fixture(params=DECISIONS)
def decide(request):
    return DECISIONS[request.param]


@pytest.fixture
def proposal(room, agent, files):
    return propose_snippet(
        caller=agent, room_id=str(room.pk), name="Timer", files=files, idempotency_key="key-00001"
    ).proposal


def refusal(decide, **arguments) -> DomainError:
    with pytest.raises(DomainError) as raised:
        decide(**arguments)
    return raised.value


def assert_undecided(proposal) -> None:
    proposal.refresh_from_db()
    assert proposal.status == Proposal.Status.PENDING and proposal.decided_by is None
    assert not LauncherApp.objects.exists()


def test_an_id_that_is_no_uuid_is_not_found_naming_the_proposal(decide, owner, proposal):
    error = refusal(decide, owner=owner, proposal_id="not-a-uuid")
    assert isinstance(error, NotFound)
    assert (error.field, error.message) == ("proposal_id", "Proposal 'not-a-uuid' not found")
    assert_undecided(proposal)


def test_an_unknown_id_is_not_found_naming_the_proposal(decide, owner, proposal):
    missing = uuid.uuid4()
    error = refusal(decide, owner=owner, proposal_id=missing)
    assert isinstance(error, NotFound)
    assert (error.field, error.message) == ("proposal_id", f"Proposal '{missing}' not found")
    assert_undecided(proposal)


@pytest.mark.parametrize("who", ["member", "stranger"])
def test_someone_not_the_owner_finds_no_proposal(decide, request, who, proposal):
    error = refusal(decide, owner=request.getfixturevalue(who), proposal_id=proposal.pk)
    assert isinstance(error, NotFound)
    assert (error.field, error.message) == ("proposal_id", f"Proposal '{proposal.pk}' not found")
    assert_undecided(proposal)


def test_its_proposer_outside_the_room_is_told_only_the_owner_decides(
    decide, agent, room, proposal
):
    room.members.remove(agent)
    error = refusal(decide, owner=agent, proposal_id=proposal.pk)
    assert isinstance(error, Forbidden)
    assert error.message == "Only the Room owner can approve or decline a proposal"
    assert_undecided(proposal)


def test_a_proposal_a_revision_replaced_is_refused_pointing_at_the_latest(
    decide, owner, agent, files, proposal
):
    revise_proposal(
        caller=agent,
        proposal_id=str(proposal.pk),
        files={**files, "src/extra.ts": "export const extra = 1;\n"},
        idempotency_key="key-00002",
    )
    error = refusal(decide, owner=owner, proposal_id=proposal.pk)
    assert isinstance(error, Conflict)
    assert error.code == "superseded"
    assert error.message == (
        "A later revision took this proposal's place; review and decide on the latest one"
    )
    proposal.refresh_from_db()
    assert proposal.status == Proposal.Status.SUPERSEDED and proposal.decided_by is None


def test_a_decided_proposal_names_the_decision_its_author_and_time(decide, owner, proposal):
    decline_proposal(owner=owner, proposal_id=proposal.pk)
    proposal.refresh_from_db()
    error = refusal(decide, owner=owner, proposal_id=proposal.pk)
    assert isinstance(error, Conflict)
    assert error.code == "already_decided"
    assert error.message == (
        f"This proposal was already declined by owner at {proposal.decided_at:%Y-%m-%d %H:%M} "
        "UTC; a decision happens once"
    )


def test_a_card_that_no_longer_matches_is_refused_as_stale(decide, owner, proposal):
    error = refusal(decide, owner=owner, proposal_id=proposal.pk, content_hash="0" * 64)
    assert isinstance(error, Conflict)
    assert (error.code, error.field) == ("stale_card", "content_hash")
    assert error.message == (
        "The card you reviewed does not match this proposal's content; reload and review again"
    )
    assert_undecided(proposal)
