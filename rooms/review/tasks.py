"""Proposals as MCP tasks (the Tasks extension, io.modelcontextprotocol/tasks): the owner's
decision completes the proposer's task, whichever interface decided, because a task's status
is read from its proposal's; and withdrawing, the one thing a proposer may do to a pending
proposal (tasks/cancel).

A task is a row (ProposalTask) bound to the connection (the token) that proposed: a retry with
the same idempotency key, or a fresh-key retry collapsed onto the pending card, answers the
same task; another token reads nothing of it. A revision is a proposal of its own, so a task of
its own. A decided task is kept KEEP_DECIDED after the decision (ttlMs says until when); the
proposal itself is kept forever.
"""

from collections.abc import Sequence
from datetime import datetime, timedelta

from django.db import IntegrityError, transaction
from django.utils import timezone

from osfoundry.auth import Principal, User
from osfoundry.errors import Conflict, NotFound
from osfoundry.mcp.jsonrpc import tool_result
from osfoundry.mcp.tooling import TaskState

from .. import events
from ..access import parse_uuid
from ..models import Proposal, ProposalTask, Room
from ..services import mark_decided
from . import revisions

# How often a client that cannot listen (subscriptions/listen) may ask: an owner decides in
# minutes or hours, and a listener is told at once.
POLL_INTERVAL_MS = 30_000
KEEP_DECIDED = timedelta(days=7)
WORKING = "Waiting for the Room owner's decision"


# ---------------------------------------------------------------------------------------------
# Tasks


def task_for(principal: Principal, proposal: Proposal, *, origin: str) -> TaskState:
    """The caller's task for `proposal` (a new one, or the one a retry already made), stored
    before this returns: a tasks/get of its id answers from here on."""
    fields = {"proposal": proposal, "connection": principal.token_key}
    task = ProposalTask.objects.filter(**fields).first()
    if task is None:
        try:
            with transaction.atomic():
                task = ProposalTask.objects.create(caller=principal.user, **fields)
        except IntegrityError:  # a concurrent retry stored it first
            task = ProposalTask.objects.get(**fields)
    task.proposal = proposal
    return state_of(task, origin=origin)


def read_tasks(principal: Principal, task_ids: Sequence[str], *, origin: str) -> dict:
    """The caller's tasks among `task_ids`, by id; other tokens' ids, unknown ones and tasks
    kept past their time are left out (NotFound for each, to the caller: never "not yours")."""
    now = timezone.now()
    return {
        task.pk: state_of(task, origin=origin)
        for task in callers_tasks(principal).filter(pk__in=list(task_ids))
        if (expires := expires_at(task)) is None or expires > now
    }


def callers_tasks(principal: Principal):
    """The tasks the caller's token made, on proposals the caller may still read (the rule
    read_proposal answers by)."""
    return ProposalTask.objects.filter(
        connection=principal.token_key,
        caller=principal.user,
        proposal__in=Proposal.objects.readable_by(principal.user),
    ).select_related("proposal", "proposal__decided_by")


def list_tasks(principal: Principal, start: int, limit: int, *, origin: str):
    """A page of the caller's tasks, newest first (2025-11-25's tasks/list)."""
    rows = list(callers_tasks(principal).order_by("-created_at", "pk")[start : start + limit + 1])
    now = timezone.now()
    states = [
        state_of(task, origin=origin)
        for task in rows[:limit]
        if (expires := expires_at(task)) is None or expires > now
    ]
    return states, len(rows) > limit


def cancel_task(principal: Principal, task_id: str, *, origin: str) -> TaskState:
    """tasks/cancel: withdraw the task's pending proposal; refused (Conflict) once decided."""
    if task_id not in read_tasks(principal, [task_id], origin=origin):
        raise NotFound("Task not found")
    proposal_id = ProposalTask.objects.values_list("proposal_id", flat=True).get(pk=task_id)
    withdraw_proposal(caller=principal.user, proposal_id=proposal_id)
    return read_tasks(principal, [task_id], origin=origin)[task_id]


def expires_at(task: ProposalTask) -> datetime | None:
    decided = decided_at(task.proposal)
    return None if decided is None else decided + KEEP_DECIDED


def decided_at(proposal: Proposal) -> datetime | None:
    """When the proposal stopped waiting: its decision, or the revision that took its place."""
    if proposal.status == Proposal.Status.SUPERSEDED:
        following = Proposal.objects.filter(previous=proposal).values_list("created_at").first()
        return following[0] if following else proposal.created_at
    return None if proposal.is_pending else proposal.decided_at


