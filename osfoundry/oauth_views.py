"""allauth's OAuth views (osfoundry/oauth.py), with what the consent page must tell a person, and
the client ID metadata documents (osfoundry/oauth_documents.py) read before allauth looks a
client up.

Served at allauth's own paths and URL names: osfoundry/urls.py routes them here first.
"""

from http import HTTPStatus
from typing import Any

from allauth.core import context as allauth_context
from allauth.core.internal import ratelimit
from allauth.idp.oidc import views as oidc_views
from allauth.idp.oidc.forms import RPInitiatedLogoutForm
from allauth.idp.oidc.internal.oauthlib.server import get_server
from allauth.idp.oidc.internal.oauthlib.utils import extract_params, respond_html_error
from django.conf import settings
from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse
from django.utils.csp import CSP, build_policy
from oauthlib.oauth2.rfc6749 import errors

from osfoundry.oauth import callback_source, may_return_after_logout, redirect_destination
from osfoundry.oauth_documents import (
    DocumentRefused,
    admit_loopback_redirect,
    client_id_problem,
    current_client,
    document_host,
    fetch_client,
    names_a_document,
)


def redirect_to_client(uri: str) -> HttpResponse:
    # Not HttpResponseRedirect: it raises on schemes other than http(s) and ftp, and a client
    # registered before the redirect URI rules may still have one.
    response = HttpResponse(status=HTTPStatus.FOUND)
    response["Location"] = uri
    return response


def refusal_page(request: HttpRequest, message: str, *, status: int) -> HttpResponse:
    response = respond_html_error(request, error=ValidationError(message))
    response.status_code = status
    return response


def refuse_unusable_document(request: HttpRequest) -> HttpResponse | None:
    """A client ID that is a URL names a client ID metadata document: fetched (or found fresh)
    before allauth looks the client up, so allauth finds it stored. The answer when it cannot be
    used, before any login: a page, never a redirect, since the document is what would vouch for
    the redirect URI. Anyone may open this URL, so fetches are rate limited by address."""
    client_id = request.GET.get("client_id", "")
    if not names_a_document(client_id):
        return None
    try:
        client = current_client(client_id)
        if client is None:
            problem = client_id_problem(client_id)
            if problem is not None:
                raise DocumentRefused(client_id, problem)
            if not ratelimit.consume(
                request, app="allauth.idp.oidc", action="cimd_fetch", limit_get=True
            ):
                return refusal_page(
                    request,
                    "Too many client ID metadata documents were fetched for your address; wait a "
                    "minute and try again.",
                    status=HTTPStatus.TOO_MANY_REQUESTS,
                )
            client = fetch_client(client_id=client_id)
    except DocumentRefused as refused:
        return refusal_page(request, str(refused), status=HTTPStatus.BAD_REQUEST)
    admit_loopback_redirect(client=client, redirect_uri=request.GET.get("redirect_uri", ""))
    return None


class AuthorizationView(oidc_views.AuthorizationView):
    def get(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        refusal = refuse_unusable_document(request)
        if refusal is not None:
            return refusal
        prompts = request.GET.get("prompt", "").split()
        if "none" in prompts and "openid" not in request.GET.get("scope", "").split():
            return self.answer_without_a_page(request)
        return super().get(request, *args, **kwargs)

    def answer_without_a_page(self, request: HttpRequest) -> HttpResponse:
        """prompt=none on a plain OAuth request. oauthlib reads prompt only when the scope has
        openid, so allauth goes on to the consent page, which prompt=none forbids (and which
        fails with a 500 for a visitor who is not logged in). We never grant here: osfoundry
        keeps no record of consent apart from live tokens, and MCP clients do not ask for
        silent grants. A client that wants one asks with openid, where allauth checks them."""
        try:
            _scopes, info = get_server().validate_authorization_request(*extract_params(request))
        except (errors.FatalClientError, ValidationError) as error:
            # Unknown client or redirect URI: say so here, never redirect to it.
            return respond_html_error(request, error=error)
        except errors.OAuth2Error as error:
            return redirect_to_client(error.in_uri(error.redirect_uri))
        answer_class = (
            errors.ConsentRequired if request.user.is_authenticated else errors.LoginRequired
        )
        answer = answer_class(request=info["request"])
        return redirect_to_client(answer.in_uri(answer.redirect_uri))

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        context = super().get_context_data(**kwargs)
        # The client named itself at open registration; where the code goes is the one fact
        # on the page the client cannot make up.
        context["destination"] = redirect_destination(self._request_info["redirect_uri"])
        # A metadata document's host published the name and the redirect URIs (the draft asks
        # that the page show it).
        context["document_host"] = document_host(context["client"])
        return context

    def render_to_response(self, context, **kwargs):
        """The consent page, whose form may send its client to its callback.

        Connect and Cancel post to us, and we answer with a redirect to the client's
        redirect_uri; Chromium applies form-action to the redirects after a form is sent, so
        under the console's `form-action 'self'` the client would never get its code. This
        page's policy adds this request's redirect_uri (validated against the client's
        registration) and nothing else."""
        response = super().render_to_response(context, **kwargs)
        source = callback_source(self._request_info.get("redirect_uri") or "")
        if source:
            config = dict(settings.SECURE_CSP)
            config["form-action"] = [*config.get("form-action", [CSP.SELF]), source]
            # The CSP middleware leaves a policy the view set alone.
            response[CSP.HEADER_ENFORCE] = build_policy(config)
        return response


authorization = AuthorizationView.as_view()


class LogoutForm(RPInitiatedLogoutForm):
    def clean(self) -> dict[str, Any] | None:
        cleaned = super().clean()
        if cleaned is None:
            return cleaned
        # allauth's LogoutView builds this form from the query string alone, so the person
        # comes from allauth's request context (its AccountMiddleware sets it).
        if not may_return_after_logout(
            user=allauth_context.request.user,
            client=cleaned.get("client"),
            uri=cleaned.get("post_logout_redirect_uri"),
            id_token=cleaned.get("id_token_hint"),
        ):
            # Without a URI allauth ends on LOGOUT_REDIRECT_URL, our login page.
            cleaned["post_logout_redirect_uri"] = None
        return cleaned


class LogoutView(oidc_views.LogoutView):
    form_class = LogoutForm


logout = LogoutView.as_view()
