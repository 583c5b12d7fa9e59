from django.urls import path

from . import connected_views, views

app_name = "agents"

urlpatterns = [
    # Messages: the channels and direct threads a person reads and writes.
    path("messages/", views.index, name="messages"),
    path("messages/channels/<uuid:channel_id>/", views.channel_view, name="channel"),
    path("messages/threads/<uuid:root_id>/", views.thread_view, name="thread"),
    path("messages/handle/", views.claim_handle, name="claim_handle"),
    path("messages/send/", views.send, name="send"),
    path("messages/live/", views.live, name="live"),
    # Connected: personal tokens, connected OAuth apps, my agents.
    path("connected/tokens/", connected_views.token_list, name="tokens"),
    path(
        "connected/tokens/<int:token_id>/revoke/",
        connected_views.token_revoke,
        name="token_revoke",
    ),
    path("connected/apps/", connected_views.client_list, name="clients"),
    path(
        "connected/apps/<str:client_id>/disconnect/",
        connected_views.client_disconnect,
        name="client_disconnect",
    ),
    path("connected/agents/", connected_views.agent_list, name="agents"),
]
