from django.contrib import admin, messages
from django.utils import timezone

from .models import AccessToken


@admin.register(AccessToken)
class AccessTokenAdmin(admin.ModelAdmin):
    list_display = [
        "prefix",
        "name",
        "user",
        "scopes",
        "is_active",
        "created_at",
        "last_used_at",
        "expires_at",
        "revoked_at",
    ]
    list_filter = ["revoked_at", "scopes"]
    list_select_related = ["user"]
    search_fields = ["name", "user__username", "prefix"]
    readonly_fields = ["prefix", "created_at", "last_used_at"]
    fields = ["user", "name", "scopes", "prefix", "expires_at", "revoked_at", "created_at"]
    autocomplete_fields = ["user"]
    actions = ["revoke"]

    def has_add_permission(self, request):
        # The secret is shown once: create tokens with `manage.py create_token`.
        return False

    @admin.display(boolean=True, description="active")
    def is_active(self, obj):
        return obj.is_active

    @admin.action(description="Revoke selected tokens")
    def revoke(self, request, queryset):
        count = queryset.filter(revoked_at__isnull=True).update(revoked_at=timezone.now())
        self.message_user(request, f"Revoked {count} token(s).", messages.SUCCESS)
