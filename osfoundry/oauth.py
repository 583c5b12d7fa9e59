"""The OAuth authorization server for MCP clients, on django-allauth's identity provider.

allauth brings the endpoints, PKCE, dynamic client registration (RFC 7591) and resource
indicators (RFC 8707); client ID metadata documents are osfoundry/oauth_documents.py's. This
adapter adds what MCP needs on top: clients get the osfoundry scopes, their redirect URIs must
be https or loopback http, the only resource a token may be bound to is the MCP endpoint
(either of its paths), the issuer is PUBLIC_ORIGIN when set, and the discovery document lists
our scopes and says that a client ID may be a metadata document's URL.
"""

import re
from dataclasses import dataclass
from http import HTTPStatus
from urllib.parse import urlsplit

from allauth.core.exceptions import ImmediateHttpResponse
from allauth.idp.oidc.adapter import DefaultOIDCAdapter, get_adapter
from allauth.idp.oidc.models import Client, Token
from django.conf import settings
from django.contrib.auth.base_user import AbstractBaseUser
from django.contrib.auth.models import AnonymousUser
from django.core.exceptions import ValidationError
from django.core.validators import URLValidator
from django.http import JsonResponse
from django.utils.translation import gettext_lazy as _

from osfoundry.auth import READ, SCOPES, WRITE, Principal
from osfoundry.mcp.protocol import MCP_PATHS
from osfoundry.text import one_line_problems

OIDC_SCOPES = ("openid", "profile", "email")

# RFC 8252 §7.3 and §8.3: a native app listens on a loopback port it picks at run time. The
# name "localhost" is there because Claude Code registers it; it cannot leave this computer
# unless the person's own hosts file says otherwise.
LOOPBACK_HOSTS = frozenset({"127.0.0.1", "::1", "localhost"})

HTTPS_OR_LOOPBACK = (
    "must use https, or http on a loopback host (127.0.0.1, [::1] or localhost, any port; RFC 8252)"
)


def redirect_uri_problem(uri: str) -> str | None:
    """The rule `uri` breaks as a place to send codes or a browser after logout, or None.

    Registration is open, so the redirect URI is the only thing that keeps a code from
    reaching a stranger: https anywhere (the person sees its host on the consent page), http
    only back to this computer, absolute, no fragment (RFC 6749 §3.1.2), no user name to
    disguise the host."""
    try:
        parts = urlsplit(uri)
        parts.port  # noqa: B018 -- raises ValueError for a port that is not one
    except ValueError:
        return "must be a well-formed URL"
    if not parts.scheme:
        return "must be an absolute URL with a host"
    if parts.scheme not in {"https", "http"}:
        return HTTPS_OR_LOOPBACK
    if not parts.hostname:
        return "must be an absolute URL with a host"
    if parts.username is not None or parts.password is not None:
        return "must not contain a user name or password"
    if "#" in uri:
        return "must not contain a #fragment"
    if parts.scheme == "http" and parts.hostname not in LOOPBACK_HOSTS:
        return HTTPS_OR_LOOPBACK
    try:
        URLValidator(schemes=["https", "http"])(uri)
    except ValidationError:
        return "must be a well-formed URL (a full host name, no spaces)"
    return None


def refuse_unsafe_client_name(name: str) -> None:
    """Answer the registration with an RFC 7591 error when the client's name breaks an app
    name's rules: it is shown on the consent page and on Connected apps, and a bidirectional
    control could make it read as another app's (allauth's form refuses only NUL, < and >)."""
    problems = one_line_problems(name, field="client_name", what="client name")
    if problems:
        raise ImmediateHttpResponse(
            JsonResponse(
                {"error": "invalid_client_metadata", "error_description": "; ".join(problems)},
                status=HTTPStatus.BAD_REQUEST,
            )
        )


