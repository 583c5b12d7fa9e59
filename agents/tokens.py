"""Personal access tokens (`osf_…`): created, revoked, and turned into a Principal.

Only a token's sha256 is stored; the secret is shown once. `authenticate_personal_token` is one
of the bearer-token backends osfoundry.auth asks (settings.BEARER_TOKEN_BACKENDS).
"""

import hashlib
import secrets
import uuid
from datetime import datetime, timedelta

from django.db.models import Q, QuerySet
from django.utils import timezone

from osfoundry.auth import SCOPES, Principal, User
from osfoundry.errors import Invalid, refuse
from rooms.models import Project
from rooms.runtime.snippet_rules import name_problems

from .models import AccessToken

PAT_PREFIX = "osf_"
NAME_MAX_CHARS = 200
MAX_EXPIRY_DAYS = 366
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


def projects_for_user(user: User) -> QuerySet[Project]:
    """The projects a token of `user` may be confined to: those it belongs to or owns a Room in."""
    return Project.objects.filter(Q(members=user) | Q(rooms__owner=user)).distinct()


def check_project(user: User, project_id) -> Project | None:
    if project_id in (None, ""):
        return None
    try:
        project = projects_for_user(user).filter(pk=uuid.UUID(str(project_id))).first()
    except ValueError:
        project = None
    if project is None:
        raise Invalid(
            f"project: {str(project_id)!r} is not a project of yours; choose one you belong to",
            field="project",
        )
    return project


def check_expiry(expires_in_days: int | None) -> datetime | None:
    if expires_in_days is None:
        return None
    if not 1 <= expires_in_days <= MAX_EXPIRY_DAYS:
        raise Invalid(
            f"expires_in_days: {expires_in_days} is out of range; use 1 to {MAX_EXPIRY_DAYS}"
            " days, or no expiry",
            field="expires_in_days",
        )
    return timezone.now() + timedelta(days=expires_in_days)


def create_access_token(
    *,
    user: User,
    scopes: str,
    name: str = "",
    expires_in_days: int | None = None,
    project_id=None,
) -> tuple[AccessToken, str]:
    """Create a token and return it with its secret, which is shown once and never stored.
    With `project_id` it acts only in that project (rooms.access applies it)."""
    # An app's name rules: the name is shown on the Connected pages and in every byline of
    # what the token does (and PostgreSQL text holds no NUL).
    refuse(name_problems(name))
    if len(name) > NAME_MAX_CHARS:
        raise Invalid(f"name: at most {NAME_MAX_CHARS} characters", field="name")
    scopes = parse_scopes(scopes)
    expires_at = check_expiry(expires_in_days)
    project = check_project(user, project_id)
    raw = PAT_PREFIX + secrets.token_urlsafe(32)
    token = AccessToken.objects.create(
        user=user,
        name=name.strip(),
        prefix=raw[:10],
        token_hash=hash_token(raw),
        scopes=scopes,
        expires_at=expires_at,
        project=project,
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


def connection_projects(keys) -> dict[str, uuid.UUID]:
    """The project each project-scoped connection is confined to (unscoped ones are absent)."""
    ids = [key.removeprefix("pat:") for key in keys if key and key.startswith("pat:")]
    rows = AccessToken.objects.filter(
        pk__in=[i for i in ids if i.isdigit()], project__isnull=False
    ).values_list("pk", "project_id")
    return {f"pat:{pk}": project_id for pk, project_id in rows}


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
        project_id=token.project_id,
        name=token.name or f"token {token.prefix}…",
    )
