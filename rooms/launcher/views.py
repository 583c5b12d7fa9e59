"""The Room pages (every Room a person is in, one Room with its launcher tabs) and the owner's
hands on a Room's tab bar and each app's history: pages read, services decide.

Every action is a POST form that works without scripts (it redirects back to the page it came
from); the Room page's script posts the same forms and lets the Room event feed redraw.
"""

from collections.abc import Callable

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import EmptyPage, Page, PageNotAnInteger, Paginator
from django.db.models import Count, Q
from django.http import Http404, HttpResponse, HttpResponseBadRequest
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from osfoundry.errors import DomainError, NotFound
from osfoundry.schemas import whole_number

from .. import access
from ..access import get_app_for_user
from ..content.diffs import diff_files
from ..content.highlight import highlight
from ..models import AppRevision, LauncherApp, Proposal, Room
from . import tabs


@require_GET
@login_required
def rooms_index(request):
    """The navigation's "Rooms": every Room the person is in, with its tabs and what waits."""
    rooms = (
        Room.objects.visible_to(request.user)
        .select_related("project", "owner")
        .annotate(
            tab_count=Count("apps", filter=Q(apps__position__isnull=False), distinct=True),
            pending_count=Count(
                "proposals", filter=Q(proposals__status=Proposal.Status.PENDING), distinct=True
            ),
        )
        .order_by("project__name", "name")
    )
    return render(request, "rooms/rooms.html", {"rooms": rooms})


# Apps per page of the Room page's Apps table: a Room with a thousand apps stays one quick page.
APPS_PAGE = 50
# What the tab bar reads of each app: a link each, never its files or its proposal.
TAB_FIELDS = ("instance_id", "name", "position", "revision", "build_state")


def page_of(items, number) -> Page:
    """One page of `items`: a page number that is not a whole number, or below 1, gives the
    first page, one past the end the last; never an error."""
    paginator = Paginator(items, APPS_PAGE)
    try:
        return paginator.page(number)
    except PageNotAnInteger:
        return paginator.page(1)
    except EmptyPage:
        return paginator.page(paginator.num_pages if int(number) > 1 else 1)


@require_GET
@login_required
def room_detail(request, room_id, instance_id=None):
    """The Room page; at /rooms/<id>/apps/<instance_id>/ with that tab open.

    The tab bar links every app; the Apps table, with each app's actions, shows one page of
    them (`?page=`; by default the page holding the open app). A page number that is not one
    gives the first page, one past the end the last (page_of). Its queries do not grow with
    the apps."""
    try:
        room = access.get_room_for_user(request.user, room_id)
    except NotFound:
        raise Http404("Room not found") from None
    # `room` (and its event sequence) is read before the apps, so the feed replays anything newer.
    shown = list(
        room.apps.filter(position__isnull=False)
        .order_by("position")
        .values_list(*TAB_FIELDS, named=True)
    )
    ids = [tab.instance_id for tab in shown]
    if instance_id is not None and instance_id not in ids:
        raise Http404("No such tab in this Room")
    number = request.GET.get("page")
    if number is None and instance_id is not None:
        number = ids.index(instance_id) // APPS_PAGE + 1
    page = page_of(ids, number)
    rows = room.apps.filter(pk__in=page.object_list).select_related("proposal")
    rows = rows.only(*TAB_FIELDS, "room_id", "build_detail", "proposal__kind").order_by("position")
    is_owner = room.is_owned_by(request.user)
    removed = None
    if is_owner:  # the owner's Removed tabs, newest first, a page at a time too (`?removed=`)
        gone = room.apps.filter(position__isnull=True).only(*TAB_FIELDS, "room_id", "removed_at")
        removed = page_of(gone.order_by("-removed_at", "pk"), request.GET.get("removed"))
    return render(
        request,
        "rooms/room.html",
        {
            "room": room,
            "apps": shown,
            "rows": list(rows),
            "page": page,
            # Where each row's actions come back to: this page of the table.
            "return_to": f"{reverse('rooms:room', args=[room.pk])}?page={page.number}",
            "removed": removed,
            "open_instance_id": instance_id,
            "is_owner": is_owner,
        },
    )


# The tab bar's actions: each one service, and what the owner is told after it.
TAB_ACTIONS: dict[str, tuple[Callable[..., LauncherApp], str]] = {
    "remove": (tabs.remove_app, "“{name}” left the launcher; restore it from Removed tabs."),
    "restore": (tabs.restore_app, "“{name}” is back in the launcher."),
    "move-left": (tabs.move_app, "Moved “{name}” left."),
    "move-right": (tabs.move_app, "Moved “{name}” right."),
    "rename": (tabs.rename_app, "Renamed the tab to “{name}”."),
}


