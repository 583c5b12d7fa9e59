"""A Room's launcher: its tabs and each tab's revisions.

Approving a proposal adds a tab or replaces one in place (same instance_id, position and
storage); the owner rolls a tab back to an earlier revision, removes, restores, reorders and
renames tabs. Every change runs under the Room's row lock, which orders tab positions and event
sequences, and is recorded as a Room event in the same transaction.
"""

from typing import Literal

from django.db import transaction
from django.db.models import Max
from django.utils import timezone

from osfoundry.auth import AnyUser, User
from osfoundry.errors import Conflict, Forbidden, Invalid, NotFound, refuse

from .. import events
from ..access import get_app_for_user
from ..models import APP_NAME_MAX_CHARS, AppRevision, LauncherApp, Proposal, Room
from ..runtime import verdicts
from ..runtime.snippet_rules import name_problems


def lock_app(instance_id) -> LauncherApp:
    """Call inside a transaction that already holds the Room's lock."""
    return LauncherApp.objects.select_for_update().get(pk=instance_id)


def refuse_unless_current(app: LauncherApp, revision: int | None) -> None:
    """A decision made against `revision` of `app` stands only while it is the current one."""
    if revision != app.revision:
        raise Conflict(
            f"“{app.name}” moved on to v{app.revision} since you read v{revision}; the "
            f"card now shows the changes against v{app.revision}. Review them and decide again",
            code="stale_revision",
            field="base_revision",
        )


def next_position(room: Room) -> int:
    last = room.apps.aggregate(last=Max("position"))["last"]
    return 0 if last is None else last + 1


def set_build(app: LauncherApp, proposal: Proposal, *, owner: User, at) -> None:
    """A snippet has no server build: its build state is the check it passed when proposed (its
    stored verdict)."""
    app.build_state = LauncherApp.BuildState.READY
    app.build_detail = f"Checked when proposed: {verdicts.summary(verdicts.of(proposal))}"[:500]
    app.build_updated_at = at
    app.build_updated_by = owner


def add_app(proposal: Proposal, *, owner: User, at) -> LauncherApp:
    app = LauncherApp(
        room=proposal.room,
        proposal=proposal,
        name=proposal.name,
        position=next_position(proposal.room),
    )
    set_build(app, proposal, owner=owner, at=at)
    app.save()
    Proposal.objects.filter(pk=proposal.pk).update(app=app)
    proposal.app = app
    return app


def replace_content(
    app: LauncherApp, proposal: Proposal, *, owner: User, at, keep_name: bool = False
) -> None:
    app.proposal = proposal
    if not keep_name:
        app.name = proposal.name
    app.revision += 1
    set_build(app, proposal, owner=owner, at=at)
    app.save()


def record_revision(
    app: LauncherApp, proposal: Proposal, *, owner: User, created: bool, rolled_back_to=None
) -> AppRevision:
    revision = AppRevision.objects.create(
        app=app,
        number=app.revision,
        proposal=proposal,
        name=app.name,
        content_hash=proposal.content_hash,
        approved_by=owner,
        rolled_back_to=rolled_back_to,
    )
    payload = {
        "instance_id": str(app.pk),
        "proposal_id": str(proposal.pk),
        "name": app.name,
        "position": app.position,
        "kind": proposal.kind,
        "revision": app.revision,
        "build_state": app.build_state,
        "by": owner.get_username(),
    }
    if rolled_back_to is not None:
        kind = events.APP_ROLLED_BACK
        payload["rolled_back_to"] = rolled_back_to
    else:
        kind = events.APP_CREATED if created else events.APP_UPDATED
    events.append_room_event(room=app.room, type=kind, payload=payload)
    return revision


def owned_app(owner: AnyUser, room_id, instance_id, *, doing: str) -> LauncherApp:
    """The app, locked with its Room, for the Room's owner; call inside a transaction."""
    app = get_app_for_user(owner, room_id, instance_id)
    room = Room.objects.select_for_update().get(pk=app.room_id)
    if not room.is_owned_by(owner):
        raise Forbidden(f"Only the Room owner can {doing}")
    app = lock_app(app.pk)
    app.room = room
    return app


