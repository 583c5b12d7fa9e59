"""Personal access tokens (`osf_…`): created, revoked, and turned into a Principal.

Only a token's sha256 is stored; the secret is shown once. `authenticate_personal_token` is one
of the bearer-token backends osfoundry.auth asks (settings.BEARER_TOKEN_BACKENDS).
"""

import hashlib
import secrets

from django.utils import timezone

from osfoundry.auth import SCOPES, Principal, User
from osfoundry.errors import Invalid

from .models import AccessToken

PAT_PREFIX = "osf_"
# Touch at most this often: a busy agent must not turn every call into a write, and 20,000 idle
# agents long-polling every 50 s would otherwise write ~200 times a second.
TOUCH_EVERY_S = 600


def hash_token(raw: str) -> str:
    return hashlib.sha256(raw.encode()).hexdigest()


def parse_scopes(scopes: str) -> str:
    wanted = scopes.replace(",", " ").split()
    unknown = [scope for scope in wanted if scope not in SCOPES]
    if unknown or not wanted:
        raise Invalid(
            f"scopes: {' '.join(unknown) or '(none)'} not valid; use any of {' '.join(SCOPES)}",
            field="scopes",
        )
    return " ".join(scope for scope in SCOPES if scope in wanted)


def create_access_token(*, user: User, scopes: str, name: str = "") -> tuple[AccessToken, str]:
    """Create a token and return it with its secret, which is shown once and never stored."""
    raw = PAT_PREFIX + secrets.token_urlsafe(32)
    token = AccessToken.objects.create(
        user=user,
        name=name[:200],
        prefix=raw[:10],
        token_hash=hash_token(raw),
        scopes=parse_scopes(scopes),
    )
    return token, raw


def revoke_access_token(*, token: AccessToken) -> None:
    """Revoke the token (once: a second revocation keeps the first time). Its long-polls end at
    once, in every process (agents.revocation)."""
    if token.revoked_at is None:
        token.revoked_at = timezone.now()
        token.save(update_fields=["revoked_at"])


def save_access_token(*, token: AccessToken) -> None:
    """Save an edited token (the admin's form), its scopes normalised. A change of who it acts
    for, what it may do or until when ends its long-polls at once (agents.revocation)."""
    token.scopes = parse_scopes(token.scopes)
    token.save()


def connection_key(token: AccessToken) -> str:
    """The principal's stable key for a personal token: its agent profile hangs on it."""
    return f"pat:{token.pk}"


def authenticate_personal_token(raw: str, *, resource: str | None = None) -> Principal | None:
    """The principal for a personal token; None when it is not one, unknown, revoked, expired
    or its user is inactive. Personal tokens work on every interface (`resource` is ignored)."""
    if not raw.startswith(PAT_PREFIX):
        return None
    token = (
        AccessToken.objects.active()
        .select_related("user")
        .filter(token_hash=hash_token(raw))
        .first()
    )
    if token is None or not token.user.is_active:
        return None
    now = timezone.now()
    if token.last_used_at is None or (now - token.last_used_at).total_seconds() > TOUCH_EVERY_S:
        AccessToken.objects.filter(pk=token.pk).update(last_used_at=now)
    return Principal(
        user=token.user,
        scopes=token.scope_set,
        token_key=connection_key(token),
        kind="pat",
        expires_at=token.expires_at,
    )
