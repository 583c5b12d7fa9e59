"""The rules of Rooms, proposals and the review gate: every interface calls these functions.

Who may see what is in rooms/access.py; the snippet rules themselves (paths, sizes) are in
rooms/runtime/snippet_rules.py, and whether an app runs in rooms/runtime/verdicts.py.
"""

from dataclasses import dataclass, replace
from datetime import datetime

from django.db import transaction
from django.utils import timezone

from osfoundry.auth import AnyUser, User, connection_handle, principal_of
from osfoundry.errors import Conflict, Forbidden, Invalid, NotFound, refuse
from osfoundry.idempotency import IdempotentRequest, canonical_hash, key_problems
from osfoundry.text import text_problems

from . import access, events
from .access import get_room_for_user, parse_uuid
from .git import repositories
from .launcher import tabs
from .models import LauncherApp, Proposal, ProposalKey, Room
from .registry import lock as registry
from .registry.dependencies import read_dependencies
from .runtime import libraries, rules, verdicts
from .runtime.libraries import Package
from .runtime.rules import text_bytes
from .runtime.snippet_rules import name_problems, snippet_problems

# A card with more files than this still works, but warns that the app belongs in a repository.
CARD_FILES_WARNING = 20


# ---------------------------------------------------------------------------------------------
# What an app brings


def app_packages(proposal: Proposal) -> list[Package]:
    """The third-party packages the app of `proposal` brings: the curated libraries that the
    files it runs import (Tailwind's runtime for a CSS file that asks for it), as the Room's
    frame loads them (from its stored verdict), and every package its package.json resolved
    to from the registry (the lock). The card, read_room_app_status and read_room_proposal all
    list these."""
    curated = libraries.packages_of(verdicts.of(proposal).libraries)
    fetched = registry.packages_of(proposal.packages) if proposal.packages else []
    return sorted(curated + fetched, key=lambda package: (package.name, package.origin))


def app_status(app: LauncherApp) -> dict:
    """An app's safe launcher entry and build state, with the packages it brings."""
    return {**app.as_dict(), "packages": [p.as_dict() for p in app_packages(app.proposal)]}


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
    warnings: tuple[str, ...] = ()  # what the proposer should know that did not stop it

    @property
    def is_new(self) -> bool:
        return not (self.replay or self.duplicate_of_pending)

    def as_dict(self) -> dict:
        """The proposal's status and how this call related to it. Each interface adds its own
        next step (how to wait for the owner) in its own terms."""
        data = self.proposal.as_dict()
        data["replay"] = self.replay
        data["duplicate_of_pending"] = self.duplicate_of_pending
        data["warnings"] = list(self.warnings)
        if self.replay:
            data["note"] = "Replay: this idempotency_key was already used with these arguments."
        elif self.duplicate_of_pending:
            data["note"] = "Identical content from you is already pending in this Room: same card."
        return data


def propose_snippet(
    *, caller: User, room_id: str, name: str, files: dict[str, str], idempotency_key: str
) -> ProposalResult:
    room = get_room_for_user(caller, room_id, agent=True)
    return propose_files(
        caller,
        room=room,
        operation="propose_snippet",
        idempotency_key=idempotency_key,
        arguments={"op": "snippet", "room_id": str(room.pk)},
        name=name,
        files=files,
    )


@dataclass(frozen=True)
class Target:
    """What a snippet proposal continues: an approved app (an update) or an earlier revision."""

    fields: dict  # the Proposal fields that say so (app, base_revision, previous, iteration)
    content: dict  # what the content hash binds besides kind, name and files
    # The content it would replace: proposing exactly that again is refused.
    same_as: tuple[str, dict[str, str]] | None = None
    same_message: str = ""


