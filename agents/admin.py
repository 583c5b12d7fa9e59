from django import forms
from django.contrib import admin, messages
from django.utils.html import format_html

from osfoundry.errors import DomainError

from . import services, tokens
from .models import AccessToken, AgentProfile, Channel, ClientGrant, Message


class AccessTokenForm(forms.ModelForm):
    def clean_scopes(self):
        try:
            return tokens.parse_scopes(self.cleaned_data["scopes"])
        except DomainError as error:
            raise forms.ValidationError(error.message) from None

    def clean(self):
        # The token's project must be one its person is in (the same rule as the console's).
        cleaned = super().clean() or {}
        user, project = cleaned.get("user"), cleaned.get("project")
        if user is not None and project is not None:
            try:
                tokens.check_project(user, project.pk)
            except DomainError as error:
                self.add_error("project", error.message)
        return cleaned


@admin.register(AccessToken)
class AccessTokenAdmin(admin.ModelAdmin):
    list_display = [
        "prefix",
        "name",
        "user",
        "scopes",
        "project",
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
    fields = [
        "user",
        "name",
        "scopes",
        "project",
        "prefix",
        "expires_at",
        "revoked_at",
        "created_at",
    ]
    autocomplete_fields = ["user"]
    actions = ["revoke"]
    form = AccessTokenForm

    def get_fields(self, request, obj=None):
        # A new token: who, what for, what it may do, until when. The secret is made here.
        return ["user", "name", "scopes", "project", "expires_at"] if obj is None else self.fields

    @admin.display(boolean=True, description="active")
    def is_active(self, obj):
        return obj.is_active

    @admin.action(description="Revoke selected tokens")
    def revoke(self, request, queryset):
        active = list(queryset.filter(revoked_at__isnull=True))
        for token in active:
            tokens.revoke_access_token(token=token)
        self.message_user(request, f"Revoked {len(active)} token(s).", messages.SUCCESS)

    def save_model(self, request, obj, form, change):
        if change:
            tokens.save_access_token(token=obj)
            return
        token, raw = tokens.create_access_token(
            user=obj.user, scopes=obj.scopes, name=obj.name, project_id=obj.project_id
        )
        if obj.expires_at:
            token.expires_at = obj.expires_at
            tokens.save_access_token(token=token)
        obj.pk, obj.prefix = token.pk, token.prefix
        # Shown once, here: only its hash is stored.
        self.message_user(
            request,
            f"Copy the token now; it is not shown again: {raw}",
            messages.WARNING,
        )


@admin.register(AgentProfile)
class AgentProfileAdmin(admin.ModelAdmin):
    list_display = ["handle", "owner", "kind", "is_reachable", "accepts_replies_in_channels"]
    list_filter = ["kind", "is_reachable"]
    search_fields = ["handle", "owner__username"]
    readonly_fields = ["connection_key", "last_inbox_sequence", "last_delivered_sequence"]


class ChannelForm(forms.ModelForm):
    def clean(self):
        cleaned = super().clean() or {}
        project, members = cleaned.get("project"), cleaned.get("members")
        if project is not None and members is not None:
            try:
                services.check_channel_members(project=project, profiles=members)
            except DomainError as error:
                self.add_error("members", error.message)
        return cleaned


@admin.register(Channel)
class ChannelAdmin(admin.ModelAdmin):
    list_display = ["name", "project", "created_at"]
    list_filter = ["project"]
    search_fields = ["name"]
    filter_horizontal = ["members"]
    form = ChannelForm

    def save_related(self, request, form, formsets, change):
        # Members only through the service that holds their rule.
        services.set_channel_members(channel=form.instance, profiles=form.cleaned_data["members"])
        for formset in formsets:
            self.save_formset(request, form, formset, change=change)


MESSAGE_FIELDS = (
    "sender_and_kind",
    "channel",
    "thread_root",
    "addressed",
    "recipients",
    "skipped_readable",
    "body_text",
    "created_at",
)


@admin.register(Message)
class MessageAdmin(admin.ModelAdmin):
    """Messages are immutable, and each one was a promise to its recipients: read-only here,
    with the body, the sender and who received it (and who was skipped, and why) readable."""

    list_display = ["created_at", "sender", "channel", "recipients", "excerpt"]
    list_filter = ["channel", "sender__kind"]
    list_select_related = ["sender", "channel"]
    search_fields = ["sender__handle", "body"]
    date_hierarchy = "created_at"
    readonly_fields = MESSAGE_FIELDS
    fields = MESSAGE_FIELDS

    class Media:
        css = {"all": ["agents/admin.css"]}

    def get_queryset(self, request):
        return super().get_queryset(request).prefetch_related("deliveries__recipient")

    def has_add_permission(self, request):
        return False  # only a send (MCP, REST, the console) makes a message

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False

    @admin.display(description="sender")
    def sender_and_kind(self, obj):
        return f"{obj.sender.handle} ({obj.sender.get_kind_display()})"

    @admin.display(description="to (addressed)")
    def addressed(self, obj):
        return ", ".join(obj.to_handles) or "-"

    @admin.display(description="received by")
    def recipients(self, obj):
        entries = sorted(obj.deliveries.all(), key=lambda entry: entry.pk)
        return ", ".join(f"{e.recipient.handle} (via {e.via})" for e in entries) or "nobody"

    @admin.display(description="skipped")
    def skipped_readable(self, obj):
        return "; ".join(f"{s['handle']}: {s['detail']}" for s in obj.skipped) or "-"

    @admin.display(description="body")
    def body_text(self, obj):
        return format_html('<div class="message-body">{}</div>', obj.body)

    @admin.display(description="body")
    def excerpt(self, obj):
        return obj.body if len(obj.body) <= 80 else obj.body[:79] + "…"


@admin.register(ClientGrant)
class ClientGrantAdmin(admin.ModelAdmin):
    """What the consent page recorded: disconnect from the person's Connected apps page."""

    list_display = ["client", "user", "is_confined", "project", "granted_at", "last_used_at"]
    list_select_related = ["user", "project"]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False
