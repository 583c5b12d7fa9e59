"""The rules of Rooms, proposals and the review gate: every interface calls these functions."""

import hashlib
import json
import unicodedata
import uuid
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import Max
from django.utils import timezone

from osfoundry.errors import Conflict, Forbidden, Invalid, NotFound, Unavailable

from . import events
from .models import LauncherApp, Proposal, ProposalKey, RepositoryVersion, Room, RoomEvent

SNIPPET_ENTRY = "src/App.tsx"
LOCAL_ROOMS_UNAVAILABLE = "Local Rooms are unavailable"
MAX_PATH_CHARS = 255
# A card with more files than this still works, but warns that the app belongs in a repository.
CARD_FILES_WARNING = 20

WAIT_FOR_APPROVAL = (
    "The proposal is pending: nothing is in the Room until its owner approves it under "
    '"Connected → Needs your approval". Cheapest way to wait: end your turn and ask the owner '
    "to approve, then call list_room_apps once. Only if you have other work, poll "
    "read_proposal/list_room_apps with capped backoff (10 s doubling to 5 min)."
)


def canonical_hash(data) -> str:
    encoded = json.dumps(data, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    # surrogatepass: a lone surrogate must reach validation (and its clear error), not crash.
    return hashlib.sha256(encoded.encode("utf-8", "surrogatepass")).hexdigest()


def parse_uuid(value, *, field: str, what: str):
    try:
        return uuid.UUID(str(value))
    except (ValueError, AttributeError):
        raise NotFound(f"{what} {value!r} not found", field=field) from None


# ---------------------------------------------------------------------------------------------
# Access


def get_room_for_user(user, room_id, *, agent: bool = False) -> Room:
    """The Room if `user` owns it or is a member; NotFound for missing and not-yours alike.

    `agent=True` is for agent-facing operations, which never reach a local Room.
    """
    pk = parse_uuid(room_id, field="room_id", what="Room")
    room = Room.objects.visible_to(user).filter(pk=pk).select_related("project", "owner").first()
    if room is None:
        raise NotFound(
            f"Room {str(room_id)!r} not found; call list_rooms for the Room ids you can use",
            field="room_id",
        )
    if agent and room.is_local:
        raise Unavailable(LOCAL_ROOMS_UNAVAILABLE, code="local_room", field="room_id")
    return room


def get_proposal_for_user(user, proposal_id) -> Proposal:
    """The proposal for its Room's owner or its proposer. Members and strangers get NotFound:
    pending content is for the reviewer's eyes only."""
    pk = parse_uuid(proposal_id, field="proposal_id", what="Proposal")
    proposal = (
        Proposal.objects.select_related("room", "proposed_by", "decided_by", "app")
        .filter(pk=pk)
        .first()
    )
    if proposal is None or not user.is_authenticated:
        raise NotFound(f"Proposal {str(proposal_id)!r} not found", field="proposal_id")
    if user.pk not in (proposal.room.owner_id, proposal.proposed_by_id):
        raise NotFound(f"Proposal {str(proposal_id)!r} not found", field="proposal_id")
    return proposal


def get_app_for_user(user, room_id, instance_id, *, agent: bool = False) -> LauncherApp:
    room = get_room_for_user(user, room_id, agent=agent)
    pk = parse_uuid(instance_id, field="instance_id", what="App")
    app = room.apps.select_related("proposal").filter(pk=pk).first()
    if app is None:
        raise NotFound(
            f"App {str(instance_id)!r} not found in this Room; call list_room_apps for its apps",
            field="instance_id",
        )
    return app


def get_repo_version_for_user(user, *, repository_id, version_id) -> RepositoryVersion:
    """A pinned version for members of its project and for owners of the project's Rooms (who
    review repo proposals); NotFound for everyone else."""
    repo_pk = parse_uuid(repository_id, field="repository_id", what="Repository")
    version_pk = parse_uuid(version_id, field="version_id", what="Version")
    version = (
        RepositoryVersion.objects.select_related("repository__project")
        .filter(pk=version_pk, repository_id=repo_pk)
        .first()
    )
    project = version.repository.project if version else None
    if (
        project is None
        or not user.is_authenticated
        or not (
            project.members.filter(pk=user.pk).exists() or project.rooms.filter(owner=user).exists()
        )
    ):
        raise NotFound(f"Version {str(version_id)!r} not found", field="version_id")
    return version


# ---------------------------------------------------------------------------------------------
# Snippet rules


def path_problem(path: str) -> str | None:
    """Why `path` is not a safe relative path, or None.

    Paths are taken as given, never normalised: `src/./App.tsx`, `src//x.ts` and a trailing
    slash are refused rather than silently rewritten, so the reviewer sees exactly what runs.
    """
    if not path:
        return "empty path"
    if len(path) > MAX_PATH_CHARS:
        return f"longer than {MAX_PATH_CHARS} characters"
    if any(unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp") for ch in path):
        return "contains a NUL, control or invisible formatting character"
    if "\\" in path:
        return "backslash; use '/' between folders"
    if path.startswith("/"):
        return "absolute path; use a path relative to the app root, e.g. 'src/App.tsx'"
    if len(path) >= 2 and path[1] == ":":
        return "drive letter; use a path relative to the app root"
    segments = path.split("/")
    if ".." in segments:
        return "'..' segment; paths must stay inside the app"
    if "" in segments:
        return "empty segment ('//' or a trailing '/'); write each folder once"
    if "." in segments:
        return "'.' segment; write the path without './'"
    return None


def path_identity(path: str) -> str:
    # Two keys that name the same file on a case-insensitive or normalising file system
    # (macOS, Windows) would overwrite each other when the app is checked out: refuse them.
    return unicodedata.normalize("NFC", path).casefold()


def snippet_problems(files: dict[str, str]) -> list[str]:
    problems = []
    count = len(files)
    if count == 0:
        return [f"files: empty; add at least {SNIPPET_ENTRY}"]
    if count > settings.SNIPPET_MAX_FILES:
        problems.append(
            f"files: {count} files, at most {settings.SNIPPET_MAX_FILES} allowed; "
            "an app this size belongs in a repository: use propose_room_repo_app"
        )
    total = 0
    seen: dict[str, str] = {}
    for path, text in files.items():
        problem = path_problem(path)
        if problem:
            problems.append(f"unsafe path {path!r}: {problem}")
            continue
        size = len(text.encode("utf-8", "surrogatepass"))
        total += size
        if not is_storable_text(text):
            # PostgreSQL's jsonb cannot hold NUL or lone surrogates; no database gets them.
            problems.append(
                f"files[{path!r}]: contains NUL bytes or invalid Unicode, i.e. binary content; "
                "a snippet carries text files only: drop it, or put the app in a repository "
                "and use propose_room_repo_app"
            )
        if size > settings.SNIPPET_MAX_FILE_BYTES:
            problems.append(
                f"files[{path!r}]: {size} bytes, at most {settings.SNIPPET_MAX_FILE_BYTES} "
                "per file; split it, or use propose_room_repo_app for large apps"
            )
        identity = path_identity(path)
        if identity in seen:
            problems.append(
                f"paths {seen[identity]!r} and {path!r} collide (they differ only in case or "
                "Unicode normalisation); rename one"
            )
        seen.setdefault(identity, path)
    if total > settings.SNIPPET_MAX_TOTAL_BYTES:
        problems.append(
            f"files: {total} bytes in all, at most {settings.SNIPPET_MAX_TOTAL_BYTES}; "
            "an app this size belongs in a repository: use propose_room_repo_app"
        )
    if SNIPPET_ENTRY not in files:
        problems.append(f"{SNIPPET_ENTRY} missing")
    return problems


def is_storable_text(text: str) -> bool:
    if "\x00" in text:
        return False
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def check_name(name: str) -> str:
    name = name.strip()
    if not name:
        raise Invalid("name: must not be empty; give the app a short title", field="name")
    return name


# ---------------------------------------------------------------------------------------------
# Proposing


@dataclass(frozen=True)
class ProposalResult:
    proposal: Proposal
    replay: bool = False  # the same key and arguments were seen before: nothing new stored
    duplicate_of_pending: bool = False  # identical content was already pending: same card


def propose_snippet(
    *, caller, room_id: str, name: str, files: dict[str, str], idempotency_key: str
) -> ProposalResult:
    room = get_room_for_user(caller, room_id, agent=True)
    request_hash = canonical_hash(
        {"op": "snippet", "room_id": str(room.pk), "name": name, "files": files}
    )
    previous = find_replay(caller, "propose_snippet", idempotency_key, request_hash)
    if previous:
        return previous
    name = check_name(name)
    problems = snippet_problems(files)
    if problems:
        raise Invalid("; ".join(problems), code="invalid_files", field="files")
    content = {"kind": "snippet", "name": name, "files": files}
    return store_proposal(
        caller=caller,
        room=room,
        operation="propose_snippet",
        key=idempotency_key,
        request_hash=request_hash,
        fields={
            "kind": Proposal.Kind.SNIPPET,
            "name": name,
            "files": files,
            "content_hash": canonical_hash(content),
            "file_count": len(files),
            "total_bytes": sum(len(t.encode("utf-8", "surrogatepass")) for t in files.values()),
        },
    )


def propose_repo_version(
    *, caller, room_id: str, name: str, repository_id: str, version_id: str, idempotency_key: str
) -> ProposalResult:
    room = get_room_for_user(caller, room_id, agent=True)
    request_hash = canonical_hash(
        {
            "op": "repo",
            "room_id": str(room.pk),
            "name": name,
            "repository_id": str(repository_id),
            "version_id": str(version_id),
        }
    )
    previous = find_replay(caller, "propose_repo_version", idempotency_key, request_hash)
    if previous:
        return previous
    name = check_name(name)
    repo_pk = parse_uuid(repository_id, field="repository_id", what="Repository")
    version_pk = parse_uuid(version_id, field="version_id", what="Version")
    version = (
        RepositoryVersion.objects.select_related("repository")
        .filter(pk=version_pk, repository__project=room.project)
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
    content = {"kind": "repo", "name": name, "version_id": str(version.pk)}
    files = version.files
    return store_proposal(
        caller=caller,
        room=room,
        operation="propose_repo_version",
        key=idempotency_key,
        request_hash=request_hash,
        fields={
            "kind": Proposal.Kind.REPO,
            "name": name,
            "repository_version": version,
            "content_hash": canonical_hash(content),
            "file_count": len(files),
            "total_bytes": sum(
                len((t or "").encode("utf-8", "surrogatepass")) for t in files.values()
            ),
        },
    )


def find_replay(caller, operation: str, key: str, request_hash: str) -> ProposalResult | None:
    used = (
        ProposalKey.objects.select_related("proposal")
        .filter(caller=caller, operation=operation, key=key)
        .first()
    )
    if used is None:
        return None
    if used.request_hash != request_hash:
        raise Conflict(
            f"idempotency_key {key!r} was already used for a different request "
            f"(proposal {used.proposal_id}); send new content with a new key, or resend the "
            "original arguments to get the original result",
            code="idempotency_key_reused",
            field="idempotency_key",
        )
    return ProposalResult(used.proposal, replay=True)


def store_proposal(*, caller, room, operation, key, request_hash, fields) -> ProposalResult:
    # Retried: a concurrent request with the same key or content may win the unique
    # constraint between our read and our insert; the second pass then finds its row.
    for _attempt in range(3):
        try:
            return insert_proposal(
                caller=caller,
                room=room,
                operation=operation,
                key=key,
                request_hash=request_hash,
                fields=fields,
            )
        except IntegrityError:
            previous = find_replay(caller, operation, key, request_hash)
            if previous:
                return previous
    raise Conflict("Too many concurrent proposals with this content; retry in a moment")


@transaction.atomic
def insert_proposal(*, caller, room, operation, key, request_hash, fields) -> ProposalResult:
    room = Room.objects.select_for_update().get(pk=room.pk)
    pending = (
        Proposal.objects.pending()
        .filter(room=room, proposed_by=caller, content_hash=fields["content_hash"])
        .first()
    )
    if pending:
        ProposalKey.objects.create(
            caller=caller, operation=operation, key=key, request_hash=request_hash, proposal=pending
        )
        return ProposalResult(pending, duplicate_of_pending=True)
    proposal = Proposal.objects.create(room=room, proposed_by=caller, **fields)
    ProposalKey.objects.create(
        caller=caller, operation=operation, key=key, request_hash=request_hash, proposal=proposal
    )
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


def lock_pending_for_owner(*, owner, proposal_id, content_hash: str | None) -> Proposal:
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
def approve_proposal(*, owner, proposal_id, content_hash: str | None = None) -> LauncherApp:
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
def deploy_app(*, acting_user, room_id, instance_id, state: str = "ready", detail: str = ""):
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


def room_summary(room: Room) -> dict:
    return {
        "room_id": str(room.pk),
        "name": room.name,
        "kind": room.kind,
        "project": room.project.name,
        "project_id": str(room.project_id),
        "owner": room.owner.get_username(),
        "available": not room.is_local,
    }


def app_summary(app: LauncherApp) -> dict:
    """The safe launcher entry: never files, config, logs, secrets or stored data."""
    return {
        "instance_id": str(app.pk),
        "name": app.name,
        "position": app.position,
        "kind": app.proposal.kind,
        "created_at": app.created_at.isoformat(),
        "build": {
            "state": app.build_state or None,
            "updated_at": app.build_updated_at.isoformat() if app.build_updated_at else None,
        },
    }


def list_rooms(user) -> list[dict]:
    rooms = Room.objects.visible_to(user).select_related("project", "owner")
    return [room_summary(room) for room in rooms]


def list_room_apps(user, room_id, *, limit: int = 50, agent: bool = False) -> list[dict]:
    room = get_room_for_user(user, room_id, agent=agent)
    apps = room.apps.select_related("proposal").order_by("position")[:limit]
    return [app_summary(app) for app in apps]


def proposal_summary(proposal: Proposal) -> dict:
    app = getattr(proposal, "app", None) if proposal.status == Proposal.Status.APPROVED else None
    return {
        "proposal_id": str(proposal.pk),
        "room_id": str(proposal.room_id),
        "name": proposal.name,
        "kind": proposal.kind,
        "status": proposal.status,
        "content_hash": proposal.content_hash,
        "file_count": proposal.file_count,
        "total_bytes": proposal.total_bytes,
        "created_at": proposal.created_at.isoformat(),
        "decided_by": proposal.decided_by.get_username() if proposal.decided_by else None,
        "decided_at": proposal.decided_at.isoformat() if proposal.decided_at else None,
        "decline_reason": proposal.decline_reason or None,
        "instance_id": str(app.pk) if app else None,
    }


def proposal_result(result: ProposalResult) -> dict:
    data = proposal_summary(result.proposal)
    data["replay"] = result.replay
    data["duplicate_of_pending"] = result.duplicate_of_pending
    if result.replay:
        data["note"] = "Replay: this idempotency_key was already used with these arguments."
    elif result.duplicate_of_pending:
        data["note"] = "Identical content from you is already pending in this Room: same card."
    if data["status"] == Proposal.Status.PENDING:
        data["next_step"] = WAIT_FOR_APPROVAL
    return data


def room_events_after(
    user, room_id, *, after_sequence: int = 0, limit: int = 50, agent: bool = False
) -> dict:
    room = get_room_for_user(user, room_id, agent=agent)
    rows = list(
        RoomEvent.objects.filter(room=room, sequence__gt=after_sequence).order_by("sequence")[
            :limit
        ]
    )
    events_out = [event.as_dict() for event in rows]
    if not room.is_owned_by(user):
        events_out = [redact_for_member(event, user) for event in events_out]
    cursor = rows[-1].sequence if rows else max(after_sequence, 0)
    return {"events": events_out, "next_after_sequence": cursor}


def redact_for_member(event: dict, user) -> dict:
    # Members see that a proposal exists only when it is theirs; its name is pending content.
    if event["type"] == events.PROPOSAL_CREATED and event.get("proposed_by") != user.get_username():
        return {k: event[k] for k in ("sequence", "type", "room_id", "created_at")}
    return event


# ---------------------------------------------------------------------------------------------
# Repositories


def import_repo_version(*, repository, path, ref: str = "HEAD") -> tuple[RepositoryVersion, bool]:
    """Pin `ref` of the local git repository at `path` as a version; (version, created)."""
    from pathlib import Path

    from .gitimport import read_commit

    snapshot = read_commit(Path(path), ref)  # git I/O before any transaction
    version, created = RepositoryVersion.objects.get_or_create(
        repository=repository,
        commit_hash=snapshot.commit_hash,
        defaults={"ref": ref, "message": snapshot.message, "files": snapshot.files},
    )
    return version, created


def purge_idempotency_keys(*, older_than_days: int) -> int:
    """Forget keys older than the retention window (IDEMPOTENCY_KEY_DAYS); returns how many.

    Proposals are never deleted. A key still pointing at a pending proposal is kept: a client
    may still be retrying it.
    """
    cutoff = timezone.now() - timedelta(days=older_than_days)
    expired = ProposalKey.objects.filter(created_at__lt=cutoff).exclude(
        proposal__status=Proposal.Status.PENDING
    )
    deleted, _ = expired.delete()
    return deleted


# ---------------------------------------------------------------------------------------------
# Running apps in the browser (the Room page's sandboxed frame)

# What the in-browser runtime can load; a repository version runs from its src/ folder.
RUNNABLE_SUFFIXES = (".tsx", ".ts", ".jsx", ".js", ".mjs", ".json", ".css")
RUNNABLE_FOLDER = "src/"
RUNNABLE_MAX_BYTES = 5_000_000


def get_pending_proposal_for_owner(*, owner, proposal_id) -> Proposal:
    """A pending proposal, for its Room's owner only: the owner's preview of unapproved code.

    Members, strangers and even the proposer get NotFound (an unreviewed snippet never runs in
    anyone else's session); a decided proposal is a Conflict that says where it went.
    """
    pk = parse_uuid(proposal_id, field="proposal_id", what="Proposal")
    proposal = (
        Proposal.objects.select_related("room", "repository_version").filter(pk=pk).first()
        if owner.is_authenticated
        else None
    )
    if proposal is None or not proposal.room.is_owned_by(owner):
        raise NotFound(f"Proposal {str(proposal_id)!r} not found", field="proposal_id")
    if not proposal.is_pending:
        where = (
            "open it from the Room launcher" if proposal.status == "approved" else "nothing runs"
        )
        raise Conflict(
            f"This proposal was already {proposal.status}; {where}", code="already_decided"
        )
    return proposal


def runnable_files(*, proposal: Proposal) -> dict[str, str]:
    """The files the Room's browser runtime gets for `proposal`: nothing else enters the frame.

    A snippet runs as proposed. A repository version runs from its src/ folder (the runtime's
    file types only, binary files left out) and must contain the entry src/App.tsx.
    """
    if proposal.kind == Proposal.Kind.SNIPPET:
        return dict(proposal.files)
    version = proposal.repository_version
    files = {
        path: text
        for path, text in version.files.items()
        if isinstance(text, str)
        and path.startswith(RUNNABLE_FOLDER)
        and path.endswith(RUNNABLE_SUFFIXES)
    }
    if SNIPPET_ENTRY not in files:
        raise Unavailable(
            f"{version} has no {SNIPPET_ENTRY}, so the Room cannot run it in a tab: the runtime "
            f"starts from {SNIPPET_ENTRY}. Propose a version that has it.",
            code="not_runnable",
        )
    total = sum(len(text.encode("utf-8", "surrogatepass")) for text in files.values())
    if total > RUNNABLE_MAX_BYTES:
        raise Unavailable(
            f"{version} has {total} bytes of app code under {RUNNABLE_FOLDER}; the Room runs at "
            f"most {RUNNABLE_MAX_BYTES} bytes in the browser; trim src/ and propose that version.",
            code="not_runnable",
        )
    return files