def redirect_uris_problem(*, field: str, uris: list[str]) -> str | None:
    """The first URI of `uris` that breaks a redirect URI rule, and the rule, or None. The same
    words for a registration and for a client ID metadata document."""
    for uri in uris:
        problem = redirect_uri_problem(uri)
        if problem is not None:
            return f"{field}: {uri!r} is refused: a redirect URI {problem}"
    return None


def refuse_unsafe_redirect_uris(*, field: str, uris: list[str], error: str) -> None:
    """Answer the registration with an RFC 7591 error naming the first URI that breaks a rule.
    allauth turns a ValidationError into `invalid_client_metadata`, hence the response."""
    problem = redirect_uris_problem(field=field, uris=uris)
    if problem is not None:
        raise ImmediateHttpResponse(
            JsonResponse(
                {"error": error, "error_description": problem + "."},
                status=HTTPStatus.BAD_REQUEST,
            )
        )


@dataclass(frozen=True)
class RedirectDestination:
    """Where Connect sends the browser, as the consent page names it."""

    host: str
    is_this_computer: bool


def redirect_destination(uri: str) -> RedirectDestination:
    parts = urlsplit(uri)
    host = (parts.hostname or "").lower()
    try:
        # Punycode, so a look-alike letter from another script shows as what it is.
        host = host.encode("idna").decode("ascii")
    except UnicodeError:
        pass
    if ":" in host:
        host = f"[{host}]"
    if parts.port is not None:
        host = f"{host}:{parts.port}"
    return RedirectDestination(host=host, is_this_computer=parts.hostname in LOOPBACK_HOSTS)


def may_return_after_logout(
    *,
    user: AbstractBaseUser | AnonymousUser,
    client: Client | None,
    uri: str | None,
    id_token: dict | None,
) -> bool:
    """Whether logout may send the browser on to the client's `uri`.

    Registration is open, so a registered URI alone proves nothing: anyone may register a
    client whose logout link bounces visitors to a phishing page. Only a session the client
    itself started, proven by an ID token it holds for the person logged in here, goes back;
    and only to a URI registered for logout (allauth would accept any URL on a redirect URI's
    origin) that still passes the redirect URI rules (clients registered before them)."""
    if not (uri and client and id_token and user.is_authenticated):
        return False
    if uri not in client.get_post_logout_redirect_uris() or redirect_uri_problem(uri):
        return False
    audience = id_token.get("aud")
    if client.id not in ([audience] if isinstance(audience, str) else audience or []):
        return False
    named = get_adapter().get_user_by_sub(client, str(id_token.get("sub") or ""))
    return named is not None and named.pk == user.pk


def mcp_resources(origin: str) -> tuple[str, ...]:
    """The URIs of the MCP endpoint at `origin`: one per path, each the resource its own
    protected-resource metadata names, so a client asks for a token bound to the one it uses."""
    return tuple(origin.rstrip("/") + path for path in MCP_PATHS)


def same_resource(resource: str) -> frozenset[str]:
    """`resource` and the URIs that name the same protected resource. The MCP endpoint's two
    paths are one resource: the same tools, scopes and checks in the same server, with only
    anonymous discovery apart. A token bound to either path works on both, so a person who moves
    a client from one path to the other keeps its grant, and a token is still refused by every
    other resource (another origin, the REST API)."""
    resource = resource.rstrip("/")
    for path in MCP_PATHS:
        if resource.endswith(path):
            return frozenset(mcp_resources(resource.removesuffix(path)))
    return frozenset({resource})


def grant_our_scopes(client: Client, *, requested: list[str]) -> None:
    """Open registration, as MCP clients expect: each client may ask for our two scopes (and the
    OpenID ones it requested); a client that names no scope gets ours by default."""
    wanted = set(requested) | set(SCOPES)
    client.set_scopes([scope for scope in (*OIDC_SCOPES, *SCOPES) if scope in wanted])
    client.set_default_scopes(list(SCOPES))


