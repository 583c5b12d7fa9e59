"""allauth's OAuth views (osfoundry/oauth.py), with what the consent page must tell a person.

Served at allauth's own paths and URL names: osfoundry/urls.py routes them here first.
"""

from typing import Any

from allauth.idp.oidc import views as oidc_views

from osfoundry.oauth import redirect_destination


class AuthorizationView(oidc_views.AuthorizationView):
    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        context = super().get_context_data(**kwargs)
        # The client named itself at open registration; where the code goes is the one fact
        # on the page the client cannot make up.
        context["destination"] = redirect_destination(self._request_info["redirect_uri"])
        return context


authorization = AuthorizationView.as_view()