def propose_files(
    caller: User,
    *,
    room: Room,
    operation: str,
    idempotency_key: str,
    arguments: dict,
    name: str,
    files: dict[str, str],
    target: Target | None = None,
) -> ProposalResult:
    """A snippet proposal: a new app, an update of one, or a revision; the same rules for all."""
    # Every problem at once, before the key is looked up: a NUL cannot even reach PostgreSQL.
    dependencies = read_dependencies(files)
    problems = [
        *key_problems(idempotency_key),
        *name_problems(name),
        *snippet_problems(files),
        *dependencies.problems,
    ]
    if problems:
        refuse([*problems, *verdicts.run_problems_beside(problems, files)])
    request = proposal_request(
        caller, operation, idempotency_key, {**arguments, "name": name, "files": files}
    )
    if (previous := request.previous()) is not None:
        return with_warnings(ProposalResult(previous, replay=True))
    name = check_name(name)
    if target and target.same_as == (name, files):
        raise Invalid(target.same_message, code="unchanged", field="files")
    # With package.json dependencies from the registry: resolved first (I/O, outside any
    # transaction), then the app is checked against them, and the lock is part of the content.
    resolved = registry.resolve_packages(dependencies.registry) if dependencies.registry else None
    packages = None
    if resolved is not None:
        check = verdicts.check_files(files, resolved.layout)
        verdicts.refuse_unless_runnable(check)
        packages = registry.package_app(resolved, check.packages)
    content = {
        "kind": "snippet",
        "name": name,
        "files": files,
        **(target.content if target else {}),
        **({"packages": registry.content_digest(packages.lock)} if packages else {}),
    }
    content_hash = canonical_hash(content)
    # Text the rules accept, compiled as the Room will run it, after the replay: a retry of a
    # proposal that was accepted is answered without compiling it again, and so is identical
    # content already pending from the caller (the same card: its verdict is stored with it).
    if packages is None:
        twin = Proposal.objects.pending_twin(room=room, caller=caller, content_hash=content_hash)
        check = verdicts.of(twin) if twin else verdicts.check_files(files)
        verdicts.refuse_unless_runnable(check)
    fields = {
        "kind": Proposal.Kind.SNIPPET,
        "name": name,
        "files": files,
        "content_hash": content_hash,
        "file_count": len(files),
        "total_bytes": sum(text_bytes(text) for text in files.values()),
        **verdicts.stored_fields(check),
        "packages": packages.lock if packages else {},
        **(target.fields if target else {}),
    }
    return with_warnings(store_proposal(request, room=room, fields=fields, packages=packages))


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
    refuse(key_problems(idempotency_key) + name_problems(name))
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
        return with_warnings(ProposalResult(previous, replay=True))
    name = check_name(name)
    version = access.get_version_in_project(room.project, repository_id, version_id)
    manifest = version.files.get("package.json")
    dependencies = read_dependencies(
        {"package.json": manifest} if isinstance(manifest, str) else {}
    )
    refuse(dependencies.problems)
    packages = None
    verdict: dict = {}
    if dependencies.registry:
        # Resolved now (I/O, outside any transaction), and the version checked against them:
        # that verdict is this proposal's, stored with it (the version's own knows no lock).
        resolved = registry.resolve_packages(dependencies.registry)
        check = verdicts.of_version_with(version, resolved.layout)
        verdicts.refuse_unless_runnable(check)
        packages = registry.package_app(resolved, check.packages)
        verdict = verdicts.stored_fields(check)
    else:
        verdicts.refuse_unless_runnable(verdicts.of(version))
    # A version of a repository the Room runs an app from updates that app; one answering the
    # owner's requested changes continues that card as its next revision.
    extra, bound = repositories.repo_update_target(room, version) or ({}, {})
    if (sent_back := repositories.open_repo_line(caller, room, version)) is not None:
        extra = extra | {"previous": sent_back, "iteration": sent_back.iteration + 1}
        bound = bound | {"revision_of": str(sent_back.pk), "iteration": sent_back.iteration + 1}
    content: dict = {"kind": "repo", "name": name, "version_id": str(version.pk)}
    if packages:
        content["packages"] = registry.content_digest(packages.lock)
    result = store_proposal(
        request,
        room=room,
        fields={
            "kind": Proposal.Kind.REPO,
            "name": name,
            "repository_version": version,
            "content_hash": canonical_hash(content | bound),
            "file_count": len(version.files),
            "total_bytes": sum(text_bytes(text or "") for text in version.files.values()),
            "packages": packages.lock if packages else {},
            **verdict,
            **extra,
        },
        packages=packages,
    )
    return with_warnings(result)


