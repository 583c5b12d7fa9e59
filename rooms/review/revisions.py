"""Review as a loop: updates of approved apps, revisions of proposals, "Request changes" with
line comments, and what a proposer reads back.

A snippet's revision is new files (revise_proposal). A repository proposal's revision is a new
pinned version of the same repository, proposed to the same Room by the same proposer
(propose_room_repo_app): it continues the line of work whose owner requested changes.

A line of work is a chain of proposals (`Proposal.previous`); its latest revision is the one on
the card. An update names the app and the revision it was proposed against; the decision binds
to that revision too (rooms/tabs.refuse_unless_current).
"""

from django.db import transaction

from osfoundry.auth import AnyUser, User
from osfoundry.errors import Conflict, Invalid, NotFound, refuse
from osfoundry.text import text_problems

from .. import events, services
from ..access import get_app_for_user, get_proposal_for_user, get_room_for_user
from ..models import Proposal, ReviewComment
from ..runtime.rules import app_files
from ..services import ProposalResult, Target, lock_pending_for_owner, mark_decided

MAX_COMMENTS = 200
MAX_COMMENT_CHARS = 5_000
MAX_SUMMARY_CHARS = 1_000
# A revision continues a line of work that is still open to it.
REVISABLE = (Proposal.Status.PENDING, Proposal.Status.CHANGES_REQUESTED, Proposal.Status.DECLINED)


def propose_update(
    *,
    caller: User,
    room_id: str,
    instance_id: str,
    files: dict[str, str],
    idempotency_key: str,
    name: str | None = None,
) -> ProposalResult:
    """Propose new content for an approved snippet app the caller can see."""
    app = get_app_for_user(caller, room_id, instance_id, agent=True)
    room = app.room  # the Room get_app_for_user found it in
    if app.proposal.kind != Proposal.Kind.SNIPPET:
        raise Invalid(
            "instance_id: a repository app is updated by proposing a new pinned version "
            "(propose_room_repo_app)",
            field="instance_id",
        )
    name = app.name if name is None else name
    target = Target(
        fields={"app": app, "base_revision": app.revision},
        content={"update_of": str(app.pk), "base_revision": app.revision},
        same_as=(app.name, app.proposal.files),
        same_message=f"files: identical to “{app.name}” v{app.revision}; nothing to review",
    )
    return services.propose_files(
        caller,
        room=room,
        operation="propose_update",
        idempotency_key=idempotency_key,
        arguments={"op": "update", "room_id": str(room.pk), "instance_id": str(app.pk)},
        name=name,
        files=files,
        target=target,
    )


def revise_proposal(
    *,
    caller: User,
    proposal_id: str,
    files: dict[str, str],
    idempotency_key: str,
    name: str | None = None,
) -> ProposalResult:
    """A new revision of the caller's own proposal: it takes the earlier one's place on the card."""
    previous = get_proposal_for_user(caller, proposal_id)
    if previous.proposed_by_id != caller.pk:
        raise NotFound(f"Proposal {str(proposal_id)!r} not found", field="proposal_id")
    if previous.kind != Proposal.Kind.SNIPPET:
        raise Invalid(
            "proposal_id: a repository proposal is revised by pushing the changes and proposing "
            "the new pinned version to the same Room (propose_room_repo_app)",
            field="proposal_id",
        )
    # Checked here for a clear answer, and again under the lock when the revision is stored.
    if previous.status not in REVISABLE and previous.status != Proposal.Status.SUPERSEDED:
        raise Conflict(
            f"This proposal was already {previous.status}; propose an update of its app instead",
            code="already_decided",
            field="proposal_id",
        )
    room = get_room_for_user(caller, previous.room_id, agent=True)
    name = previous.name if name is None else name
    line = {"revision_of": str(line_root(previous).pk), "iteration": previous.iteration + 1}
    update = {"update_of": str(previous.app_id), "base_revision": previous.base_revision}
    target = Target(
        fields={
            "previous": previous,
            "iteration": previous.iteration + 1,
            "app": previous.app if previous.is_update else None,
            "base_revision": previous.base_revision,
        },
        content=line | (update if previous.is_update else {}),
        same_as=(previous.name, previous.files),
        same_message=f"files: identical to revision {previous.iteration}; nothing to review",
    )
    return services.propose_files(
        caller,
        room=room,
        operation="revise_proposal",
        idempotency_key=idempotency_key,
        arguments={"op": "revise", "proposal_id": str(previous.pk)},
        name=name,
        files=files,
        target=target,
    )


