"""The settings every call of the lean routes reads, as plain attributes.

Each `django.conf.settings.X` goes through LazyObject.__getattribute__, about 0.25 µs in
Python, and the lean routes read them on every call. Measured on 2026-12-07 without this module
(the same code reading django.conf.settings): bench/mcp_app.py, the app's own cost per call,
tools/list 14.9 -> 17.0 µs and read_room 32.4 -> 36.3 µs; bench/mcp.py through uvicorn,
tools/list 16,260 -> 15,215 req/s (means of four and two 5 s runs; the four runs with it
spread over 3.4 %).

`hot` holds copies, taken at import and again whenever a setting changes (Django's
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