def state_of(task: ProposalTask, *, origin: str) -> TaskState:
    """The task in the extension's words (DetailedTask), read from its proposal."""
    proposal = task.proposal
    review_url = origin + proposal.get_absolute_url()
    decided = decided_at(proposal)
    expires = expires_at(task)
    detail: dict = {
        "taskId": task.pk,
        "status": "working",
        "statusMessage": "",
        "createdAt": task.created_at.isoformat(),
        "lastUpdatedAt": (decided or task.created_at).isoformat(),
        "ttlMs": None if expires is None else ms_between(task.created_at, expires),
        "pollIntervalMs": POLL_INTERVAL_MS,
    }
    if proposal.is_pending:
        detail["statusMessage"] = (
            f"{WORKING}: they review every file at {review_url} (or under “Connected → Needs "
            "your approval”). Nothing to do meanwhile: this task completes with their decision "
            "(notifications/tasks on subscriptions/listen, or tasks/get)."
        )
    elif proposal.status == Proposal.Status.WITHDRAWN:
        detail["status"] = "cancelled"
        detail["statusMessage"] = (
            f"You withdrew this proposal; nothing is in the Room: {review_url}"
        )
    else:
        data = revisions.review_of(proposal)
        data["review_url"] = review_url
        data["next_step"] = next_step(proposal, data)
        detail["status"] = "completed"
        detail["statusMessage"] = data["next_step"]
        # The tools/call's own result, as the 2026-07-28 call would have answered it.
        detail["result"] = {"resultType": "complete", **tool_result(data)}
    return TaskState(detail=detail, key=events.proposal_key(proposal.pk))


def next_step(proposal: Proposal, data: dict) -> str:
    who = proposal.decided_by.get_username() if proposal.decided_by else "the owner"
    match proposal.status:
        case Proposal.Status.APPROVED:
            return (
                f"Approved by {who}: app {data['instance_id']} is in the Room's launcher "
                "(list_room_apps)."
            )
        case Proposal.Status.DECLINED:
            reason = proposal.decline_reason or "no reason given"
            return f"Declined by {who}: {reason}. Nothing is in the Room."
        case Proposal.Status.CHANGES_REQUESTED:
            answer = (
                "Answer with revise_room_proposal"
                if proposal.kind == Proposal.Kind.SNIPPET
                else "Push the changes, then propose the new pinned version to this Room with "
                "propose_room_repo_app: it continues this card"
            )
            return (
                f"{who} requested changes ({len(data['comments'])} line comments in comments): "
                f"{proposal.changes_summary or 'see the comments'}. {answer}; the revision is a "
                "task of its own."
            )
    latest = data["latest_proposal_id"]
    return f"A later revision ({latest}) took this proposal's place; it has a task of its own."


def ms_between(start: datetime, end: datetime) -> int:
    return max(0, int((end - start).total_seconds() * 1000))


# ---------------------------------------------------------------------------------------------
# Withdrawing


@transaction.atomic
def withdraw_proposal(*, caller: User, proposal_id) -> Proposal:
    """The proposer takes back a pending proposal: it leaves the owner's inbox, the card says
    so, a Room event tells. Refused once the owner decided (a decision happens once)."""
    pk = parse_uuid(proposal_id, field="proposal_id", what="Proposal")
    room_id = Proposal.objects.filter(pk=pk).values_list("room_id", flat=True).first()
    if room_id is None:
        raise NotFound(f"Proposal {str(proposal_id)!r} not found", field="proposal_id")
    # Lock the Room, then the proposal: the order every decision takes (lock_pending_for_owner).
    room = Room.objects.select_for_update().get(pk=room_id)
    proposal = (
        Proposal.objects.select_for_update(of=("self",)).select_related("decided_by").get(pk=pk)
    )
    if proposal.proposed_by_id != caller.pk:
        raise NotFound(f"Proposal {str(proposal_id)!r} not found", field="proposal_id")
    if not proposal.is_pending:
        by = f" by {proposal.decided_by}" if proposal.decided_by else ""
        raise Conflict(
            f"This proposal was already {proposal.get_status_display().lower()}{by}; only a "
            "pending proposal can be withdrawn",
            code="already_decided",
            field="proposal_id",
        )
    now = mark_decided(proposal, Proposal.Status.WITHDRAWN, by=caller)
    events.append_room_event(
        room=room,
        type=events.PROPOSAL_WITHDRAWN,
        payload={
            "proposal_id": str(pk),
            "withdrawn_by": caller.get_username(),
            "withdrawn_at": now.isoformat(),
        },
    )
    proposal.refresh_from_db()
    return proposal
