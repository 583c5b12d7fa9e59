from django.conf import settings
from django.db import models
from django.utils import timezone


class AccessTokenQuerySet(models.QuerySet):
    def active(self):
        now = timezone.now()
        return self.filter(revoked_at__isnull=True).filter(
            models.Q(expires_at__isnull=True) | models.Q(expires_at__gt=now)
        )


class AccessToken(models.Model):
    """A personal access token for an agent or a script. Only its sha256 is stored."""

    SCOPES = ("osfoundry:read", "osfoundry:write")

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="access_tokens"
    )
    name = models.CharField(max_length=200, blank=True)
    prefix = models.CharField(max_length=16, help_text="The first characters, to recognise it.")
    token_hash = models.CharField(max_length=64, unique=True, editable=False)
    scopes = models.CharField(max_length=200, help_text="Space-separated scopes.")
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True, editable=False)
    expires_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    objects = AccessTokenQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at"]

    def __str__(self):
        return f"{self.prefix}… ({self.user})"

    @property
    def scope_set(self) -> frozenset[str]:
        return frozenset(self.scopes.split())

    @property
    def is_active(self) -> bool:
        if self.revoked_at:
            return False
        return self.expires_at is None or self.expires_at > timezone.now()
