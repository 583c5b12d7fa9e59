from django.urls import path

from . import consumers

websocket_urlpatterns = [
    path("ws/rooms/<uuid:room_id>/events/", consumers.RoomEventsConsumer.as_asgi()),
]