class OAuthAdapter(DefaultOIDCAdapter):
    scope_display = {
        **DefaultOIDCAdapter.scope_display,
        READ: _("Read the Rooms you belong to, their apps and events"),
        WRITE: _("Propose apps to your Rooms (owners approve each one) and send messages"),
    }

    def get_issuer(self) -> str:
        return settings.PUBLIC_ORIGIN or super().get_issuer()

    def validate_client_registration(self, *, client, client_metadata, **kwargs) -> None:
        refuse_unsafe_client_name(client.name)
        # allauth's form has checked that both are lists of strings.
        refuse_unsafe_redirect_uris(
            field="redirect_uris",
            uris=client_metadata["redirect_uris"],
            error="invalid_redirect_uri",
        )
        refuse_unsafe_redirect_uris(
            field="post_logout_redirect_uris",
            uris=client_metadata.get("post_logout_redirect_uris") or [],
            error="invalid_client_metadata",
        )
        grant_our_scopes(client, requested=client.get_scopes())

    def validate_resource_uris(self, *, uris: list[str], **kwargs) -> None:
        allowed = mcp_resources(self.get_issuer())
        for uri in uris:
            if uri.rstrip("/") not in allowed:
                raise ValidationError(
                    f"Unknown resource {uri!r}: this server issues tokens only for "
                    + " and ".join(allowed)
                )

    def populate_server_metadata(self, data: dict) -> None:
        data["scopes_supported"] = [*SCOPES, *OIDC_SCOPES]
        data["code_challenge_methods_supported"] = ["S256"]
        # MCP 2026-07-28 clients use a metadata document when this says so, and register
        # (registration_endpoint, kept for the clients before it) otherwise.
        if settings.OAUTH_CLIENT_METADATA_DOCUMENTS:
            data["client_id_metadata_document_supported"] = True


def authenticate_oauth_token(raw: str, *, resource: str | None = None) -> Principal | None:
    """A bearer-token backend (settings.BEARER_TOKEN_BACKENDS): an access token this server
    issued, valid, unexpired, and bound to `resource` (or to a URI of the same resource, see
    same_resource). Only the MCP endpoint passes a resource: the REST API takes personal
    tokens."""
    if resource is None:
        return None
    token = (
        Token.objects.valid()
        .by_value(raw)
        .filter(type=Token.Type.ACCESS_TOKEN)
        .select_related("user", "client")
        .first()
    )
    if token is None or token.user is None or not token.user.is_active:
        return None
    audience = {uri.rstrip("/") for uri in token.get_resources()}
    if not audience & same_resource(resource):
        return None
    scopes = frozenset(token.get_scopes()) & frozenset(SCOPES)
    key = grant_key(token.client_id, token.user_id)
    return Principal(
        user=token.user,
        scopes=scopes,
        token_key=key,
        kind="oauth",
        expires_at=token.expires_at,
        name=f"{token.client.name or 'An unnamed app'} via OAuth" if token.client else "OAuth",
    )


def grant_key(client_id, user_id) -> str:
    """An OAuth principal's stable key. One per grant (client and user), not per access token:
    a refreshed token keeps its rate-limit budget and whatever the agent network tied to the
    connection."""
    return f"oauth:{client_id}:{user_id}"


_HOST_PORT = re.compile(r"(?:[a-z0-9-]+(?:\.[a-z0-9-]+)*|\[[0-9a-f:.]+\])(?::[0-9]{1,5})?\Z")


def callback_source(redirect_uri: str) -> str | None:
    """The CSP source for a client's callback: its origin (`http://127.0.0.1:8976`); None when
    it is not an http(s) URI (registration allows no other, see redirect_uri_problem) or cannot
    be written safely, so that nothing a client registered can add a directive to the policy."""
    parts = urlsplit(redirect_uri)
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https"):
        return None
    host_port = parts.netloc.rpartition("@")[2].lower()
    if not _HOST_PORT.match(host_port):
        return None
    return f"{scheme}://{host_port}"
