from django.apps import AppConfig


class OsfoundryConfig(AppConfig):
    """The infrastructure both apps stand on: wake-ups, database threads, idempotency."""

    name = "osfoundry"

    def ready(self):
        from django.conf import settings

        from . import checks, wakeups  # noqa: F401  (checks: registers the system checks)

        wakeups.configure(settings.REDIS_URL, settings.REDIS_PREFIX)
