"""The owner's console: the approval inbox, review cards, decisions, versions.

Views only read and call services; every rule (who may see or decide what, exactly once, the
content binding) lives in rooms/services.py. Domain errors map here, once, to HTTP.
"""

from collections import Counter

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_POST

from osfoundry.errors import DomainError, Invalid, NotFound
from osfoundry.schemas import whole_number

from .. import access, services
from ..content.filetree import file_tree, tree_order
from ..content.highlight import file_anchor, file_views, highlight
from ..git.readme import find_readme, render_readme
from ..models import Proposal, Room
from ..runtime import libraries, verdicts
from ..runtime.rules import ENTRY, app_files
from ..runtime.verdicts import CARD_PROBLEMS
from . import cards, revisions
from . import inbox as inbox_reads  # beside the view named inbox


def domain_error_status(error: DomainError) -> int:
    """The page's status for a domain error; "not found" is Django's own 404 page."""
    if isinstance(error, NotFound):
        raise Http404(error.message)
    return error.http_status


@require_GET
@login_required
def inbox(request):
    filters = inbox_reads.read_filters(request.user, request.GET)
    # Read the Rooms' event sequences before the pending list: an event landing in between is
    # then replayed by the feed, and the page skips duplicates.
    rooms = list(Room.objects.visible_to(request.user).select_related("project", "owner"))
    page = inbox_reads.pending_page(request.user, filters, request.GET.get("page"))
    pending = list(page.object_list)
    names = Counter(proposal.name for proposal in pending)
    return render(
        request,
        "rooms/inbox.html",
        {
            "pending": pending,
            "page": page,
            # Rows that share a name say what differs: revision, time, size, content.
            "shared_names": {name for name, count in names.items() if count > 1},
            "decided": inbox_reads.recently_decided_for(request.user, filters),
            "filters": filters,
            "rooms": rooms,
            # The owner's open inbox follows these feeds for new proposals.
            "owned_rooms": [room for room in rooms if room.owner_id == request.user.pk],
        },
        status=400 if filters.errors else 200,
    )


def card_context(request, proposal: Proposal) -> dict:
    context = {
        "proposal": proposal,
        "room": proposal.room,
        "is_owner": proposal.room.is_owned_by(request.user),
        "files_warning": services.CARD_FILES_WARNING,
        "next_pending": next_pending(request.user, proposal),
    }
    if proposal.kind == Proposal.Kind.SNIPPET:
        context |= cards.review_context(proposal)
    else:
        context |= cards.repo_review_context(proposal)
    files = context["files"] = file_views(app_files(proposal))
    context["tree"] = cards.sidebar(files)
    # What third-party code comes in with the app, and for an update what that changes.
    packages = context["packages"] = services.app_packages(proposal)
    context["registry_packages"] = bool(proposal.packages)
    context["advisories_checked"] = proposal.packages.get("advisories_checked", False)
    if proposal.is_update and proposal.app is not None:
        before = services.app_packages(proposal.app.proposal)
        context["package_changes"] = libraries.package_changes(before, packages)
    # The decision panel names the files a reader could misread.
    context["hidden_files"] = [f for f in files if f.reveal.hidden or f.reveal.refused]
    context["mixed_files"] = [f for f in files if f.reveal.words]
    if proposal.kind == Proposal.Kind.REPO:
        context["version"] = proposal.repository_version
        # What the Room will do with it, from its stored verdict; a version that cannot run is
        # refused when proposed, so problems show only on cards stored before that check or
        # under an older runtime.
        check = verdicts.of(proposal)
        context["run_check"] = check
        context["run_summary"] = verdicts.summary(check)
        context["run_problems"] = [str(problem) for problem in check.problems[:CARD_PROBLEMS]]
        context["more_problems"] = max(0, len(check.problems) - CARD_PROBLEMS)
    return context


def next_pending(user, proposal: Proposal) -> Proposal | None:
    """The owner's next card to review after this one: the oldest still waiting."""
    if not proposal.room.is_owned_by(user):
        return None
    waiting = Proposal.objects.pending().for_owner(user).exclude(pk=proposal.pk)
    return waiting.order_by("created_at").first()


def load_proposal(request, proposal_id) -> Proposal:
    try:
        return access.get_proposal_for_user(request.user, proposal_id)
    except NotFound:
        raise Http404("Proposal not found") from None


