from django.urls import path

from . import consumers

websocket_urlpatterns = [
    path("ws/rooms/<uuid:room_id>/events/", consumers.RoomEventsConsumer.as_asgi()),
    # The console's one socket per tab: every Room the signed-in person sees.
    path("ws/events/", consumers.PersonEventsConsumer.as_asgi()),
]
