"""The Room page's app runtime: the sandboxed frame page and the files it runs.

The frame page is static: it never depends on the session, so whatever runs inside can learn
nothing from it. The files endpoints are read by the console page (session cookie, same origin),
which passes only the files into the frame.
"""

import gzip
from urllib.parse import urljoin

from django.http import HttpResponse, JsonResponse
from django.template.loader import render_to_string
from django.templatetags.static import static
from django.urls import reverse
from django.views.decorators.clickjacking import xframe_options_sameorigin
from django.views.decorators.http import require_GET

from osfoundry.errors import DomainError, Unavailable

from .. import access
from ..models import PackageBundle, Proposal
from . import libraries, rules

FRAME_SCRIPTS = (
    "vendor/sucrase/sucrase.js",
    "vendor/react/react.js",
    "rooms/frame-runtime.js",
)


def frame_policy(script_urls: list[str]) -> str:
    # Scripts: exactly the runtime's three files and the curated library files, each by its
    # path ('unsafe-eval' runs the compiled snippet).
    # No network at all, no forms, and the page is its own sandbox (opaque origin) even if
    # someone opens it outside our <iframe sandbox>.
    return "; ".join(
        [
            "default-src 'none'",
            "script-src " + " ".join(script_urls) + " 'unsafe-eval'",
            "style-src 'unsafe-inline'",
            "img-src data: blob:",
            "font-src data:",
            "media-src data: blob:",
            "connect-src 'none'",
            "form-action 'none'",
            "base-uri 'none'",
            "frame-ancestors 'self'",
            "sandbox allow-scripts",
        ]
    )


@require_GET
@xframe_options_sameorigin
def app_frame(request):
    scripts = [static(name) for name in FRAME_SCRIPTS]
    # A CSP source with a path needs a scheme and host; static() may already be absolute (CDN).
    origin = request.build_absolute_uri("/")
    allowed = scripts + [static(name) for name in libraries.script_paths()]
    # Rendered without the request: nothing about the session can reach the page. The library
    # manifest is a JSON data block, which no CSP treats as a script.
    context = {"scripts": scripts, "libraries": libraries.frame_libraries(static)}
    response = HttpResponse(render_to_string("rooms/frame.html", context))
    response["Content-Security-Policy"] = frame_policy([urljoin(origin, url) for url in allowed])
    response["Cache-Control"] = "no-cache"
    return response


def error_json(exc: DomainError) -> JsonResponse:
    return JsonResponse({"error": exc.as_dict()}, status=exc.http_status)


def login_required_json(request) -> JsonResponse | None:
    if request.user.is_authenticated:
        return None
    return JsonResponse(
        {"error": {"code": "login_required", "message": "Log in again to open this app"}},
        status=401,
    )


def runnable_files(proposal: Proposal) -> dict[str, str]:
    """The files the Room's frame gets for `proposal` (rules.app_files): nothing else enters
    it. A repository version the Room cannot start (no entry, too much app code) is refused."""
    files = rules.app_files(proposal)
    if why := rules.cannot_start(proposal, files):
        raise Unavailable(why, code="not_runnable")
    return files


def files_json(
    *, name: str, files: dict[str, str], status: str, packages_url: str | None = None
) -> JsonResponse:
    # An app with registry packages names its module table, which the page fetches and hands
    # to the frame with the files (static/rooms/app-frame.js, fetchFiles).
    packages = {"url": packages_url} if packages_url else None
    response = JsonResponse(
        {
            "name": name,
            "entry": rules.ENTRY,
            "status": status,
            "files": files,
            "packages": packages,
        }
    )
    # Reviewed content for one user's eyes: never in a shared cache.
    response["Cache-Control"] = "private, no-store"
    return response


@require_GET
def app_files(request, room_id, instance_id):
    """An approved app's files, for the Room's owner and members (strangers: 404)."""
    if denied := login_required_json(request):
        return denied
    try:
        app = access.get_app_for_user(request.user, room_id, instance_id)
        files = runnable_files(app.proposal)
    except DomainError as exc:
        return error_json(exc)
    bundle = app.proposal.package_bundle_id
    url = reverse("rooms:app_packages", args=[room_id, instance_id, bundle]) if bundle else None
    return files_json(name=app.name, files=files, status="approved", packages_url=url)


@require_GET
def proposal_preview_files(request, proposal_id):
    """A pending proposal's files, for the Room owner's preview only (everyone else: 404)."""
    if denied := login_required_json(request):
        return denied
    try:
        proposal = access.get_pending_proposal_for_owner(
            owner=request.user, proposal_id=proposal_id
        )
        files = runnable_files(proposal)
    except DomainError as exc:
        return error_json(exc)
    bundle = proposal.package_bundle_id
    url = reverse("rooms:proposal_preview_packages", args=[proposal_id, bundle]) if bundle else None
    return files_json(name=proposal.name, files=files, status="pending", packages_url=url)


def bundle_response(request, proposal: Proposal, sha256: str) -> HttpResponse:
    """The module table of `proposal`'s registry packages, if `sha256` names it: immutable, so
    the browser keeps it for as long as it likes (a new lock is a new URL)."""
    if proposal.package_bundle_id != sha256:
        return JsonResponse(
            {"error": {"code": "not_found", "message": "No such packages"}}, status=404
        )
    bundle = PackageBundle.objects.get(pk=sha256)
    data = bytes(bundle.data)
    response = HttpResponse(content_type="application/json")
    if "gzip" in request.headers.get("Accept-Encoding", ""):
        response["Content-Encoding"] = "gzip"
    else:
        data = gzip.decompress(data)
    response.content = data
    response["Cache-Control"] = "private, max-age=31536000, immutable"
    response["Vary"] = "Accept-Encoding"
    return response


@require_GET
def app_packages(request, room_id, instance_id, sha256):
    """An approved app's module table, for those who may open the app (strangers: 404)."""
    if denied := login_required_json(request):
        return denied
    try:
        app = access.get_app_for_user(request.user, room_id, instance_id)
    except DomainError as exc:
        return error_json(exc)
    return bundle_response(request, app.proposal, sha256)


@require_GET
def proposal_preview_packages(request, proposal_id, sha256):
    """A pending proposal's module table, for the Room owner's preview only."""
    if denied := login_required_json(request):
        return denied
    try:
        proposal = access.get_pending_proposal_for_owner(
            owner=request.user, proposal_id=proposal_id
        )
    except DomainError as exc:
        return error_json(exc)
    return bundle_response(request, proposal, sha256)
