from django.apps import AppConfig


class RoomsConfig(AppConfig):
    name = "rooms"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self):
        from .live import membership_feed, remembered_rooms, revocation  # noqa: F401  (connect their receivers)
