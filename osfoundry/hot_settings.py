"""The settings every call of the lean routes reads, as plain attributes.

Each `django.conf.settings.X` goes through LazyObject.__getattribute__, about 0.25 µs in
Python; a tools/list call read about ten of them, a tenth of what the call cost in this
process. `hot` holds copies, taken at import and again whenever a setting changes (Django's
setting_changed signal: override_settings and pytest-django's `settings` fixture send it).
Settings never change in a running server otherwise.
"""

from typing import Any

from django.conf import settings
from django.core.signals import setting_changed
from django.dispatch import receiver

NAMES = (
    "ALLOWED_HOSTS",
    "BEHIND_TLS_PROXY",
    "DATA_UPLOAD_MAX_MEMORY_SIZE",
    "DEBUG",
    "PUBLIC_ORIGIN",
    "RATE_LIMIT",
    "RATE_WINDOW",
    "REDIS_URL",
)


class HotSettings:
    ALLOWED_HOSTS: tuple[str, ...]
    BEHIND_TLS_PROXY: bool
    DATA_UPLOAD_MAX_MEMORY_SIZE: int
    DEBUG: bool
    PUBLIC_ORIGIN: str
    RATE_LIMIT: int
    RATE_WINDOW: int
    REDIS_URL: str

    def refresh(self) -> None:
        for name in NAMES:
            value: Any = getattr(settings, name, None)
            setattr(self, name, tuple(value) if name == "ALLOWED_HOSTS" else value)


hot = HotSettings()
hot.refresh()


@receiver(setting_changed, dispatch_uid="osfoundry.hot_settings")
def settings_changed(setting: str, **kwargs) -> None:
    if setting in NAMES:
        hot.refresh()
