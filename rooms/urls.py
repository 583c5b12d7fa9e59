from django.urls import path

from . import app_views, runtime_views, views

app_name = "rooms"

urlpatterns = [
    path("", views.inbox, name="inbox"),
    path("rooms/", views.rooms_index, name="rooms"),
    path("rooms/<uuid:room_id>/", views.room_detail, name="room"),
    path("rooms/frame/", runtime_views.app_frame, name="app_frame"),
    path(
        "rooms/<uuid:room_id>/apps/<uuid:instance_id>/files.json",
        runtime_views.app_files,
        name="app_files",
    ),
    path(
        "proposals/<uuid:proposal_id>/preview-files.json",
        runtime_views.proposal_preview_files,
        name="proposal_preview_files",
    ),
    path(
        "rooms/<uuid:room_id>/apps/<uuid:instance_id>/packages/<str:sha256>.json",
        runtime_views.app_packages,
        name="app_packages",
    ),
    path(
        "proposals/<uuid:proposal_id>/preview-packages/<str:sha256>.json",
        runtime_views.proposal_preview_packages,
        name="proposal_preview_packages",
    ),
    path("rooms/<uuid:room_id>/apps/<uuid:instance_id>/", views.room_detail, name="app"),
    path(
        "rooms/<uuid:room_id>/apps/<uuid:instance_id>/revisions/",
        app_views.revisions,
        name="revisions",
    ),
    path(
        "rooms/<uuid:room_id>/apps/<uuid:instance_id>/revisions/<int:number>/",
        app_views.revision,
        name="revision",
    ),
    path(
        "rooms/<uuid:room_id>/apps/<uuid:instance_id>/revisions/<int:number>/file/",
        app_views.revision_file,
        name="revision_file",
    ),
    path(
        "rooms/<uuid:room_id>/apps/<uuid:instance_id>/rollback/",
        app_views.rollback,
        name="rollback",
    ),
    path(
        "rooms/<uuid:room_id>/apps/<uuid:instance_id>/<str:action>/",
        app_views.tab_action,
        name="tab_action",
    ),
    path(
        "proposals/<uuid:proposal_id>/request-changes/",
        views.request_changes,
        name="request_changes",
    ),
    path("proposals/<uuid:proposal_id>/", views.proposal_card, name="proposal"),
    path("proposals/<uuid:proposal_id>/file/", views.proposal_file, name="proposal_file"),
    path(
        "proposals/<uuid:proposal_id>/approve/",
        views.decide,
        {"decision": "approve"},
        name="approve",
    ),
    path(
        "proposals/<uuid:proposal_id>/decline/",
        views.decide,
        {"decision": "decline"},
        name="decline",
    ),
    path(
        "repositories/<uuid:repository_id>/versions/<uuid:version_id>/",
        views.repository_version,
        name="version",
    ),
]
