"""Two decisions meeting at the UPDATE: the conditional update on `status = pending` is the last
guard. The Room and proposal locks normally keep a second decision from getting that far; here
the first decision is made to check the proposal without its lock (as a decision that read
before the other committed), so both reach the UPDATE, on PostgreSQL, in two transactions."""

import threading

import pytest
from django.db import connection

from osfoundry.errors import Conflict
from rooms import services
from rooms.models import LauncherApp, Proposal, ReviewComment, RoomEvent
from rooms.review import revisions
from rooms.review.revisions import request_changes
from rooms.services import approve_proposal, decline_proposal, propose_snippet

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(
        connection.vendor != "postgresql",
        reason="two transactions interleaving at one UPDATE need PostgreSQL's row locks",
    ),
]


def checked_without_the_lock(checked: threading.Event, go_on: threading.Event):
    """lock_pending_for_owner as a decision that read before the other one committed: it checks
    the proposal (pending), signals, then waits until the other decision has committed."""

    def lock_pending_for_owner(*, owner, proposal_id, content_hash):
        proposal = Proposal.objects.select_related("room").get(pk=proposal_id)
        assert proposal.is_pending
        checked.set()
        assert go_on.wait(10)
        return proposal

    return lock_pending_for_owner


def approve(owner, proposal):
    approve_proposal(owner=owner, proposal_id=proposal.pk)


def decline(owner, proposal):
    decline_proposal(owner=owner, proposal_id=proposal.pk, reason="not now")


def request(owner, proposal):
    comment = {"path": "src/App.tsx", "line_start": 1, "body": "Rename this"}
    request_changes(owner=owner, proposal_id=proposal.pk, summary="later", comments=[comment])


@pytest.mark.parametrize(
    ("late", "first", "status", "event"),
    [
        (approve, decline, Proposal.Status.DECLINED, "proposal.declined"),
        (decline, approve, Proposal.Status.APPROVED, "proposal.approved"),
        (request, approve, Proposal.Status.APPROVED, "proposal.approved"),
    ],
    ids=["approval-meets-decline", "decline-meets-approval", "changes-meet-approval"],
)
def test_a_decision_that_meets_another_at_the_update_is_refused(
    owner, room, agent, files, monkeypatch, late, first, status, event
):
    proposal = propose_snippet(
        caller=agent, room_id=room.pk, name="Timer", files=files, idempotency_key="race-0001"
    ).proposal
    checked, go_on = threading.Event(), threading.Event()
    outcome: list = []

    def decide_late_in_another_transaction():
        try:
            late(owner, proposal)
            outcome.append("decided")
        except Conflict as error:
            outcome.append(error)
        finally:
            connection.close()

    unlocked = checked_without_the_lock(checked, go_on)
    monkeypatch.setattr(services, "lock_pending_for_owner", unlocked)
    monkeypatch.setattr(revisions, "lock_pending_for_owner", unlocked)
    deciding = threading.Thread(target=decide_late_in_another_transaction)
    deciding.start()
    assert checked.wait(10)
    monkeypatch.undo()  # the first decision takes the real locks
    first(owner, proposal)
    go_on.set()
    deciding.join(20)

    (error,) = outcome
    assert isinstance(error, Conflict)
    assert (error.code, error.message) == (
        "already_decided",
        "This proposal was decided meanwhile; reload",
    )
    proposal.refresh_from_db()
    assert proposal.status == status
    assert LauncherApp.objects.exists() is (status == Proposal.Status.APPROVED)
    decisions = RoomEvent.objects.filter(type__startswith="proposal.").exclude(
        type="proposal.created"
    )
    assert list(decisions.values_list("type", flat=True)) == [event]
    assert not ReviewComment.objects.exists()
