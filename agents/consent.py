"""The project an OAuth client may act in: chosen on the consent page, applied to its tokens.

osfoundry's consent view (osfoundry/oauth_views.py) knows nothing of projects; this subclass adds
the choice (every project, or one), and `authenticate_oauth_token` (a bearer-token backend in
settings.BEARER_TOKEN_BACKENDS, in place of osfoundry.oauth's, which it calls) confines the
principal to it, so rooms.access applies it like a personal token's project.
"""

import uuid
from dataclasses import replace
from typing import Any

from django.utils import timezone

from osfoundry import oauth, oauth_views
from osfoundry.auth import Principal, User
from osfoundry.errors import Invalid

from .models import ClientGrant
from .tokens import TOUCH_EVERY_S, check_project, projects_for_user

# A grant whose project was deleted reaches nothing: a project id no Room has.
NO_PROJECT = uuid.UUID(int=0)


def set_client_project(*, user: User, client_id: str, project_id) -> None:
    """Record the person's choice for the client: one of their projects, or every one (None).
    Invalid names the field when the project is not theirs."""
    project = check_project(user, project_id)
    ClientGrant.objects.update_or_create(
        client_id=client_id,
        user=user,
        defaults={"is_confined": project is not None, "project": project},
    )


def authenticate_oauth_token(raw: str, *, resource: str | None = None) -> Principal | None:
    principal = oauth.authenticate_oauth_token(raw, resource=resource)
    if principal is None:
        return None
    _kind, client_id, _user = principal.token_key.split(":", 2)
    grant = ClientGrant.objects.filter(client_id=client_id, user_id=principal.user.pk).first()
    if grant is None:  # granted before osFoundry kept grants: every project, as then
        return principal
    now = timezone.now()
    # Touched at most every TOUCH_EVERY_S, as personal tokens are (agents.tokens).
    if grant.last_used_at is None or (now - grant.last_used_at).total_seconds() > TOUCH_EVERY_S:
        ClientGrant.objects.filter(pk=grant.pk).update(last_used_at=now)
    if not grant.is_confined:
        return principal
    return replace(principal, project_id=grant.project_id or NO_PROJECT)


class AuthorizationView(oauth_views.AuthorizationView):
    """The consent page with a project menu ("All my projects" or one)."""

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        context = super().get_context_data(**kwargs)
        context["projects"] = projects_for_user(self.request.user).order_by("name")
        return context

    def form_valid(self, form):
        chosen = self.request.POST.get("project") or None
        try:
            check_project(self.request.user, chosen)
        except Invalid as error:
            form.add_error(None, error.message)
            return self.form_invalid(form)
        response = super().form_valid(form)
        # Only the person's own Connect (not allauth's skip_consent) and only a redirect that
        # carries a code: nothing else granted anything.
        granted = self.request.method == "POST" and self.request.POST.get("action") == "grant"
        if granted and response.status_code == 302 and "code=" in response.get("Location", ""):
            set_client_project(
                user=self.request.user,
                client_id=self._request_info["client_id"],
                project_id=chosen,
            )
        return response


authorization = AuthorizationView.as_view()
