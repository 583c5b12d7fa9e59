from django.urls import path

from . import views

app_name = "rooms"

urlpatterns = [
    path("", views.inbox, name="inbox"),
    path("rooms/<uuid:room_id>/", views.room_detail, name="room"),
]
