"""Bearer tokens: the one place that turns an Authorization header into a principal.

Personal access tokens (agents.AccessToken) are validated here; OAuth access tokens issued by the
authorization server are validated here too, so every interface (REST, MCP, websocket) shares
one path and one set of scope rules.
"""

import hashlib
from dataclasses import dataclass
from datetime import datetime

from django.utils import timezone

from osfoundry.errors import DomainError

READ = "osfoundry:read"
WRITE = "osfoundry:write"
SCOPES = (READ, WRITE)
PAT_PREFIX = "osf_"


class Unauthenticated(DomainError):
    code = "invalid_token"
    http_status = 401


class InsufficientScope(DomainError):
    code = "insufficient_scope"
    http_status = 403

    def __init__(self, scope: str):
        super().__init__(f"This token lacks the {scope} scope; create a token with it", field=None)
        self.scope = scope


@dataclass(frozen=True)
class Principal:
    user: object
    scopes: frozenset[str]
    token_key: str  # stable per token, for rate limits and logs; never the secret
    kind: str  # "pat" or "oauth"
    expires_at: datetime | None = None

    def require(self, scope: str) -> None:
        if scope not in self.scopes:
            raise InsufficientScope(scope)


def hash_token(raw: str) -> str:
    return hashlib.sha256(raw.encode()).hexdigest()


def bearer_from_header(value: str | None) -> str | None:
    if not value:
        return None
    scheme, _, token = value.strip().partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        return None
    return token.strip()


def authenticate_bearer(raw: str | None, *, resource: str | None = None) -> Principal | None:
    """The principal for a raw bearer token, or None when it is missing, unknown or revoked.

    `resource` is the URI of the interface asking (the MCP endpoint passes its own): OAuth
    access tokens are accepted only by the resource they were issued for (RFC 8707).
    """
    if not raw or len(raw) > 512:
        return None
    if raw.startswith(PAT_PREFIX):
        return authenticate_personal_token(raw)
    return authenticate_oauth_token(raw, resource=resource)


def authenticate_personal_token(raw: str) -> Principal | None:
    from agents.models import AccessToken

    token = (
        AccessToken.objects.active()
        .select_related("user")
        .filter(token_hash=hash_token(raw))
        .first()
    )
    if token is None or not token.user.is_active:
        return None
    now = timezone.now()
    # Touch at most every 10 minutes: a busy agent must not turn every call into a write, and
    # 20,000 idle agents long-polling every 50 s would otherwise write ~200 times a second.
    if token.last_used_at is None or (now - token.last_used_at).total_seconds() > 600:
        AccessToken.objects.filter(pk=token.pk).update(last_used_at=now)
    return Principal(
        user=token.user,
        scopes=token.scope_set,
        token_key=f"pat:{token.pk}",
        kind="pat",
        expires_at=token.expires_at,
    )


def authenticate_oauth_token(raw: str, *, resource: str | None) -> Principal | None:
    """An access token issued by the authorization server (allauth.idp.oidc, see
    osfoundry/oauth.py), valid, unexpired, and bound to `resource`."""
    from allauth.idp.oidc.models import Token

    if resource is None:
        return None  # only the MCP endpoint takes OAuth tokens; REST takes personal tokens
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
