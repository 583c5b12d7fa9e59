"""The rules of Rooms, proposals and the review gate: every interface calls these functions.

Who may see what is in rooms/access.py; the snippet rules themselves (paths, sizes, what runs)
are in rooms/snippets.py.
"""

from dataclasses import dataclass
from pathlib import Path

from django.db import transaction
from django.db.models import Max
from django.utils import timezone

from osfoundry.auth import AnyUser, User
from osfoundry.errors import Conflict, Forbidden, Invalid, NotFound, refuse
from osfoundry.idempotency import IdempotentRequest, canonical_hash, key_problems
from osfoundry.schemas import MAX_PAGE

from . import events
from .access import get_app_for_user, get_room_for_user, parse_uuid
from .gitimport import read_commit
from .models import (
    LauncherApp,
    Project,
    Proposal,
    ProposalKey,
    Repository,
    RepositoryVersion,
    Room,
)
from .snippets import name_problems, snippet_problems, text_bytes

# A card with more files than this still works, but warns that the app belongs in a repository.
CARD_FILES_WARNING = 20


# ---------------------------------------------------------------------------------------------
# Proposing


def check_name(name: str) -> str:
    name = name.strip()
    if not name:
        raise Invalid("name: must not be empty; give the app a short title", field="name")
    return name


@dataclass(frozen=True)
class ProposalResult:
    proposal: Proposal
    replay: bool = False  # the same key and arguments were seen before: nothing new stored
    duplicate_of_pending: bool = False  # identical content was already pending: same card

    @property
    def is_new(self) -> bool:
        return not (self.replay or self.duplicate_of_pending)

    def as_dict(self) -> dict:
        """The proposal's status and how this call related to it. Each interface adds its own
        next step (how to wait for the owner) in its own terms."""
        data = self.proposal.as_dict()
        data["replay"] = self.replay
        data["duplicate_of_pending"] = self.duplicate_of_pending
        if self.replay:
            data["note"] = "Replay: this idempotency_key was already used with these arguments."
        elif self.duplicate_of_pending:
            data["note"] = "Identical content from you is already pending in this Room: same card."
        return data


def propose_snippet(
    *, caller: User, room_id: str, name: str, files: dict[str, str], idempotency_key: str
) -> ProposalResult:
    room = get_room_for_user(caller, room_id, agent=True)
    # Every problem at once, before the key is looked up: a NUL cannot even reach PostgreSQL.
    problems = key_problems(idempotency_key) + name_problems(name) + snippet_problems(files)
    refuse(problems, field="files")
    request = proposal_request(
        caller,
        "propose_snippet",
        idempotency_key,
        {"op": "snippet", "room_id": str(room.pk), "name": name, "files": files},
    )
    if (previous := request.previous()) is not None:
        return ProposalResult(previous, replay=True)
    name = check_name(name)
    content = {"kind": "snippet", "name": name, "files": files}
    return store_proposal(
        request,
        room=room,
        fields={
            "kind": Proposal.Kind.SNIPPET,
            "name": name,
            "files": files,
            "content_hash": canonical_hash(content),
            "file_count": len(files),
            "total_bytes": sum(text_bytes(text) for text in files.values()),
        },
    )


def propose_repo_version(
    *,
    caller: User,
    room_id: str,
    name: str,
    repository_id: str,
    version_id: str,
    idempotency_key: str,
) -> ProposalResult:
    room = get_room_for_user(caller, room_id, agent=True)
    refuse(key_problems(idempotency_key) + name_problems(name), field="name")
    request = proposal_request(
        caller,
        "propose_repo_version",
        idempotency_key,
        {
            "op": "repo",
            "room_id": str(room.pk),
            "name": name,
            "repository_id": str(repository_id),
            "version_id": str(version_id),
        },
    )
    if (previous := request.previous()) is not None:
        return ProposalResult(previous, replay=True)
    name = check_name(name)
    version = get_version_in_project(room.project, repository_id, version_id)
    content = {"kind": "repo", "name": name, "version_id": str(version.pk)}
    return store_proposal(
        request,
        room=room,
        fields={
            "kind": Proposal.Kind.REPO,
            "name": name,
            "repository_version": version,
            "content_hash": canonical_hash(content),
            "file_count": len(version.files),
            "total_bytes": sum(text_bytes(text or "") for text in version.files.values()),
        },
    )


