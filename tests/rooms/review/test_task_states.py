"""A proposal's task read back through rooms/review/tasks.py, the functions the MCP task methods
call: what a superseded proposal's task says, that tasks kept past their time or read through a
token confined to another project (pending or decided) are left out, and what withdrawing
refuses."""

from dataclasses import replace
from datetime import datetime, timedelta

import pytest

from osfoundry.auth import PRINCIPAL_ATTRIBUTE, Principal
from osfoundry.errors import NotFound
from rooms.models import Project, Proposal, ProposalTask
from rooms.review import tasks
from rooms.review.revisions import revise_proposal
from rooms.services import approve_proposal
from tests.rooms.helpers import changed, propose

ORIGIN = "http://testserver"


@pytest.fixture
def principal(agent):
    return Principal(user=agent, scopes=frozenset(), token_key="token-1", kind="pat")


@pytest.fixture
def proposal(room, agent, files):
    return propose(room, agent, files)


def read(principal, task_id: str) -> dict | None:
    found = tasks.read_tasks(principal, [task_id], origin=ORIGIN)
    return found[task_id].detail if task_id in found else None


def test_a_revised_proposals_task_completes_naming_the_revision(principal, proposal, agent, files):
    task_id = tasks.task_for(principal, proposal, origin=ORIGIN).detail["taskId"]
    revision = revise_proposal(
        caller=agent,
        proposal_id=str(proposal.pk),
        files=changed(files, "r2"),
        idempotency_key="k-2",
    ).proposal
    assert Proposal.objects.get(pk=proposal.pk).status == Proposal.Status.SUPERSEDED
    detail = read(principal, task_id)
    assert detail["status"] == "completed"
    assert detail["statusMessage"] == (
        f"A later revision ({revision.pk}) took this proposal's place; it has a task of its own."
    )
    assert detail["lastUpdatedAt"] == revision.created_at.isoformat()
    created = datetime.fromisoformat(detail["createdAt"])
    assert detail["ttlMs"] == tasks.ms_between(created, revision.created_at + tasks.KEEP_DECIDED)


def test_a_superseded_proposal_with_no_revision_left_stopped_waiting_when_it_was_made(
    principal, proposal
):
    task_id = tasks.task_for(principal, proposal, origin=ORIGIN).detail["taskId"]
    Proposal.objects.filter(pk=proposal.pk).update(status=Proposal.Status.SUPERSEDED)
    proposal.refresh_from_db()
    assert tasks.decided_at(proposal) == proposal.created_at
    assert read(principal, task_id)["lastUpdatedAt"] == proposal.created_at.isoformat()


def test_a_task_decided_longer_ago_than_it_is_kept_is_left_out(principal, proposal, owner):
    task_id = tasks.task_for(principal, proposal, origin=ORIGIN).detail["taskId"]
    approve_proposal(owner=owner, proposal_id=proposal.pk)
    decided = Proposal.objects.get(pk=proposal.pk).decided_at
    assert read(principal, task_id)["status"] == "completed"
    Proposal.objects.filter(pk=proposal.pk).update(
        decided_at=decided - tasks.KEEP_DECIDED - timedelta(seconds=1)
    )
    assert read(principal, task_id) is None
    assert ProposalTask.objects.filter(pk=task_id).exists()  # left out, not deleted


@pytest.mark.parametrize("decided", [True, False], ids=["decided", "pending"])
def test_a_task_read_through_a_token_confined_to_another_project_is_left_out(
    principal, proposal, owner, agent, decided
):
    """The rule read_proposal answers by, whatever the task's state: a pending task is not
    read past it either."""
    task_id = tasks.task_for(principal, proposal, origin=ORIGIN).detail["taskId"]
    if decided:
        approve_proposal(owner=owner, proposal_id=proposal.pk)
    assert read(principal, task_id)["status"] == ("completed" if decided else "working")
    elsewhere = Project.objects.create(name="Elsewhere")
    confined = replace(principal, project_id=elsewhere.pk)
    setattr(agent, PRINCIPAL_ATTRIBUTE, confined)  # as authenticate_bearer marks the user
    assert read(confined, task_id) is None
    assert tasks.list_tasks(confined, 0, 10, origin=ORIGIN) == ([], False)
    with pytest.raises(NotFound):
        tasks.cancel_task(confined, task_id, origin=ORIGIN)
    assert Proposal.objects.get(pk=proposal.pk).status == (
        Proposal.Status.APPROVED if decided else Proposal.Status.PENDING
    )


def test_withdrawing_a_proposal_nobody_made_is_not_found(agent):
    missing = "00000000-0000-4000-8000-000000000000"
    with pytest.raises(NotFound) as refused:
        tasks.withdraw_proposal(caller=agent, proposal_id=missing)
    assert refused.value.message == f"Proposal {missing!r} not found"
    assert refused.value.field == "proposal_id"


def test_withdrawing_anothers_proposal_is_not_found_and_changes_nothing(proposal, member):
    with pytest.raises(NotFound) as refused:
        tasks.withdraw_proposal(caller=member, proposal_id=str(proposal.pk))
    assert refused.value.message == f"Proposal {str(proposal.pk)!r} not found"
    assert refused.value.field == "proposal_id"
    assert Proposal.objects.get(pk=proposal.pk).status == Proposal.Status.PENDING
