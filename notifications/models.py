from django.conf import settings
from django.db import models


class NotificationSettings(models.Model):
    """A person's choice about proposal emails, and the batching state behind them.

    The state lives here, not in a process, so several workers batch as one: a worker claims a
    batch with a conditional update on `claim_version` (notifications/services.py).
    """

    person = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="notification_settings"
    )
    is_email_enabled = models.BooleanField(default=True)
    email_sent_at = models.DateTimeField(null=True, blank=True)
    # Room id -> the last Room event sequence already considered for email.
    email_cursors = models.JSONField(default=dict, blank=True)
    claim_version = models.PositiveIntegerField(default=0)

    class Meta:
        verbose_name_plural = "notification settings"

    def __str__(self):
        return f"Notifications of {self.person}"
