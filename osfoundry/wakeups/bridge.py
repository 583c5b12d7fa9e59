"""Wake-ups across worker processes: one Redis pub/sub channel, one subscription per process."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import threading
import uuid
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from . import Registry

logger = logging.getLogger(__name__)


MAX_HINT_BYTES = 64 * 1024
MAX_BACKOFF_S = 2.0  # between subscription attempts while Redis is unreachable


class RedisBridge:
    """Publishes wake-up keys and routes the keys other processes publish to local waiters.

    One channel for everything: a send costs one PUBLISH, however many waiters or processes
    there are (a Channels group per waiter would cost several round trips per send). Each
    process subscribes once, lazily, from the async path; a process that only sends never
    subscribes. After every (re)subscribe all local waiters are woken to re-read, since wake-ups
    published while the subscription was down are lost.
    """

    def __init__(self, url: str, channel: str, *, target: Registry):
        self.url = url
        self.channel = channel
        self.target = target
        self.origin = uuid.uuid4().hex.encode()  # our own publishes come back: skip them
        self._task: asyncio.Task | None = None
        self._sync_client: Any = None
        self._lock = threading.Lock()
        self.subscribed = 0  # how many times a subscription became active (for tests, logs)
        self._subscribed_now = False
        # What the registry knows from wake-ups counts only while none can be missed.
        target.is_reliable = lambda: self.is_live
        self.client_name = f"osfoundry-wakeups-{self.origin[:12].decode()}"

    @property
    def is_live(self) -> bool:
        """Subscribed now, on a running loop: no wake-up from another process is being missed."""
        task = self._task
        return (
            self._subscribed_now
            and task is not None
            and not task.done()
            and not task.get_loop().is_closed()
        )

    # Publishing: notify() runs in whichever thread committed, usually a sync worker thread.
    def publish(self, keys: list[str], hints: dict[str, list] | None = None) -> None:
        payload = self.origin + b" " + " ".join(keys).encode()
        if hints:
            # The entries ride along, so the other process answers without a database read;
            # large ones stay behind (the waiter re-reads instead).
            encoded = json.dumps({"keys": keys, "hints": hints}, separators=(",", ":")).encode()
            if len(encoded) <= MAX_HINT_BYTES:
                payload = self.origin + b" " + encoded
        try:
            self._client().publish(self.channel, payload)
        except Exception:
            # The message is stored; remote waiters find it at their next wake-up or timeout.
            logger.warning("could not publish wake-up for %s", keys[:3], exc_info=True)

    def _client(self):
        with self._lock:
            if self._sync_client is None:
                import redis

                self._sync_client = redis.Redis.from_url(
                    self.url, socket_timeout=2, socket_connect_timeout=2
                )
            return self._sync_client

    def route(self, data: bytes) -> None:
        origin, _, body = data.partition(b" ")
        if origin == self.origin:
            return
        if body.startswith(b"{"):
            decoded = json.loads(body)
            self.target.wake_local(decoded["keys"], decoded["hints"])
        else:
            self.target.wake_local(body.decode().split())

    # Subscribing
    def start(self) -> None:
        task = self._task
        if task is not None and not task.done() and not task.get_loop().is_closed():
            return
        self._task = asyncio.get_running_loop().create_task(self._run())

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError, RuntimeError):
                await self._task
            self._task = None

    async def _run(self) -> None:
        import redis.asyncio as aioredis

        backoff = 0.1
        while True:
            client = aioredis.Redis.from_url(
                self.url,
                socket_keepalive=True,
                health_check_interval=30,
                client_name=self.client_name,
            )
            try:
                pubsub = client.pubsub()
                await pubsub.subscribe(self.channel)
                async for message in pubsub.listen():
                    kind = message["type"]
                    if kind == "subscribe":
                        self.subscribed += 1
                        self._subscribed_now = True
                        backoff = 0.1
                        self.target.wake_all_local()
                    elif kind == "message":
                        self.route(message["data"])
            except asyncio.CancelledError:
                raise
            except Exception:
                logger.warning("wake-up subscription lost; reconnecting", exc_info=True)
            finally:
                self._subscribed_now = False
                self.target.forget_all()
                with contextlib.suppress(Exception):
                    await client.aclose()
            await asyncio.sleep(backoff)
            backoff = min(backoff * 2, MAX_BACKOFF_S)
            # While Redis is down, other workers' wake-ups are lost: parked waits look in the
            # database at every retry instead, so a message sent meanwhile reaches its waiter
            # within MAX_BACKOFF_S (tests/faults/test_redis_restart.py).
            self.target.wake_all_local()
