from django.contrib import admin

from .models import NotificationSettings


@admin.register(NotificationSettings)
class NotificationSettingsAdmin(admin.ModelAdmin):
    """A person's email choice (they change it at /settings/notifications/); the batching state
    is the mail thread's, read-only here."""

    list_display = ["person", "is_email_enabled", "email_sent_at"]
    list_select_related = ["person"]
    fields = ["person", "is_email_enabled", "email_sent_at", "email_cursors"]
    readonly_fields = ["person", "email_sent_at", "email_cursors"]

    def has_add_permission(self, request):
        return False