def with_warnings(result: ProposalResult) -> ProposalResult:
    """`result` with what its proposer should know that did not stop the proposal: its size,
    and what its stored verdict says (never compiled again here)."""
    proposal = result.proposal
    warnings = list(read_dependencies(rules.manifest_of(proposal)).warnings)
    if proposal.kind == Proposal.Kind.SNIPPET and proposal.file_count > CARD_FILES_WARNING:
        warnings.append(
            f"{proposal.file_count} files: the owner's card warns that an app this size belongs "
            "in a repository. Push it to a repository of the Room's project "
            "(list_room_repositories gives its clone URL) and propose the pinned version: "
            "propose_room_repo_app, or "
            f"POST /api/v1/rooms/{proposal.room_id}/proposals/repo."
        )
    warnings += verdicts.warnings(verdicts.of(proposal))
    return replace(result, warnings=tuple(warnings))


def proposal_request(
    caller: User, operation: str, key: str, arguments: dict
) -> IdempotentRequest[Proposal]:
    return IdempotentRequest(
        ProposalKey, {"caller": caller}, operation, key, canonical_hash(arguments)
    )


def store_proposal(
    request: IdempotentRequest[Proposal],
    *,
    room: Room,
    fields: dict,
    packages: registry.AppPackages | None = None,
) -> ProposalResult:
    return request.store(
        lambda: insert_proposal(request, room=room, fields=fields, packages=packages),
        lambda previous: ProposalResult(previous, replay=True),
    )


@transaction.atomic
def insert_proposal(
    request: IdempotentRequest[Proposal],
    *,
    room: Room,
    fields: dict,
    packages: registry.AppPackages | None = None,
) -> ProposalResult:
    caller = request.scope["caller"]
    room = Room.objects.select_for_update().get(pk=room.pk)
    pending = Proposal.objects.pending_twin(
        room=room, caller=caller, content_hash=fields["content_hash"]
    )
    if pending:
        request.record(pending)
        return ProposalResult(pending, duplicate_of_pending=True)
    if fields.get("previous") is not None:
        fields["previous"] = supersede(fields["previous"])
    principal = principal_of(caller)  # which token or client sent it, for the card's byline
    via = principal.token_key if principal else ""
    if packages is not None:  # with the proposal or not at all (content-addressed rows)
        fields["package_bundle"] = packages.store()
    proposal = Proposal.objects.create(room=room, proposed_by=caller, proposed_via=via, **fields)
    request.record(proposal)
    events.append_room_event(
        room=room,
        type=events.PROPOSAL_CREATED,
        payload={
            "proposal_id": str(proposal.pk),
            "name": proposal.name,
            "kind": proposal.kind,
            "proposed_by": caller.get_username(),
            "proposed_via": principal.name if principal else "",
            "agent": connection_handle(principal),
            "file_count": proposal.file_count,
            "total_bytes": proposal.total_bytes,
            # What tells two proposals of one name apart in the owner's inbox.
            "content_hash": proposal.content_hash,
            "created_at": proposal.created_at.isoformat(),
            "revision": proposal.iteration,
            "instance_id": str(proposal.app_id) if proposal.app_id else None,
            "base_revision": proposal.base_revision,
            "previous_proposal_id": str(proposal.previous_id) if proposal.previous_id else None,
        },
    )
    return ProposalResult(proposal)


