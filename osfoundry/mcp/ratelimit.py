"""Per-token request budget for the MCP endpoint: MCP_RATE_LIMIT calls per MCP_RATE_WINDOW seconds.

A fixed window (the clock's minute by default). With REDIS_URL the count lives in Redis
(INCR + EXPIRE), so every worker process draws from the same budget; without it, in this
process's memory. Authenticated calls are counted per token, anonymous ones per client address.
"""

import asyncio
import logging
import math
import threading
import time
import weakref
from dataclasses import dataclass

from django.conf import settings

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Quota:
    limit: int
    remaining: int
    reset_in: int  # seconds until the window turns over
    exceeded: bool

    def headers(self) -> list[tuple[bytes, bytes]]:
        out = [
            (b"x-ratelimit-limit", str(self.limit).encode()),
            (b"x-ratelimit-remaining", str(self.remaining).encode()),
            (b"x-ratelimit-reset", str(self.reset_in).encode()),
        ]
        if self.exceeded:
            out.append((b"retry-after", str(self.reset_in).encode()))
        return out


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
# One client per event loop: a redis.asyncio connection belongs to the loop that opened it.
_redis_clients: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def redis_client():
    import redis.asyncio as redis

    loop = asyncio.get_running_loop()
    client = _redis_clients.get(loop)
    if client is None:
        client = redis.Redis.from_url(settings.REDIS_URL)
        _redis_clients[loop] = client
    return client


async def count(key: str, window: int, window_index: int) -> int:
    if not settings.REDIS_URL:
        return local.incr(key, window_index)
    prefix = getattr(settings, "REDIS_PREFIX", "osfoundry")
    redis_key = f"{prefix}:mcp-rate:{key}:{window_index}"
    try:
        pipe = redis_client().pipeline(transaction=True)
        pipe.incr(redis_key)
        pipe.expire(redis_key, window + 5)
        value, _ = await pipe.execute()
        return int(value)
    except Exception:
        # Redis down: keep serving with this process's own count rather than fail every call.
        logger.exception("rate limit: Redis unavailable, counting in process")
        return local.incr(key, window_index)


async def take(key: str) -> Quota:
    limit = settings.MCP_RATE_LIMIT
    window = settings.MCP_RATE_WINDOW
    now = time.time()
    window_index = int(now // window)
    used = await count(key, window, window_index)
    reset_in = max(1, math.ceil((window_index + 1) * window - now))
    return Quota(
        limit=limit, remaining=max(0, limit - used), reset_in=reset_in, exceeded=used > limit
    )
