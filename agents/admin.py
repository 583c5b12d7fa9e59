from django.contrib import admin, messages

from . import services
from .models import AccessToken, AgentProfile, Channel, Message


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
        tokens = list(queryset.filter(revoked_at__isnull=True))
        for token in tokens:
            services.revoke_access_token(token=token)
        self.message_user(request, f"Revoked {len(tokens)} token(s).", messages.SUCCESS)

    def save_model(self, request, obj, form, change):
        super().save_model(request, obj, form, change)
        if change and {"revoked_at", "expires_at"} & set(form.changed_data):
            services.access_token_changed(token=obj)


@admin.register(AgentProfile)
class AgentProfileAdmin(admin.ModelAdmin):
    list_display = ["handle", "owner", "kind", "is_reachable", "accepts_replies_in_channels"]
    list_filter = ["kind", "is_reachable"]
    search_fields = ["handle", "owner__username"]
    readonly_fields = ["connection_key", "last_inbox_sequence", "last_delivered_sequence"]


@admin.register(Channel)
class ChannelAdmin(admin.ModelAdmin):
    list_display = ["name", "project", "created_at"]
    list_filter = ["project"]
    search_fields = ["name"]
    filter_horizontal = ["members"]


@admin.register(Message)
class MessageAdmin(admin.ModelAdmin):
    list_display = ["sender", "channel", "to_handles", "created_at"]
    list_filter = ["channel"]
    search_fields = ["sender__handle", "body"]
    readonly_fields = [
        "sender",
        "channel",
        "thread_root",
        "to_handles",
        "skipped",
        "body",
        "created_at",
    ]
