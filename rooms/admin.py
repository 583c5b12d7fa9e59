import json

from django.contrib import admin
from django.template.defaultfilters import filesizeformat
from django.urls import reverse
from django.utils.html import format_html, format_html_join

from .content.highlight import file_views
from .models import (
    AppRevision,
    LauncherApp,
    Project,
    Proposal,
    ProposalKey,
    Repository,
    RepositoryVersion,
    ReviewComment,
    Room,
    RoomEvent,
)
from .runtime import verdicts

HIGHLIGHT_MEDIA = {"all": ["rooms/highlight.css", "rooms/admin.css"]}


class ReadOnlyAdmin(admin.ModelAdmin):
    """Rows written only by services (decisions, events, imports): view them, never edit."""

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False  # records: nothing written by a service is deleted by hand


@admin.register(Project)
class ProjectAdmin(admin.ModelAdmin):
    list_display = ["name", "created_at"]
    search_fields = ["name"]
    filter_horizontal = ["members"]


class RoomMemberInline(admin.TabularInline):
    model = Room.members.through
    verbose_name = "member"
    verbose_name_plural = "members"
    autocomplete_fields = ["user"]
    extra = 1


class RoomAppInline(admin.TabularInline):
    model = LauncherApp
    fields = readonly_fields = ("position", "name", "build_state", "created_at")
    extra = 0
    can_delete = False
    show_change_link = True
    ordering = ["position"]

    def has_add_permission(self, request, obj=None):
        return False  # an app exists only by approving a proposal


@admin.register(Room)
class RoomAdmin(admin.ModelAdmin):
    list_display = ["name", "project", "kind", "owner", "member_count", "created_at"]
    list_filter = ["kind", "project"]
    search_fields = ["name", "project__name", "owner__username", "members__username"]
    autocomplete_fields = ["owner"]
    readonly_fields = ["last_event_sequence"]
    exclude = ["members"]
    inlines = [RoomMemberInline, RoomAppInline]

    @admin.display(description="members")
    def member_count(self, obj):
        return obj.members.count()


class VersionVerdict:
    @admin.display(description="runs in the Room", boolean=True)
    def runs(self, obj):
        return verdicts.known(obj)  # what is stored: an admin page checks nothing


class VersionInline(VersionVerdict, admin.TabularInline):
    model = RepositoryVersion
    fields = readonly_fields = ("commit_hash", "ref", "author", "runs", "imported_at")
    extra = 0
    can_delete = False
    show_change_link = True

    def has_add_permission(self, request, obj=None):
        return False


@admin.register(Repository)
class RepositoryAdmin(admin.ModelAdmin):
    list_display = ["name", "project", "version_count", "created_by", "created_at"]
    list_filter = ["project"]
    search_fields = ["name", "project__name"]
    readonly_fields = ["created_by"]
    inlines = [VersionInline]

    @admin.display(description="versions")
    def version_count(self, obj):
        return obj.versions.count()


@admin.register(RepositoryVersion)
class RepositoryVersionAdmin(VersionVerdict, ReadOnlyAdmin):
    """Pinned: push a new commit (or `manage.py import_repo_version`) instead of editing."""

    list_display = ["repository", "commit_hash", "ref", "runs", "file_count", "imported_at"]
    list_filter = ["repository__project"]
    search_fields = ["commit_hash", "repository__name", "ref"]
    fields = [
        "repository",
        "commit_hash",
        "ref",
        "author",
        "message",
        "runs",
        "imported_at",
        "console",
        "file_list",
    ]
    readonly_fields = ["runs", "console", "file_list", "imported_at"]

    @admin.display(description="files")
    def file_count(self, obj):
        return len(obj.files)

    @admin.display(description="console")
    def console(self, obj):
        url = reverse("rooms:version", args=[obj.repository_id, obj.pk])
        return format_html('<a href="{}">Browse this version</a>', url)

    @admin.display(description="file list")
    def file_list(self, obj):
        rows = (
            (path, "binary" if text is None else filesizeformat(len(text.encode())))
            for path, text in sorted(obj.files.items())
        )
        return format_html(
            '<ul class="file-list">{}</ul>',
            format_html_join("", "<li><code>{}</code> · {}</li>", rows),
        )


