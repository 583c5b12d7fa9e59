from django.urls import path

from . import views

app_name = "agents"

urlpatterns = [
    path("", views.index, name="messages"),
    path("channels/<uuid:channel_id>/", views.channel_view, name="channel"),
    path("threads/<uuid:root_id>/", views.thread_view, name="thread"),
    path("handle/", views.claim_handle, name="claim_handle"),
    path("send/", views.send, name="send"),
    path("live/", views.live, name="live"),
]
