from django.urls import path

from . import views

app_name = "agents"

urlpatterns = [
    path("tokens/", views.token_list, name="tokens"),
    path("tokens/<int:token_id>/revoke/", views.token_revoke, name="token_revoke"),
    path("apps/", views.client_list, name="clients"),
    path("apps/<str:client_id>/disconnect/", views.client_disconnect, name="client_disconnect"),
    path("agents/", views.agent_list, name="agents"),
]