@admin.register(Proposal)
class ProposalAdmin(ReadOnlyAdmin):
    """Proposal content is immutable; decisions happen on the owner's review card."""

    list_display = [
        "name",
        "room",
        "kind",
        "status",
        "proposed_by",
        "created_at",
        "decided_by",
        "card",
    ]
    list_filter = ["status", "kind", "room__project"]
    search_fields = ["name", "room__name", "proposed_by__username", "content_hash"]
    date_hierarchy = "created_at"
    list_select_related = ["room", "proposed_by", "decided_by"]
    fields = [
        "name",
        "room",
        "kind",
        "status",
        "proposed_by",
        "created_at",
        "decided_by",
        "decided_at",
        "decline_reason",
        "changes_summary",
        "content_hash",
        "file_count",
        "total_bytes",
        "repository_version",
        "card",
        "preview",
    ]
    readonly_fields = ["created_at", "preview", "card"]

    class Media:
        css = HIGHLIGHT_MEDIA

    @admin.display(description="review card")
    def card(self, obj):
        return format_html('<a href="{}">Open the card</a>', obj.get_absolute_url())

    @admin.display(description="files")
    def preview(self, obj):
        if obj.kind == Proposal.Kind.REPO:
            version = obj.repository_version
            url = reverse("rooms:version", args=[version.repository_id, version.pk])
            return format_html('<a href="{}">Review {} in the console</a>', url, version)
        parts = []
        for view in file_views(obj.files):
            if view.html is not None:
                body = format_html('<div class="admin-code">{}</div>', view.html)
            elif view.is_binary:
                body = format_html("<p>{}</p>", "binary file not shown")
            else:
                body = format_html("<p>{}</p>", "large file: open the review card to load it")
            parts.append(
                format_html(
                    '<div class="admin-file"><strong><code>{}</code></strong> · {}{}</div>',
                    view.path,
                    filesizeformat(view.size),
                    body,
                )
            )
        return format_html_join("", "{}", ((part,) for part in parts))


@admin.register(ProposalKey)
class ProposalKeyAdmin(ReadOnlyAdmin):
    list_display = ["key", "operation", "caller", "proposal", "created_at"]
    list_filter = ["operation"]
    search_fields = ["key", "caller__username"]


@admin.register(LauncherApp)
class LauncherAppAdmin(ReadOnlyAdmin):
    """Tabs change only through the console's services (each one a Room event): approve,
    roll back, move, rename, remove, restore. Deleting one would delete its history."""

    list_display = ["name", "room", "position", "revision", "build_state", "created_at"]
    list_filter = ["build_state"]
    search_fields = ["name", "room__name"]
    list_select_related = ["room"]


@admin.register(AppRevision)
class AppRevisionAdmin(ReadOnlyAdmin):
    list_display = ["app", "number", "approved_by", "rolled_back_to", "created_at"]
    search_fields = ["app__name"]
    list_select_related = ["app", "approved_by"]


@admin.register(ReviewComment)
class ReviewCommentAdmin(ReadOnlyAdmin):
    list_display = ["proposal", "path", "line_start", "line_end", "author", "created_at"]
    search_fields = ["path", "body"]
    list_select_related = ["proposal", "author"]


@admin.register(RoomEvent)
class RoomEventAdmin(ReadOnlyAdmin):
    """Append-only: the feed and long-polls replay these rows."""

    list_display = ["room", "sequence", "type", "created_at"]
    list_filter = ["type"]
    search_fields = ["room__name", "type"]
    list_select_related = ["room"]
    fields = ["room", "sequence", "type", "created_at", "payload_json"]
    readonly_fields = ["created_at", "payload_json"]

    @admin.display(description="payload")
    def payload_json(self, obj):
        return format_html("<pre>{}</pre>", json.dumps(obj.payload, indent=2, sort_keys=True))
