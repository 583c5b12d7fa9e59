from django.apps import AppConfig


class RoomsConfig(AppConfig):
    name = "rooms"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self):
        # The receivers of the model changes (rooms.live.changes), with the reactions of each.
        from .live import changes, membership_feed, remembered_rooms, revocation  # noqa: F401