def get_version_in_project(
    project: Project, repository_id: str, version_id: str
) -> RepositoryVersion:
    """A pinned version of a repository of `project`, as a repo proposal must name."""
    repo_pk = parse_uuid(repository_id, field="repository_id", what="Repository")
    version_pk = parse_uuid(version_id, field="version_id", what="Version")
    version = (
        RepositoryVersion.objects.select_related("repository")
        .filter(pk=version_pk, repository__project=project)
        .first()
    )
    if version is None:
        raise NotFound(
            f"Version {str(version_id)!r} not found in a repository of this Room's project",
            field="version_id",
        )
    if version.repository_id != repo_pk:
        raise Invalid(
            f"version_id: version {str(version_id)!r} belongs to repository "
            f"{str(version.repository_id)!r}, not {str(repository_id)!r}",
            field="version_id",
        )
    return version


def proposal_request(
    caller: User, operation: str, key: str, arguments: dict
) -> IdempotentRequest[Proposal]:
    return IdempotentRequest(
        ProposalKey, {"caller": caller}, operation, key, canonical_hash(arguments)
    )


def store_proposal(
    request: IdempotentRequest[Proposal], *, room: Room, fields: dict
) -> ProposalResult:
    return request.store(
        lambda: insert_proposal(request, room=room, fields=fields),
        lambda previous: ProposalResult(previous, replay=True),
    )


@transaction.atomic
def insert_proposal(
    request: IdempotentRequest[Proposal], *, room: Room, fields: dict
) -> ProposalResult:
    caller = request.scope["caller"]
    room = Room.objects.select_for_update().get(pk=room.pk)
    pending = (
        Proposal.objects.pending()
        .filter(room=room, proposed_by=caller, content_hash=fields["content_hash"])
        .first()
    )
    if pending:
        request.record(pending)
        return ProposalResult(pending, duplicate_of_pending=True)
    proposal = Proposal.objects.create(room=room, proposed_by=caller, **fields)
    request.record(proposal)
    events.append_room_event(
        room=room,
        type=events.PROPOSAL_CREATED,
        payload={
            "proposal_id": str(proposal.pk),
            "name": proposal.name,
            "kind": proposal.kind,
            "proposed_by": caller.get_username(),
            "file_count": proposal.file_count,
            "total_bytes": proposal.total_bytes,
        },
    )
    return ProposalResult(proposal)


# ---------------------------------------------------------------------------------------------
# Deciding


def lock_pending_for_owner(*, owner: AnyUser, proposal_id, content_hash: str | None) -> Proposal:
    """Lock the Room, then the proposal. Call inside a transaction."""
    pk = parse_uuid(proposal_id, field="proposal_id", what="Proposal")
    found = Proposal.objects.filter(pk=pk).values_list("room_id", flat=True).first()
    if found is None:
        raise NotFound(f"Proposal {str(proposal_id)!r} not found", field="proposal_id")
    # Lock first: two owners' tabs can approve at once; the Room lock also orders tab positions.
    room = Room.objects.select_for_update().get(pk=found)
    # of=("self",): PostgreSQL cannot lock the nullable side of the decided_by outer join.
    proposal = (
        Proposal.objects.select_for_update(of=("self",)).select_related("decided_by").get(pk=pk)
    )
    proposal.room = room
    if not room.is_owned_by(owner):
        if owner.is_authenticated and room.members.filter(pk=owner.pk).exists():
            raise NotFound(f"Proposal {str(proposal_id)!r} not found", field="proposal_id")
        if owner.pk == proposal.proposed_by_id:
            raise Forbidden("Only the Room owner can approve or decline a proposal")
        raise NotFound(f"Proposal {str(proposal_id)!r} not found", field="proposal_id")
    if not proposal.is_pending:
        who = proposal.decided_by.get_username() if proposal.decided_by else "someone"
        raise Conflict(
            f"This proposal was already {proposal.status} by {who} at "
            f"{proposal.decided_at:%Y-%m-%d %H:%M} UTC; a decision happens once",
            code="already_decided",
        )
    if content_hash is not None and content_hash != proposal.content_hash:
        raise Conflict(
            "The card you reviewed does not match this proposal's content; reload and review again",
            code="stale_card",
            field="content_hash",
        )
    return proposal


