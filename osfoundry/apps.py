from django.apps import AppConfig


class OsfoundryConfig(AppConfig):
    """The infrastructure both apps stand on: wake-ups, database threads, idempotency."""

    name = "osfoundry"

    def ready(self):
        from django.conf import settings

        from . import wakeups

        wakeups.configure(settings.REDIS_URL, settings.REDIS_PREFIX)