@transaction.atomic
def rollback_app(
    *, owner: AnyUser, room_id, instance_id, to_revision: int, expected_revision: int
) -> LauncherApp:
    """A new version with the content and name of `to_revision` (a name the owner gave the tab
    since stays): no review, the owner approved exactly that content before. Refused if the app
    moved on from `expected_revision` meanwhile."""
    app = owned_app(owner, room_id, instance_id, doing="roll back an app")
    assert isinstance(owner, User)  # the owner is signed in
    refuse_unless_current(app, expected_revision)
    target = app.revisions.select_related("proposal").filter(number=to_revision).first()
    if target is None or to_revision == app.revision:
        raise Invalid(
            f"to_revision: “{app.name}” has no earlier version {to_revision}; "
            f"pick one of 1–{app.revision - 1}",
            field="to_revision",
        )
    # The version's content and name go back, but a name the owner gave the tab since the
    # current version (it differs from the name that version recorded) is theirs, and stays.
    renamed = app.revisions.filter(number=app.revision).exclude(name=app.name).exists()
    replace_content(app, target.proposal, owner=owner, at=timezone.now(), keep_name=True)
    if not renamed:
        app.name = target.name
        app.save(update_fields=["name"])
    record_revision(app, target.proposal, owner=owner, created=False, rolled_back_to=target.number)
    return app


def tab_event(app: LauncherApp, kind: str, owner: User, **extra) -> None:
    payload = {
        "instance_id": str(app.pk),
        "name": app.name,
        "position": app.position,
        "kind": app.proposal.kind,
        "revision": app.revision,
        "build_state": app.build_state,
        "by": owner.get_username(),
        **extra,
    }
    events.append_room_event(room=app.room, type=kind, payload=payload)


@transaction.atomic
def remove_app(*, owner: AnyUser, room_id, instance_id) -> LauncherApp:
    """Take the tab out of the launcher; its revisions stay and it can be restored."""
    app = owned_app(owner, room_id, instance_id, doing="remove a tab")
    assert isinstance(owner, User)
    if app.is_removed:
        raise Conflict(f"“{app.name}” is already removed from the launcher", code="removed")
    app.position = None
    app.removed_at = timezone.now()
    app.save(update_fields=["position", "removed_at"])
    tab_event(app, events.APP_REMOVED, owner)
    return app


@transaction.atomic
def restore_app(*, owner: AnyUser, room_id, instance_id) -> LauncherApp:
    """Put a removed tab back, at the end of the tab bar."""
    app = owned_app(owner, room_id, instance_id, doing="restore a tab")
    assert isinstance(owner, User)
    if not app.is_removed:
        raise Conflict(f"“{app.name}” is already in the launcher", code="not_removed")
    app.position = next_position(app.room)
    app.removed_at = None
    app.save(update_fields=["position", "removed_at"])
    tab_event(app, events.APP_RESTORED, owner)
    return app


@transaction.atomic
def move_app(
    *, owner: AnyUser, room_id, instance_id, direction: Literal["left", "right"]
) -> LauncherApp:
    """Swap the tab with its neighbour on the left or the right."""
    if direction not in ("left", "right"):
        raise Invalid(f"direction: {direction!r}; use left or right", field="direction")
    app = owned_app(owner, room_id, instance_id, doing="reorder tabs")
    assert isinstance(owner, User)
    if app.is_removed:
        raise Conflict(f"“{app.name}” is removed; restore it first", code="removed")
    shown = app.room.apps.filter(position__isnull=False).select_for_update()
    if direction == "left":
        neighbour = shown.filter(position__lt=app.position).order_by("-position").first()
    else:
        neighbour = shown.filter(position__gt=app.position).order_by("position").first()
    if neighbour is None:
        raise Conflict(f"“{app.name}” is already the {direction}most tab", code="at_edge")
    mine, theirs = app.position, neighbour.position
    # Through NULL: the unique position constraint holds after every statement.
    LauncherApp.objects.filter(pk=app.pk).update(position=None)
    LauncherApp.objects.filter(pk=neighbour.pk).update(position=mine)
    LauncherApp.objects.filter(pk=app.pk).update(position=theirs)
    app.position = theirs
    order = list(shown.order_by("position").values_list("pk", flat=True))
    tab_event(app, events.APP_MOVED, owner, order=[str(pk) for pk in order])
    return app


@transaction.atomic
def rename_app(*, owner: AnyUser, room_id, instance_id, name: str) -> LauncherApp:
    refuse(name_problems(name))
    name = name.strip()
    if not name or len(name) > APP_NAME_MAX_CHARS:
        raise Invalid(
            f"name: give the tab a short title of 1–{APP_NAME_MAX_CHARS} characters", field="name"
        )
    app = owned_app(owner, room_id, instance_id, doing="rename a tab")
    assert isinstance(owner, User)
    old = app.name
    app.name = name
    app.save(update_fields=["name"])
    tab_event(app, events.APP_RENAMED, owner, previous_name=old)
    return app


def app_revision(user: AnyUser, room_id, instance_id, number) -> tuple[LauncherApp, AppRevision]:
    """One revision of an app, for the Room's members and owner (approved content only)."""
    app = get_app_for_user(user, room_id, instance_id)
    revision = app.revisions.select_related("proposal", "approved_by").filter(number=number)
    found = revision.first()
    if found is None:
        raise NotFound(f"“{app.name}” has no revision {number}", field="revision")
    return app, found
