from django.apps import AppConfig


class AgentsConfig(AppConfig):
    name = "agents"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self):
        from django.conf import settings

        from . import wakeups

        wakeups.configure(settings.REDIS_URL, settings.REDIS_PREFIX)