def back(request, room_id):
    """Where an action returns to: the page it was posted from, if it is on this site."""
    target = request.POST.get("next", "")
    if target.startswith("/") and not target.startswith("//"):
        return redirect(target)
    return redirect("rooms:room", room_id=room_id)


@require_POST
@login_required
def tab_action(request, room_id, instance_id, action):
    if action not in TAB_ACTIONS:
        raise Http404("No such tab action")
    service, done = TAB_ACTIONS[action]
    arguments = {"owner": request.user, "room_id": room_id, "instance_id": instance_id}
    if action.startswith("move-"):
        arguments["direction"] = action.removeprefix("move-")
    if action == "rename":
        arguments["name"] = request.POST.get("name", "")
    try:
        app = service(**arguments)
    except NotFound:
        raise Http404("No such tab in this Room") from None
    except DomainError as error:
        messages.error(request, error.message)
        return back(request, room_id)
    messages.success(request, done.format(name=app.name))
    return back(request, room_id)


@require_POST
@login_required
def rollback(request, room_id, instance_id):
    to_revision = whole_number(request.POST.get("to_revision", ""))
    expected = whole_number(request.POST.get("expected_revision", ""))
    if to_revision is None or expected is None:
        return HttpResponseBadRequest("to_revision and expected_revision: whole numbers")
    try:
        app = tabs.rollback_app(
            owner=request.user,
            room_id=room_id,
            instance_id=instance_id,
            to_revision=to_revision,
            expected_revision=expected,
        )
    except NotFound:
        raise Http404("No such tab in this Room") from None
    except DomainError as error:
        messages.error(request, error.message)
        return redirect("rooms:revisions", room_id=room_id, instance_id=instance_id)
    messages.success(
        request,
        f"Rolled back: “{app.name}” is now v{app.revision}, the content of v{to_revision}.",
    )
    return redirect("rooms:revisions", room_id=room_id, instance_id=instance_id)


def load_app(request, room_id, instance_id):
    try:
        return get_app_for_user(request.user, room_id, instance_id)
    except NotFound:
        raise Http404("No such app in this Room") from None


def revision_diff(older: AppRevision, newer: AppRevision):
    """What changed from one revision of an app to a later one (cached per content pair)."""
    return diff_files(
        older.proposal.files,
        newer.proposal.files,
        old_hash=older.content_hash,
        new_hash=newer.content_hash,
    )


@require_GET
@login_required
def revisions(request, room_id, instance_id):
    """An app's versions, newest first: who proposed and approved each, and when."""
    app = load_app(request, room_id, instance_id)
    history = list(
        app.revisions.select_related("proposal__proposed_by", "approved_by").order_by("-number")
    )
    changed = {}
    for newer, older in zip(history, history[1:], strict=False):
        changed[newer.number] = len(revision_diff(older, newer).changed)
    rows = [(revision, changed.get(revision.number)) for revision in history]
    return render(
        request,
        "rooms/revisions.html",
        {
            "app": app,
            "room": app.room,
            "rows": rows,
            "is_owner": app.room.is_owned_by(request.user),
        },
    )


@require_GET
@login_required
def revision_file(request, room_id, instance_id, number):
    """One file of an app's version, highlighted: what a version page's unchanged files open to."""
    try:
        _app, found = tabs.app_revision(request.user, room_id, instance_id, number)
    except NotFound:
        raise Http404("No such revision") from None
    path = request.GET.get("path", "")
    files = found.proposal.files
    if path not in files:
        raise Http404("No such file in this revision")
    return HttpResponse(highlight(files[path], path))


@require_GET
@login_required
def revision(request, room_id, instance_id, number):
    """One version of an app, read-only, with its diff to the next (or the previous, if latest)."""
    try:
        app, found = tabs.app_revision(request.user, room_id, instance_id, number)
    except NotFound:
        raise Http404("No such revision") from None
    following = app.revisions.select_related("proposal").filter(number=number + 1).first()
    context: dict = {"app": app, "room": app.room, "revision": found, "next_revision": following}
    # Its diff to the next revision, or, for the latest, from the one before it.
    older: AppRevision | None = found
    newer: AppRevision = following or found
    if following is None:
        older = app.revisions.select_related("proposal").filter(number=number - 1).first()
    if older is not None:
        context["diff"] = revision_diff(older, newer)
        context["diff_title"] = f"Changes from v{older.number} to v{newer.number}"
    context["is_owner"] = app.room.is_owned_by(request.user)
    return render(request, "rooms/revision.html", context)
