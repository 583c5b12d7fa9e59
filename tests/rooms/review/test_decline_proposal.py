import pytest

from osfoundry.errors import Conflict, Invalid, NotFound
from rooms.access import get_proposal_for_user
from rooms.models import LauncherApp, Proposal
from rooms.services import approve_proposal, decline_proposal, propose_snippet


@pytest.fixture
def proposal(room, agent, files):
    return propose_snippet(
        caller=agent, room_id=str(room.pk), name="Timer", files=files, idempotency_key="key-000001"
    ).proposal


def test_decline_records_who_when_and_why(owner, proposal):
    declined = decline_proposal(owner=owner, proposal_id=proposal.pk, reason=" Too noisy ")
    assert declined.status == Proposal.Status.DECLINED
    assert declined.decided_by == owner and declined.decided_at is not None
    assert declined.decline_reason == "Too noisy"
    assert not LauncherApp.objects.exists()


def test_the_proposer_reads_the_decline_reason(owner, agent, proposal):
    decline_proposal(owner=owner, proposal_id=proposal.pk, reason="Use the repo route")
    seen = get_proposal_for_user(agent, proposal.pk)
    assert seen.status == Proposal.Status.DECLINED
    assert seen.decline_reason == "Use the repo route"


def test_a_second_decline_is_a_conflict(owner, proposal):
    decline_proposal(owner=owner, proposal_id=proposal.pk)
    with pytest.raises(Conflict):
        decline_proposal(owner=owner, proposal_id=proposal.pk)


def test_approving_a_declined_proposal_is_a_conflict(owner, proposal):
    decline_proposal(owner=owner, proposal_id=proposal.pk)
    with pytest.raises(Conflict) as error:
        approve_proposal(owner=owner, proposal_id=proposal.pk)
    assert "already declined by owner" in error.value.message
    assert not LauncherApp.objects.exists()


def test_member_cannot_decline(member, proposal):
    with pytest.raises(NotFound):
        decline_proposal(owner=member, proposal_id=proposal.pk)
    proposal.refresh_from_db()
    assert proposal.is_pending


def test_overlong_reason_is_refused(owner, proposal):
    with pytest.raises(Invalid) as error:
        decline_proposal(owner=owner, proposal_id=proposal.pk, reason="x" * 1001)
    assert error.value.field == "reason"
    proposal.refresh_from_db()
    assert proposal.is_pending
