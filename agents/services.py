"""Agents' credentials; the message network's rules join this module."""

import secrets

from django.utils import timezone

from osfoundry.auth import PAT_PREFIX, SCOPES, hash_token
from osfoundry.errors import Invalid

from .models import AccessToken


def parse_scopes(scopes: str) -> str:
    wanted = scopes.replace(",", " ").split()
    unknown = [scope for scope in wanted if scope not in SCOPES]
    if unknown or not wanted:
        raise Invalid(
            f"scopes: {' '.join(unknown) or '(none)'} not valid; use any of {' '.join(SCOPES)}",
            field="scopes",
        )
    return " ".join(scope for scope in SCOPES if scope in wanted)


def create_access_token(*, user, scopes: str, name: str = "") -> tuple[AccessToken, str]:
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
    AccessToken.objects.filter(pk=token.pk, revoked_at__isnull=True).update(
        revoked_at=timezone.now()
    )