@transaction.atomic
def approve_proposal(
    *, owner: AnyUser, proposal_id, content_hash: str | None = None
) -> LauncherApp:
    proposal = lock_pending_for_owner(
        owner=owner, proposal_id=proposal_id, content_hash=content_hash
    )
    room = proposal.room
    now = timezone.now()
    changed = Proposal.objects.filter(pk=proposal.pk, status=Proposal.Status.PENDING).update(
        status=Proposal.Status.APPROVED, decided_by=owner, decided_at=now
    )
    if changed != 1:
        raise Conflict("This proposal was decided meanwhile; reload", code="already_decided")
    last = room.apps.aggregate(last=Max("position"))["last"]
    app = LauncherApp.objects.create(
        room=room, proposal=proposal, name=proposal.name, position=0 if last is None else last + 1
    )
    decided = {"decided_by": owner.get_username(), "decided_at": now.isoformat()}
    events.append_room_event(
        room=room,
        type=events.PROPOSAL_APPROVED,
        payload={"proposal_id": str(proposal.pk), "instance_id": str(app.pk), **decided},
    )
    events.append_room_event(
        room=room,
        type=events.APP_CREATED,
        payload={
            "instance_id": str(app.pk),
            "proposal_id": str(proposal.pk),
            "name": app.name,
            "position": app.position,
            "kind": proposal.kind,
        },
    )
    return app


@transaction.atomic
def decline_proposal(
    *, owner, proposal_id, content_hash: str | None = None, reason: str = ""
) -> Proposal:
    reason = reason.strip()
    if len(reason) > 1000:
        raise Invalid("reason: at most 1000 characters", field="reason")
    proposal = lock_pending_for_owner(
        owner=owner, proposal_id=proposal_id, content_hash=content_hash
    )
    now = timezone.now()
    changed = Proposal.objects.filter(pk=proposal.pk, status=Proposal.Status.PENDING).update(
        status=Proposal.Status.DECLINED, decided_by=owner, decided_at=now, decline_reason=reason
    )
    if changed != 1:
        raise Conflict("This proposal was decided meanwhile; reload", code="already_decided")
    events.append_room_event(
        room=proposal.room,
        type=events.PROPOSAL_DECLINED,
        payload={
            "proposal_id": str(proposal.pk),
            "decided_by": owner.get_username(),
            "decided_at": now.isoformat(),
            "reason": reason,
        },
    )
    proposal.refresh_from_db()
    return proposal


@transaction.atomic
def deploy_app(
    *, acting_user: AnyUser, room_id, instance_id, state: str = "ready", detail: str = ""
) -> LauncherApp:
    if state not in LauncherApp.BuildState.values:
        allowed = ", ".join(LauncherApp.BuildState.values)
        raise Invalid(f"state: {state!r} is not a build state; use one of {allowed}", field="state")
    app = get_app_for_user(acting_user, room_id, instance_id)
    room = Room.objects.select_for_update().get(pk=app.room_id)
    if not room.is_owned_by(acting_user):
        raise Forbidden("Only the Room owner can deploy an app")
    app.build_state = state
    app.build_detail = detail[:500]
    app.build_updated_at = timezone.now()
    app.build_updated_by = acting_user
    app.save(update_fields=["build_state", "build_detail", "build_updated_at", "build_updated_by"])
    events.append_room_event(
        room=room,
        type=events.APP_DEPLOYED,
        payload={
            "instance_id": str(app.pk),
            "build_state": state,
            "by": acting_user.get_username(),
        },
    )
    return app


# ---------------------------------------------------------------------------------------------
# Reads shared by the API, the MCP tools and the console


def list_rooms(user: AnyUser) -> list[dict]:
    rooms = Room.objects.visible_to(user).select_related("project", "owner")
    return [room.as_dict() for room in rooms]


def list_room_apps(
    user: AnyUser, room_id, *, limit: int = MAX_PAGE, agent: bool = False
) -> list[dict]:
    room = get_room_for_user(user, room_id, agent=agent)
    apps = room.apps.select_related("proposal").order_by("position")[:limit]
    return [app.as_dict() for app in apps]


# ---------------------------------------------------------------------------------------------
# Repositories


def import_repo_version(
    *, repository: Repository, path: str | Path, ref: str = "HEAD"
) -> tuple[RepositoryVersion, bool]:
    """Pin `ref` of the local git repository at `path` as a version; (version, created)."""
    snapshot = read_commit(Path(path), ref)  # git I/O before any transaction
    version, created = RepositoryVersion.objects.get_or_create(
        repository=repository,
        commit_hash=snapshot.commit_hash,
        defaults={"ref": ref, "message": snapshot.message, "files": snapshot.files},
    )
    return version, created