def supersede(previous: Proposal) -> Proposal:
    """Lock the revision a new one continues; a pending one leaves the inbox (superseded).
    Declined and changes-requested revisions keep their decision on record."""
    previous = Proposal.objects.select_for_update().get(pk=previous.pk)
    if Proposal.objects.filter(previous=previous).exists():
        latest = previous
        while (following := Proposal.objects.filter(previous=latest).first()) is not None:
            latest = following
        raise Conflict(
            f"Proposal {str(previous.pk)!r} was already revised; revise its latest revision, "
            f"{str(latest.pk)!r}",
            code="already_revised",
            field="proposal_id",
        )
    if previous.status == Proposal.Status.APPROVED:
        raise Conflict(
            "This proposal was approved; propose an update of its app instead "
            "(propose_room_app_update)",
            code="already_decided",
            field="proposal_id",
        )
    if previous.is_pending:
        previous.status = Proposal.Status.SUPERSEDED
        previous.save(update_fields=["status"])
    return previous


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
    if proposal.status == Proposal.Status.SUPERSEDED:
        raise Conflict(
            "A later revision took this proposal's place; review and decide on the latest one",
            code="superseded",
        )
    if not proposal.is_pending:
        # Every decision names its person (decided_by is PROTECTed): str(user) is the username.
        raise Conflict(
            f"This proposal was already {proposal.status} by {proposal.decided_by} at "
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


def mark_decided(proposal: Proposal, status: str, *, by: User, **fields) -> datetime:
    """Store the decision on a pending proposal its caller locked (`by`: the owner, or the
    proposer withdrawing it; `fields`: what the decision says besides its person and time) and
    return its time. Refused if it was decided meanwhile: a decision happens once."""
    now = timezone.now()
    changed = Proposal.objects.filter(pk=proposal.pk, status=Proposal.Status.PENDING).update(
        status=status, decided_by=by, decided_at=now, **fields
    )
    if changed != 1:
        raise Conflict("This proposal was decided meanwhile; reload", code="already_decided")
    return now


def announce_decision(proposal: Proposal, event: str, *, by: User, at: datetime, **extra) -> None:
    """The Room event of an owner's decision: who decided, when, and what else it says."""
    events.append_room_event(
        room=proposal.room,
        type=event,
        payload={
            "proposal_id": str(proposal.pk),
            "decided_by": by.get_username(),
            "decided_at": at.isoformat(),
            **extra,
        },
    )


@transaction.atomic
def approve_proposal(
    *,
    owner: AnyUser,
    proposal_id,
    content_hash: str | None = None,
    base_revision: int | None = None,
) -> LauncherApp:
    """Approve a pending proposal: a new tab, or an update that replaces its app in place.

    An update's approval binds to the revision its diff was read against (`base_revision`, by
    default the one it was proposed against): if the app moved on meanwhile, it is refused.
    """
    proposal = lock_pending_for_owner(
        owner=owner, proposal_id=proposal_id, content_hash=content_hash
    )
    assert isinstance(owner, User)  # lock_pending_for_owner let only the Room's owner through
    app = None
    if proposal.is_update:
        app = tabs.lock_app(proposal.app_id)
        tabs.refuse_unless_current(app, base_revision or proposal.base_revision)
    now = mark_decided(proposal, Proposal.Status.APPROVED, by=owner)
    if app is None:
        app = tabs.add_app(proposal, owner=owner, at=now)
    else:
        tabs.replace_content(app, proposal, owner=owner, at=now)
    announce_decision(proposal, events.PROPOSAL_APPROVED, by=owner, at=now, instance_id=str(app.pk))
    tabs.record_revision(app, proposal, owner=owner, created=not proposal.is_update)
    return app


@transaction.atomic
def decline_proposal(
    *, owner, proposal_id, content_hash: str | None = None, reason: str = ""
) -> Proposal:
    reason = reason.strip()
    if len(reason) > 1000:
        raise Invalid("reason: at most 1000 characters", field="reason")
    # The agent reads the reason as the owner wrote it (and PostgreSQL text holds no NUL).
    refuse(text_problems(reason, field="reason", what="reason"))
    proposal = lock_pending_for_owner(
        owner=owner, proposal_id=proposal_id, content_hash=content_hash
    )
    assert isinstance(owner, User)  # lock_pending_for_owner let only the Room's owner through
    now = mark_decided(proposal, Proposal.Status.DECLINED, by=owner, decline_reason=reason)
    announce_decision(proposal, events.PROPOSAL_DECLINED, by=owner, at=now, reason=reason)
    proposal.refresh_from_db()
    return proposal
