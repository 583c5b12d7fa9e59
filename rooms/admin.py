from django.contrib import admin

from .models import (
    LauncherApp,
    Project,
    Proposal,
    ProposalKey,
    Repository,
    RepositoryVersion,
    Room,
    RoomEvent,
)


@admin.register(Project)
class ProjectAdmin(admin.ModelAdmin):
    list_display = ["name", "created_at"]
    search_fields = ["name"]
    filter_horizontal = ["members"]


@admin.register(Room)
class RoomAdmin(admin.ModelAdmin):
    list_display = ["name", "project", "kind", "owner", "created_at"]
    list_filter = ["kind", "project"]
    search_fields = ["name", "owner__username", "members__username"]
    filter_horizontal = ["members"]
    autocomplete_fields = ["owner"]
    readonly_fields = ["last_event_sequence"]


class VersionInline(admin.TabularInline):
    model = RepositoryVersion
    fields = ["commit_hash", "ref", "imported_at"]
    readonly_fields = fields
    extra = 0
    can_delete = False
    show_change_link = True

    def has_add_permission(self, request, obj=None):
        return False


@admin.register(Repository)
class RepositoryAdmin(admin.ModelAdmin):
    list_display = ["name", "project", "created_at"]
    search_fields = ["name"]
    inlines = [VersionInline]


@admin.register(RepositoryVersion)
class RepositoryVersionAdmin(admin.ModelAdmin):
    list_display = ["repository", "commit_hash", "ref", "imported_at"]
    search_fields = ["commit_hash", "repository__name"]

    def has_change_permission(self, request, obj=None):
        return False  # pinned: import a new version instead


@admin.register(Proposal)
class ProposalAdmin(admin.ModelAdmin):
    list_display = ["name", "room", "kind", "status", "proposed_by", "created_at", "decided_by"]
    list_filter = ["status", "kind"]
    search_fields = ["name", "room__name", "proposed_by__username"]
    date_hierarchy = "created_at"

    # Proposal content is immutable; decisions happen on the owner's review card.
    def has_change_permission(self, request, obj=None):
        return False

    def has_add_permission(self, request):
        return False


@admin.register(ProposalKey)
class ProposalKeyAdmin(admin.ModelAdmin):
    list_display = ["key", "operation", "caller", "proposal", "created_at"]
    search_fields = ["key"]

    def has_change_permission(self, request, obj=None):
        return False

    def has_add_permission(self, request):
        return False


@admin.register(LauncherApp)
class LauncherAppAdmin(admin.ModelAdmin):
    list_display = ["name", "room", "position", "build_state", "created_at"]
    list_filter = ["build_state"]
    search_fields = ["name", "room__name"]
    readonly_fields = ["room", "proposal", "build_updated_at", "build_updated_by"]

    def has_add_permission(self, request):
        return False  # an app exists only by approving a proposal


@admin.register(RoomEvent)
class RoomEventAdmin(admin.ModelAdmin):
    list_display = ["room", "sequence", "type", "created_at"]
    list_filter = ["type"]

    def has_change_permission(self, request, obj=None):
        return False

    def has_add_permission(self, request):
        return False
