"""Bearer tokens: the one place that turns an Authorization header into a principal.

Every interface (REST, MCP, the long-poll, the websocket feed) calls `authenticate_bearer`, so
they share one path and one set of scope rules. The token kinds are backends named in
settings.BEARER_TOKEN_BACKENDS, as Django names its authentication backends: personal access
tokens (agents.tokens) and OAuth access tokens (osfoundry.oauth).
"""

import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from functools import cache, partial

from django.conf import settings
from django.contrib.auth.models import AnonymousUser, User
from django.utils.module_loading import import_string

from osfoundry import trust
from osfoundry.errors import DomainError

# Who a page's request acts for: a person, or nobody signed in (services check).
AnyUser = User | AnonymousUser

READ = "osfoundry:read"
WRITE = "osfoundry:write"
SCOPES = (READ, WRITE)
MAX_TOKEN_CHARS = 512


class Unauthenticated(DomainError):
    code = "invalid_token"
    http_status = 401


class InsufficientScope(DomainError):
    code = "insufficient_scope"
    http_status = 403

    def __init__(self, scope: str, *, scopes: frozenset[str] = frozenset(), kind: str = "pat"):
        who = "This connection" if kind == "oauth" else "This token"
        lacks = f"lacks the {scope} scope"
        if scopes == {READ}:
            lacks = f"can only read: it {lacks}"
        # What the caller can do: an OAuth client asks again for the wider grant (MCP's step-up
        # authorization); a personal token is replaced by one that has the scope.
        fix = (
            f"connect again and allow {scope}"
            if kind == "oauth"
            else f"create a token with {scope}"
        )
        super().__init__(f"{who} {lacks}; {fix}", field=None)
        self.scope = scope


@dataclass(frozen=True)
class Principal:
    user: User
    scopes: frozenset[str]
    token_key: str  # stable per token, for rate limits and logs; never the secret
    kind: str  # "pat" or "oauth"
    expires_at: datetime | None = None
    # The one project the token may act in; None: every project its person belongs to.
    project_id: uuid.UUID | None = None
    # What the console calls the connection: the token's or the client's name.
    name: str = ""

    @property
    def can_widen_scopes(self) -> bool:
        """An OAuth client can sign in again for more scopes; a personal token is what it is."""
        return self.kind == "oauth"

    def require(self, scope: str) -> None:
        if scope not in self.scopes:
            raise InsufficientScope(scope, scopes=self.scopes, kind=self.kind)


def bearer_from_header(value: str | None) -> str | None:
    if not value:
        return None
    scheme, _, token = value.strip().partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        return None
    return token.strip()


def authenticate_bearer(raw: str | None, *, resource: str | None = None) -> Principal | None:
    """The principal for a raw bearer token, or None when it is missing, unknown or revoked,
    as the database says now.

    `resource` is the URI of the interface asking (the MCP endpoint passes its own): OAuth
    access tokens are accepted only by the resource they were issued for (RFC 8707).
    """
    if not raw or len(raw) > MAX_TOKEN_CHARS:
        return None
    for backend in token_backends():
        principal = backend(raw, resource=resource)
        if principal is not None:
            # As Django's authenticate() marks user.backend: the user instance now carries the
            # principal, so every access function that is handed `principal.user` (or a
            # service's `caller`) applies the token's project, and a proposal records which
            # token made it, without each interface passing it along.
            setattr(principal.user, PRINCIPAL_ATTRIBUTE, principal)
            return principal
    return None


def authenticate_remembered(raw: str | None, *, resource: str | None = None) -> Principal | None:
    """authenticate_bearer for a call that ends at once: what this process checked a moment
    ago and can still vouch for (osfoundry.trust) costs no database hop. A call that parks,
    or checks again whether access ended, asks authenticate_bearer."""
    if not raw or len(raw) > MAX_TOKEN_CHARS:
        return None
    return trust.check(raw, resource, partial(authenticate_bearer, raw, resource=resource))


PRINCIPAL_ATTRIBUTE = "osfoundry_principal"


def principal_of(user: AnyUser) -> Principal | None:
    """The token a user instance acts through (authenticate_bearer); None for a session."""
    return getattr(user, PRINCIPAL_ATTRIBUTE, None)


def token_project_id(user: AnyUser) -> uuid.UUID | None:
    """The project a token-authenticated user is confined to; None: not confined."""
    principal = principal_of(user)
    return principal.project_id if principal else None


TokenBackend = Callable[..., Principal | None]


@cache
def token_backends() -> list[TokenBackend]:
    return [import_string(path) for path in settings.BEARER_TOKEN_BACKENDS]


@cache
def handle_lookup() -> Callable[[str], str]:
    return import_string(settings.CONNECTION_HANDLE_LOOKUP)


def connection_handle(principal: Principal | None) -> str:
    """The agent handle a token or client acts under ("" when it has claimed none), found by
    settings.CONNECTION_HANDLE_LOOKUP (the message network keeps handles)."""
    return handle_lookup()(principal.token_key) if principal else ""