def how_to_revise(proposal: Proposal) -> str:
    """What the proposer does to answer the owner's requested changes."""
    following = proposal.iteration + 1
    if proposal.kind == Proposal.Kind.REPO:
        assert proposal.repository_version is not None  # a database constraint
        return (
            f"Push the changes to the repository {proposal.repository_version.repository.name}, "
            "then propose the new pinned version to this Room with propose_room_repo_app "
            f"(REST: POST /api/v1/rooms/{proposal.room_id}/proposals/repo): it continues this "
            f"card as revision {following}."
        )
    return (
        "Answer with revise_room_proposal (REST: POST "
        f"/api/v1/proposals/{proposal.pk}/revisions), all files: revision {following} takes "
        "this one's place on the card."
    )


def line_root(proposal: Proposal) -> Proposal:
    while proposal.previous is not None:
        proposal = proposal.previous
    return proposal


def line_of_work(proposal: Proposal) -> list[Proposal]:
    """Every revision of `proposal`'s line of work, oldest first."""
    chain = [proposal]
    while chain[0].previous_id:
        chain.insert(0, Proposal.objects.select_related("decided_by").get(pk=chain[0].previous_id))
    while (following := Proposal.objects.filter(previous=chain[-1]).first()) is not None:
        chain.append(following)
    return chain


# ---------------------------------------------------------------------------------------------
# Request changes


def comment_problems(proposal: Proposal, comments: list[dict]) -> tuple[list[dict], list[str]]:
    """Comments checked against the proposal's files: (clean comments, problems)."""
    clean, problems = [], []
    files = app_files(proposal)
    if len(comments) > MAX_COMMENTS:
        return [], [f"comments: at most {MAX_COMMENTS}; send the rest with the next review"]
    for index, comment in enumerate(comments):
        where = f"comments[{index}]"
        if not isinstance(comment, dict):
            problems.append(f"{where}: must be an object with path, line_start, line_end, body")
            continue
        path, body = comment.get("path"), comment.get("body")
        start, end = comment.get("line_start"), comment.get("line_end", comment.get("line_start"))
        if not isinstance(path, str) or path not in files:
            problems.append(f"{where}.path: {path!r} is not a file of this proposal")
            continue
        lines = files[path].count("\n") + 1
        if not (isinstance(start, int) and isinstance(end, int) and 1 <= start <= end <= lines):
            problems.append(f"{where}: lines {start!r}–{end!r} are not within 1–{lines} of {path}")
            continue
        if not isinstance(body, str) or not body.strip() or len(body) > MAX_COMMENT_CHARS:
            problems.append(f"{where}.body: write 1–{MAX_COMMENT_CHARS:,} characters")
            continue
        if found := text_problems(body, field=f"{where}.body", what="comment"):
            problems.extend(found)
            continue
        clean.append({"path": path, "line_start": start, "line_end": end, "body": body.strip()})
    return clean, problems


