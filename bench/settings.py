"""The product's settings plus the X-Stored-At header, for the servers bench/longpoll.py starts
(DJANGO_SETTINGS_MODULE=bench.settings in their environment only)."""

from osfoundry.settings import *  # noqa: F403

MIDDLEWARE = [*MIDDLEWARE, "bench.stored_at.StoredAtMiddleware"]  # noqa: F405