@require_GET
@login_required
def proposal_card(request, proposal_id):
    proposal = load_proposal(request, proposal_id)
    return render(request, "rooms/card.html", card_context(request, proposal))


@require_GET
@login_required
def proposal_file(request, proposal_id):
    """One file's highlighted HTML, for large files the card renders only on demand: named by
    its anchor (`?file=f-…`, which any path has, whatever characters it holds) or its path."""
    proposal = load_proposal(request, proposal_id)
    files = app_files(proposal)
    anchor = request.GET.get("file")
    path = request.GET.get("path", "")
    if anchor:
        path = next((p for p in files if file_anchor(p) == anchor), "")
    if path not in files:
        raise Http404("No such file in this proposal")
    return HttpResponse(highlight(files[path], path))


@require_POST
@login_required
def decide(request, proposal_id, decision: str):
    content_hash = request.POST.get("content_hash", "")
    base = request.POST.get("base_revision", "")
    try:
        if decision == "approve":
            app = services.approve_proposal(
                owner=request.user,
                proposal_id=proposal_id,
                content_hash=content_hash,
                base_revision=whole_number(base),
            )
            messages.success(request, f"Approved: “{app.name}” is now a tab in {app.room.name}.")
        else:
            proposal = services.decline_proposal(
                owner=request.user,
                proposal_id=proposal_id,
                content_hash=content_hash,
                reason=request.POST.get("reason", ""),
            )
            # Its colour is a decline's, never an approval's green (console.css .flash-declined).
            messages.info(
                request, f"Declined: “{proposal.name}” will not be added.", extra_tags="declined"
            )
    except DomainError as error:
        status = domain_error_status(error)
        proposal = load_proposal(request, proposal_id)
        context = card_context(request, proposal)
        context["decision_error"] = error.message
        if isinstance(error, Invalid):
            context["reason"] = request.POST.get("reason", "")
        return render(request, "rooms/card.html", context, status=status)
    return redirect("rooms:proposal", proposal_id=proposal_id)


@require_POST
@login_required
def request_changes(request, proposal_id):
    """The owner's review: the summary and the line comments the card collected (as JSON)."""
    try:
        proposal = revisions.request_changes(
            owner=request.user,
            proposal_id=proposal_id,
            content_hash=request.POST.get("content_hash", ""),
            summary=request.POST.get("summary", ""),
            comments=cards.parse_comments(request.POST.get("comments", "")),
        )
    except DomainError as error:
        context = card_context(request, load_proposal(request, proposal_id))
        context["decision_error"] = error.message
        context["summary"] = request.POST.get("summary", "")
        return render(request, "rooms/card.html", context, status=domain_error_status(error))
    count = proposal.comments.count()
    messages.info(
        request,
        f"Changes requested on “{proposal.name}” ({count} comment{'s' if count != 1 else ''}): "
        "the agent reads them and sends a revision, which appears on this card.",
        extra_tags="changes_requested",
    )
    return redirect("rooms:proposal", proposal_id=proposal_id)


@require_GET
@login_required
def repository_version(request, repository_id, version_id):
    try:
        version = access.get_repo_version_for_user(
            request.user, repository_id=repository_id, version_id=version_id
        )
    except NotFound:
        raise Http404("Version not found") from None
    paths = tree_order(version.files)
    selected = request.GET.get("path") or default_file(paths)
    if selected and selected not in version.files:
        raise Http404("No such file in this version")
    shown = file_views({selected: version.files[selected]}, render_large=True) if selected else []
    # The cards that showed this version, back to the one the owner came from (?card=…).
    cards_of = list(
        Proposal.objects.for_owner(request.user)
        .filter(repository_version=version)
        .select_related("room")
        .order_by("-created_at")
    )
    came_from = next((p for p in cards_of if str(p.pk) == request.GET.get("card", "")), None)
    return render(
        request,
        "rooms/version.html",
        {
            "version": version,
            "repository": version.repository,
            "tree": file_tree(paths),
            "selected": selected,
            "readme": readme_html(version),
            "file": shown[0] if shown else None,
            "came_from": came_from,
            "cards_of": cards_of,
        },
    )


def readme_html(version) -> dict | None:
    if (found := find_readme(version.files)) is None:
        return None
    name, text = found
    return {"name": name, "html": render_readme(text)}


def default_file(paths: list[str]) -> str | None:
    for candidate in (ENTRY, "README.md"):
        if candidate in paths:
            return candidate
    return paths[0] if paths else None
