"""One request budget per caller for every interface: RATE_LIMIT calls per RATE_WINDOW seconds.

The MCP endpoint (osfoundry/mcp/protocol.py), the REST API (osfoundry/api_auth.py) and the REST
long-poll (agents/longpoll.py) all charge the same counter, keyed by the principal's token_key
(anonymous calls by client address), so an agent cannot double its budget by switching
interface. A fixed window (the clock's minute by default). With REDIS_URL the count lives in
Redis (INCR + EXPIRE), so every worker process draws from the same budget; without it, in this
process's memory. `take` is for the async routes, `take_sync` for Django's request threads; both
count in the same place.

While Redis is unreachable (stopped, restarting; a call waits at most a second for it) calls are
neither refused nor let through uncounted: each process counts in its own memory for that
window, so a caller gets at most RATE_LIMIT per worker until Redis answers again.
"""

import asyncio
import logging
import math
import threading
import time
import weakref
from typing import NamedTuple

from django.conf import settings

from .errors import DomainError
from .hot_settings import hot

logger = logging.getLogger(__name__)


class Quota(NamedTuple):  # a tuple: made on every call, and cheaper to make than a dataclass
    limit: int
    remaining: int
    reset_in: int  # seconds until the window turns over
    exceeded: bool
    window: int = 60

    @property
    def message(self) -> str:
        return (
            f"Rate limit of {self.limit} calls per {self.window} s reached; "
            f"retry after {self.reset_in} s"
        )

    def header_items(self) -> list[tuple[str, str]]:
        out = [
            ("x-ratelimit-limit", str(self.limit)),
            ("x-ratelimit-remaining", str(self.remaining)),
            ("x-ratelimit-reset", str(self.reset_in)),
        ]
        if self.exceeded:
            out.append(("retry-after", str(self.reset_in)))
        return out

    def headers(self) -> list[tuple[bytes, bytes]]:
        """The headers as an ASGI response lists them."""
        out = [
            (b"x-ratelimit-limit", b"%d" % self.limit),
            (b"x-ratelimit-remaining", b"%d" % self.remaining),
            (b"x-ratelimit-reset", b"%d" % self.reset_in),
        ]
        if self.exceeded:
            out.append((b"retry-after", b"%d" % self.reset_in))
        return out


class RateLimited(DomainError):
    """Past the budget: 429, with the quota's headers (Retry-After among them)."""

    code = "rate_limited"
    http_status = 429

    def __init__(self, quota: Quota):
        super().__init__(quota.message)
        self.quota = quota


def limit_header() -> tuple[bytes, bytes]:
    """x-ratelimit-limit for answers given before a budget was charged (405, a foreign Host)."""
    return (b"x-ratelimit-limit", b"%d" % hot.RATE_LIMIT)


class LocalCounter:
    def __init__(self):
        self._lock = threading.Lock()
        self._counts: dict[str, tuple[int, int]] = {}

    def incr(self, key: str, window_index: int) -> int:
        with self._lock:
            index, count = self._counts.get(key, (window_index, 0))
            count = count + 1 if index == window_index else 1
            self._counts[key] = (window_index, count)
            if len(self._counts) > 50_000:
                self._counts = {k: v for k, v in self._counts.items() if v[0] == window_index}
            return count

    def clear(self) -> None:
        with self._lock:
            self._counts.clear()


local = LocalCounter()
# A Redis that hangs (rather than refusing) must not hang every call: count locally instead.
REDIS_TIMEOUT_S = 1
# One async client per event loop: a redis.asyncio connection belongs to the loop that opened it.
_redis_clients: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
# One blocking client per URL for Django's request threads (its connection pool is thread-safe).
_sync_clients: dict[str, object] = {}
_sync_lock = threading.Lock()


def redis_client():
    import redis.asyncio as redis

    loop = asyncio.get_running_loop()
    client = _redis_clients.get(loop)
    if client is None:
        client = redis.Redis.from_url(
            settings.REDIS_URL,
            socket_connect_timeout=REDIS_TIMEOUT_S,
            socket_timeout=REDIS_TIMEOUT_S,
        )
        _redis_clients[loop] = client
    return client


def sync_redis_client():
    import redis

    url = settings.REDIS_URL
    with _sync_lock:
        client = _sync_clients.get(url)
        if client is None:
            client = _sync_clients[url] = redis.Redis.from_url(
                url, socket_connect_timeout=REDIS_TIMEOUT_S, socket_timeout=REDIS_TIMEOUT_S
            )
    return client


class Window(NamedTuple):
    """The fixed window a call made now falls in."""

    limit: int
    length: int
    number: int  # windows since the epoch
    now: float

    @classmethod
    def current(cls) -> "Window":
        length = hot.RATE_WINDOW
        now = time.time()
        return cls(hot.RATE_LIMIT, length, int(now // length), now)

    def redis_key(self, key: str) -> str:
        prefix = getattr(settings, "REDIS_PREFIX", "osfoundry")
        return f"{prefix}:rate:{key}:{self.number}"

    def quota(self, used: int) -> Quota:
        return quota_in(self.limit, self.length, self.number, self.now, used)


def quota_in(limit: int, length: int, number: int, now: float, used: int) -> Quota:
    """The quota after `used` calls in window `number` (of `length` s), at `now`."""
    reset_in = max(1, math.ceil((number + 1) * length - now))
    # Positional: this runs on every call of every interface.
    return Quota(limit, max(0, limit - used), reset_in, used > limit, length)


async def take(key: str) -> Quota:
    """Count one call against `key`'s budget (async routes)."""
    if not hot.REDIS_URL:
        return take_local(key)
    window = Window.current()
    redis_key = window.redis_key(key)
    try:
        pipe = redis_client().pipeline(transaction=True)
        pipe.incr(redis_key)
        pipe.expire(redis_key, window.length + 5)
        value, _ = await pipe.execute()
        used = int(value)
    except Exception:
        # Redis down: keep serving with this process's own count rather than fail every call.
        logger.warning("rate limit: Redis unavailable, counting in process", exc_info=False)
        used = local.incr(key, window.number)
    return window.quota(used)


def take_local(key: str) -> Quota:
    """Window.current().quota() counted in this process, without the Window: every call of
    the lean routes comes here when there is no Redis."""
    length, now = hot.RATE_WINDOW, time.time()
    number = int(now // length)
    return quota_in(hot.RATE_LIMIT, length, number, now, local.incr(key, number))


def take_sync(key: str) -> Quota:
    """Count one call against `key`'s budget (Django's request threads)."""
    if not hot.REDIS_URL:
        return take_local(key)
    window = Window.current()
    redis_key = window.redis_key(key)
    try:
        pipe = sync_redis_client().pipeline(transaction=True)
        pipe.incr(redis_key)
        pipe.expire(redis_key, window.length + 5)
        value, _ = pipe.execute()
        used = int(value)
    except Exception:
        logger.warning("rate limit: Redis unavailable, counting in process", exc_info=False)
        used = local.incr(key, window.number)
    return window.quota(used)