@transaction.atomic
def request_changes(
    *,
    owner: AnyUser,
    proposal_id,
    content_hash: str | None = None,
    summary: str = "",
    comments: list[dict] | None = None,
) -> Proposal:
    """The owner's review: line comments and a summary; the proposal waits for a revision."""
    summary = summary.strip()
    if len(summary) > MAX_SUMMARY_CHARS:
        raise Invalid(f"summary: at most {MAX_SUMMARY_CHARS:,} characters", field="summary")
    # The agent reads the review as the owner wrote it (and PostgreSQL text holds no NUL).
    refuse(text_problems(summary, field="summary", what="summary"))
    proposal = lock_pending_for_owner(
        owner=owner, proposal_id=proposal_id, content_hash=content_hash
    )
    assert isinstance(owner, User)
    clean, problems = comment_problems(proposal, comments or [])
    if problems:
        raise Invalid("; ".join(problems), field="comments")
    if not summary and not clean:
        raise Invalid(
            "summary: say what to change, or comment on a line of the card", field="summary"
        )
    now = mark_decided(
        proposal, Proposal.Status.CHANGES_REQUESTED, by=owner, changes_summary=summary
    )
    ReviewComment.objects.bulk_create(
        ReviewComment(proposal=proposal, author=owner, **comment) for comment in clean
    )
    services.announce_decision(
        proposal,
        events.PROPOSAL_CHANGES_REQUESTED,
        by=owner,
        at=now,
        reason=summary,
        comment_count=len(clean),
    )
    proposal.refresh_from_db()
    return proposal


# ---------------------------------------------------------------------------------------------
# Reading a review


def is_outdated(comment: ReviewComment, made_on: Proposal, latest: Proposal) -> bool:
    """A comment is outdated once a later revision changed the lines it is on."""
    if made_on.pk == latest.pk:
        return False
    return not same_lines(
        app_files(made_on), app_files(latest), comment.path, comment.line_start, comment.line_end
    )


def same_lines(before: dict, after: dict, path: str, start: int, end: int) -> bool:
    """Lines start–end of `path` read the same in both sets of files."""
    if path not in before or path not in after:
        return False
    return before[path].split("\n")[start - 1 : end] == after[path].split("\n")[start - 1 : end]


def review_comments(chain: list[Proposal]) -> list[dict]:
    by_pk = {proposal.pk: proposal for proposal in chain}
    found = ReviewComment.objects.filter(proposal__in=chain).select_related("author")
    return [
        {
            "proposal_id": str(comment.proposal_id),
            "revision": by_pk[comment.proposal_id].iteration,
            "path": comment.path,
            "line_start": comment.line_start,
            "line_end": comment.line_end,
            "body": comment.body,
            "author": comment.author.get_username(),
            "created_at": comment.created_at.isoformat(),
            "outdated": is_outdated(comment, by_pk[comment.proposal_id], chain[-1]),
        }
        for comment in found.order_by("created_at", "pk")
    ]


def read_proposal(user: AnyUser, proposal_id) -> dict:
    """A proposal's review for its proposer or its Room's owner: status, decision, every
    comment of its line of work, the packages its app brings, its revisions. Never its files
    (the proposer sent them)."""
    return review_of(get_proposal_for_user(user, proposal_id))


def review_of(proposal: Proposal) -> dict:
    """read_proposal's answer, for a caller who may read the proposal."""
    chain = line_of_work(proposal)
    data = proposal.as_dict()
    data["decision"] = (
        {
            "status": proposal.status,
            "by": proposal.decided_by.get_username(),
            "at": proposal.decided_at.isoformat() if proposal.decided_at else None,
            "reason": proposal.decline_reason or proposal.changes_summary or None,
        }
        if proposal.decided_by
        else None
    )
    data["comments"] = review_comments(chain)
    data["packages"] = [package.as_dict() for package in services.app_packages(proposal)]
    data["revisions"] = [
        {"proposal_id": str(p.pk), "revision": p.iteration, "status": p.status} for p in chain
    ]
    data["latest_proposal_id"] = str(chain[-1].pk)
    if proposal.status == Proposal.Status.CHANGES_REQUESTED and chain[-1].pk == proposal.pk:
        data["next_step"] = how_to_revise(proposal)
    return data
