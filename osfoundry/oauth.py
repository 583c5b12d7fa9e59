"""The OAuth authorization server for MCP clients, on django-allauth's identity provider.

allauth brings the endpoints, PKCE, dynamic client registration (RFC 7591) and resource
indicators (RFC 8707). This adapter adds what MCP needs on top: registered clients get the
osfoundry scopes, the only resource a token may be bound to is the MCP endpoint, the issuer is
PUBLIC_ORIGIN when set, and the discovery document lists our scopes.
"""

import re
from urllib.parse import urlsplit

from allauth.idp.oidc.adapter import DefaultOIDCAdapter
from allauth.idp.oidc.models import Token
from allauth.idp.oidc.views import AuthorizationView
from django.conf import settings
from django.core.exceptions import ValidationError
from django.utils.csp import CSP, build_policy
from django.utils.translation import gettext_lazy as _

from osfoundry.auth import READ, SCOPES, WRITE, Principal
from osfoundry.mcp.protocol import PATH as MCP_PATH

OIDC_SCOPES = ("openid", "profile", "email")


def mcp_resource(origin: str) -> str:
    return origin.rstrip("/") + MCP_PATH


class OAuthAdapter(DefaultOIDCAdapter):
    scope_display = {
        **DefaultOIDCAdapter.scope_display,
        READ: _("Read the Rooms you belong to, their apps and events"),
        WRITE: _("Propose apps to your Rooms (owners approve each one) and send messages"),
    }

    def get_issuer(self) -> str:
        return settings.PUBLIC_ORIGIN or super().get_issuer()

    def validate_client_registration(self, *, client, client_metadata, **kwargs) -> None:
        # Open registration, as MCP clients expect: each client may ask for our two scopes
        # (and the OpenID ones); a client that names no scope gets ours by default.
        requested = set(client.get_scopes())
        client.set_scopes([s for s in (*OIDC_SCOPES, *SCOPES) if s in requested | set(SCOPES)])
        client.set_default_scopes(list(SCOPES))

    def validate_resource_uris(self, *, uris: list[str], **kwargs) -> None:
        allowed = mcp_resource(self.get_issuer())
        for uri in uris:
            if uri.rstrip("/") != allowed:
                raise ValidationError(
                    f"Unknown resource {uri!r}: this server issues tokens only for {allowed}"
                )

    def populate_server_metadata(self, data: dict) -> None:
        data["scopes_supported"] = [*SCOPES, *OIDC_SCOPES]
        data["code_challenge_methods_supported"] = ["S256"]


def authenticate_oauth_token(raw: str, *, resource: str | None = None) -> Principal | None:
    """A bearer-token backend (settings.BEARER_TOKEN_BACKENDS): an access token this server
    issued, valid, unexpired, and bound to `resource`. Only the MCP endpoint passes a resource:
    the REST API takes personal tokens."""
    if resource is None:
        return None
    token = (
        Token.objects.valid()
        .by_value(raw)
        .filter(type=Token.Type.ACCESS_TOKEN)
        .select_related("user")
        .first()
    )
    if token is None or token.user is None or not token.user.is_active:
        return None
    audience = [uri.rstrip("/") for uri in token.get_resources()]
    if resource.rstrip("/") not in audience:
        return None
    scopes = frozenset(token.get_scopes()) & frozenset(SCOPES)
    # One key per grant (client and user), not per access token: a refreshed token keeps its
    # rate-limit budget and whatever the agent network tied to the connection.
    key = f"oauth:{token.client_id}:{token.user_id}"
    return Principal(
        user=token.user, scopes=scopes, token_key=key, kind="oauth", expires_at=token.expires_at
    )


class ConsentView(AuthorizationView):
    """allauth's authorization endpoint, whose consent page may send its client to its callback.

    The Connect and Cancel buttons post to us, and we answer with a redirect to the client's
    redirect_uri; Chromium applies form-action to the redirects after a form is sent, so under
    the console's `form-action 'self'` the client would never get its code. The page's policy
    adds this request's redirect_uri (validated against the client's registration, or signed
    into the form) and nothing else.
    """

    def render_to_response(self, context, **kwargs):
        response = super().render_to_response(context, **kwargs)
        source = callback_source(self._request_info.get("redirect_uri") or "")
        if source:
            config = dict(settings.SECURE_CSP)
            config["form-action"] = [*config.get("form-action", [CSP.SELF]), source]
            # The CSP middleware leaves a policy the view set alone.
            response[CSP.HEADER_ENFORCE] = build_policy(config)
        return response


authorization = ConsentView.as_view()

_SCHEME = re.compile(r"[a-z][a-z0-9+.-]*\Z")
_HOST_PORT = re.compile(r"(?:[a-z0-9-]+(?:\.[a-z0-9-]+)*|\[[0-9a-f:.]+\])(?::[0-9]{1,5})?\Z")
# Never a source: these run or embed content instead of reaching a client.
_NOT_CALLBACKS = {"javascript", "data", "blob", "filesystem"}


def callback_source(redirect_uri: str) -> str | None:
    """The CSP source for a client's callback: its origin (`http://127.0.0.1:8976`), or its
    scheme for a native app's own (`cursor:`); None when it cannot be written safely, so that
    nothing a client registered can add a directive to the policy."""
    parts = urlsplit(redirect_uri)
    scheme = parts.scheme.lower()
    if not _SCHEME.match(scheme) or scheme in _NOT_CALLBACKS:
        return None
    if scheme not in ("http", "https"):
        return f"{scheme}:"
    host_port = parts.netloc.rpartition("@")[2].lower()
    if not _HOST_PORT.match(host_port):
        return None
    return f"{scheme}://{host_port}"
