"""The cache backend with REDIS_URL: Django's RedisCache, where Redis being down is a miss.

What we cache can always be computed again (highlighted code, a repository version's run
check, allauth's login counters): while Redis is stopped or restarting, a read finds nothing
and a write is dropped, so the owner's console keeps working instead of answering 500.
allauth's login rate limit is then not enforced until Redis is back (docs/operators.md).
"""

import logging

from django.core.cache.backends.redis import RedisCache, RedisCacheClient
from redis.exceptions import ConnectionError, TimeoutError

logger = logging.getLogger(__name__)

UNREACHABLE = (ConnectionError, TimeoutError)


def _missed(operation: str, exc: Exception) -> None:
    logger.warning("cache: Redis unreachable, %s skipped (%s)", operation, exc)


class ForgivingClient(RedisCacheClient):
    def get(self, key, default):
        try:
            return super().get(key, default)
        except UNREACHABLE as exc:
            _missed("get", exc)
            return default

    def get_many(self, keys):
        try:
            return super().get_many(keys)
        except UNREACHABLE as exc:
            _missed("get_many", exc)
            return {}

    def has_key(self, key):
        try:
            return super().has_key(key)
        except UNREACHABLE as exc:
            _missed("has_key", exc)
            return False

    def add(self, key, value, timeout):
        try:
            return super().add(key, value, timeout)
        except UNREACHABLE as exc:
            _missed("add", exc)
            return False

    def set(self, key, value, timeout):
        try:
            super().set(key, value, timeout)
        except UNREACHABLE as exc:
            _missed("set", exc)

    def set_many(self, data, timeout):
        try:
            return super().set_many(data, timeout)
        except UNREACHABLE as exc:
            _missed("set_many", exc)
            return []

    def delete(self, key):
        try:
            return super().delete(key)
        except UNREACHABLE as exc:
            _missed("delete", exc)
            return False


class ForgivingRedisCache(RedisCache):
    def __init__(self, server, params):
        super().__init__(server, params)
        self._class = ForgivingClient
