"""The console's Connected pages: personal tokens, connected OAuth apps, and my agents.

Views read and call services (agents/tokens.py, agents/connected.py); a domain error becomes a
form error naming its field, or Django's 404 page.
"""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404
from django.shortcuts import redirect, render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from osfoundry.auth import SCOPES
from osfoundry.errors import DomainError, Invalid, NotFound
from osfoundry.schemas import whole_number

from . import connected, tokens
from .models import AccessToken

# What the expiry menu offers; any whole number of days from 1 to MAX_EXPIRY_DAYS is accepted.
EXPIRY_CHOICES = ((7, "7 days"), (30, "30 days"), (90, "90 days"), (366, "1 year"))
DEFAULT_EXPIRY_DAYS = 30


def parse_expiry(value: str) -> int | None:
    if value in ("", "never"):
        return None
    if (days := whole_number(value)) is None:
        raise Invalid(
            f"expires_in_days: {value!r} is not a number of days; choose one in the menu",
            field="expires_in_days",
        )
    return days


@never_cache
@require_http_methods(["GET", "POST"])
@login_required
def token_list(request):
    """GET: the person's tokens and the create form. POST: create one; its secret is in this
    response only (never stored, never cached)."""
    context: dict = {"form": {"expires_in_days": str(DEFAULT_EXPIRY_DAYS), "scopes": SCOPES}}
    status = 200
    if request.method == "POST":
        form = {
            "name": request.POST.get("name", ""),
            "scopes": request.POST.getlist("scopes"),
            "expires_in_days": request.POST.get("expires_in_days", ""),
            "project": request.POST.get("project", ""),
        }
        try:
            token, raw = tokens.create_access_token(
                user=request.user,
                name=form["name"],
                scopes=" ".join(form["scopes"]),
                expires_in_days=parse_expiry(form["expires_in_days"]),
                project_id=form["project"] or None,
            )
            context["created"] = {"token": token, "secret": raw}
        except DomainError as error:
            context.update(form=form, error=error)
            status = error.http_status
    context.update(
        tokens=AccessToken.objects.filter(user=request.user).select_related("project"),
        projects=tokens.projects_for_user(request.user).order_by("name"),
        scopes=SCOPES,
        expiry_choices=EXPIRY_CHOICES,
        section="tokens",
    )
    return render(request, "agents/tokens.html", context, status=status)


@require_POST
@login_required
def token_revoke(request, token_id: int):
    try:
        token = connected.revoke_token_for_user(user=request.user, token_id=token_id)
    except NotFound:
        raise Http404("Token not found") from None
    messages.success(request, f"Revoked “{token.name or token.prefix}”: it no longer works.")
    return redirect("agents:tokens")


@require_GET
@login_required
def client_list(request):
    return render(
        request,
        "agents/clients.html",
        {"clients": connected.connected_clients(user=request.user), "section": "clients"},
    )


@require_POST
@login_required
def client_disconnect(request, client_id: str):
    try:
        connected.disconnect_client(user=request.user, client_id=client_id)
    except NotFound:
        raise Http404("No such connected app") from None
    messages.success(request, "Disconnected: that app's tokens no longer work.")
    return redirect("agents:clients")


@require_GET
@login_required
def agent_list(request):
    return render(
        request,
        "agents/agents.html",
        {"agents": connected.my_agents(user=request.user), "section": "agents"},
    )
