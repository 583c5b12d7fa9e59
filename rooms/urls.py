from django.urls import path

from .launcher import views as launcher_views
from .review import views as review_views
from .runtime import views as runtime_views

app_name = "rooms"

urlpatterns = [
    path("", review_views.inbox, name="inbox"),
    path("rooms/", launcher_views.rooms_index, name="rooms"),
    path("rooms/<uuid:room_id>/", launcher_views.room_detail, name="room"),
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
    path("rooms/<uuid:room_id>/apps/<uuid:instance_id>/", launcher_views.room_detail, name="app"),
    path(
        "rooms/<uuid:room_id>/apps/<uuid:instance_id>/revisions/",
        launcher_views.revisions,
        name="revisions",
    ),
    path(
        "rooms/<uuid:room_id>/apps/<uuid:instance_id>/revisions/<int:number>/",
        launcher_views.revision,
        name="revision",
    ),
    path(
        "rooms/<uuid:room_id>/apps/<uuid:instance_id>/revisions/<int:number>/file/",
        launcher_views.revision_file,
        name="revision_file",
    ),
    path(
        "rooms/<uuid:room_id>/apps/<uuid:instance_id>/rollback/",
        launcher_views.rollback,
        name="rollback",
    ),
    path(
        "rooms/<uuid:room_id>/apps/<uuid:instance_id>/<str:action>/",
        launcher_views.tab_action,
        name="tab_action",
    ),
    path(
        "proposals/<uuid:proposal_id>/request-changes/",
        review_views.request_changes,
        name="request_changes",
    ),
    path("proposals/<uuid:proposal_id>/", review_views.proposal_card, name="proposal"),
    path("proposals/<uuid:proposal_id>/file/", review_views.proposal_file, name="proposal_file"),
    path(
        "proposals/<uuid:proposal_id>/approve/",
        review_views.decide,
        {"decision": "approve"},
        name="approve",
    ),
    path(
        "proposals/<uuid:proposal_id>/decline/",
        review_views.decide,
        {"decision": "decline"},
        name="decline",
    ),
    path(
        "repositories/<uuid:repository_id>/versions/<uuid:version_id>/",
        review_views.repository_version,
        name="version",
    ),
]
