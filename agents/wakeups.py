"""Wake parked long-polls when something they wait for happens.

A parked request costs an asyncio.Event, not a thread. Waiters register under keys
("room:<id>", "agent:<profile id>") before their first read, so no wake-up can slip between the
read and the wait. `notify()` is thread-safe and wakes only the waiters registered under its keys.
A wake-up says "look again": the waiter re-reads from the database, so a spurious or
duplicate wake-up costs one query and never a lost or doubled message. In the sending process a
wake-up may also carry the new inbox entries as hints; a waiter uses them only when they continue
its cursor exactly (no gap), which saves the re-read on the hot path.

Across worker processes, `notify()` also publishes the keys on one Redis channel; each process
holds one subscription and routes what it hears to its local waiters (see `RedisBridge`).
"""

import asyncio
import contextlib
import heapq
import json
import logging
import math
import threading
import time
import uuid
from collections import defaultdict
from collections.abc import Callable, Iterable
from urllib.parse import urlsplit

logger = logging.getLogger(__name__)


def room_key(room_id) -> str:
    return f"room:{room_id}"


def agent_key(profile_id) -> str:
    return f"agent:{profile_id}"


class Waiter:
    """A parked long-poll: one future at a time, nothing else.

    A timeout resolves the future with False instead of raising: an idle re-poll every 50 s
    from 20,000 agents must not leave exception and traceback cycles for the collector."""

    __slots__ = ("keys", "loop", "hints", "_woken", "_future")

    def __init__(self, keys: tuple[str, ...], loop: asyncio.AbstractEventLoop):
        self.keys = keys
        self.loop = loop
        self.hints: list = []  # filled under the registry lock, taken with take_hints()
        self._woken = False  # woken while not waiting: the next wait returns at once
        self._future: asyncio.Future | None = None

    @property
    def is_woken(self) -> bool:
        if self._woken:
            return True
        future = self._future
        return future is not None and future.done() and not future.cancelled() and future.result()

    def wake(self) -> None:
        if self.loop.is_closed():
            return
        self.loop.call_soon_threadsafe(self._set)

    def _set(self) -> None:
        future = self._future
        if future is not None and not future.done():
            future.set_result(True)
        else:
            self._woken = True

    def wait(self, timeout: float) -> asyncio.Future:
        """Await it: True when woken (now or since the last wait), False on timeout.

        A plain method returning the future, not a coroutine: a parked coroutine frame is
        memory, 20,000 times."""
        future = self._future = self.loop.create_future()
        if self._woken:
            self._woken = False
            future.set_result(True)
        else:
            Deadlines.of(self.loop).add(future, timeout)
        return future


class Deadlines:
    """Ends parked waits on time with one loop timer, not one per wait: a timer handle with
    its copied context costs about 0.6 KB, and 20,000 parked waits would hold 20,000 of them.
    A wait ends within TICK_S after its timeout (timeouts are jittered by seconds anyway).
    Ticks are short so that the waits ending together stay few: each answers and its client
    polls again on the loop, and a send's wake-up queues behind them (with 50 ms ticks, 20,000
    idle agents made ~20 at a time, a few milliseconds of loop work)."""

    TICK_S = 0.005
    _by_loop: dict[asyncio.AbstractEventLoop, "Deadlines"] = {}

    @classmethod
    def of(cls, loop: asyncio.AbstractEventLoop) -> "Deadlines":
        deadlines = cls._by_loop.get(loop)
        if deadlines is None:
            deadlines = cls._by_loop[loop] = cls(loop)
        return deadlines

    def __init__(self, loop: asyncio.AbstractEventLoop):
        self.loop = loop
        self._due: dict[int, list[asyncio.Future]] = {}  # tick -> futures to end then
        self._ticks: list[int] = []  # a heap of the keys of _due
        self._timer: asyncio.TimerHandle | None = None
        self._timer_tick: int | None = None

    def add(self, future: asyncio.Future, timeout: float) -> None:
        tick = math.ceil((self.loop.time() + max(timeout, 0)) / self.TICK_S)
        due = self._due.get(tick)
        if due is None:
            due = self._due[tick] = []
            heapq.heappush(self._ticks, tick)
        due.append(future)
        if self._timer_tick is None or tick < self._timer_tick:
            self._arm(tick)

    def _arm(self, tick: int) -> None:
        if self._timer is not None:
            self._timer.cancel()
        self._timer_tick = tick
        self._timer = self.loop.call_at(tick * self.TICK_S, self._fire)

    def _fire(self) -> None:
        self._timer = self._timer_tick = None
        # The loop's timers may fire up to a millisecond early.
        now = (self.loop.time() + 0.001) / self.TICK_S
        while self._ticks and self._ticks[0] <= now:
            for future in self._due.pop(heapq.heappop(self._ticks)):
                if not future.done():
                    future.set_result(False)
        if self._ticks:
            self._arm(self._ticks[0])
        else:
            del self._by_loop[self.loop]  # nothing due: hold no reference to the loop


class Registry:
    def __init__(self, *, on_register: Callable[[], None] | None = None):
        self._lock = threading.Lock()
        self._waiters: dict[str, set[Waiter]] = defaultdict(set)
        self._on_register = on_register
        # The latest inbox sequence per key, as this process knows it from its own reads and
        # from the hints wake-ups carry; a wake-up without hints makes its keys unknown again.
        self._latest: dict[str, int] = {}
        self.generation = 0  # moves on every "unknown again", so a read never undoes one
        self.is_reliable: Callable[[], bool] = lambda: True

    def register(self, keys: Iterable[str]) -> Waiter:
        """Park under `keys`. A caller whose client may leave wakes the waiter when it does
        (wake_local): nothing here polls thousands of parked clients."""
        waiter = Waiter(tuple(keys), asyncio.get_running_loop())
        with self._lock:
            for key in waiter.keys:
                self._waiters[key].add(waiter)
        if self._on_register is not None:
            self._on_register()
        return waiter

    def unregister(self, waiter: Waiter) -> None:
        with self._lock:
            for key in waiter.keys:
                bucket = self._waiters.get(key)
                if bucket is None:
                    continue
                bucket.discard(waiter)
                if not bucket:
                    del self._waiters[key]

    def wake_local(self, keys: Iterable[str], hints: dict[str, list] | None = None) -> int:
        with self._lock:
            targets = set()
            for key in keys:
                self._learn(key, (hints or {}).get(key))
                for waiter in self._waiters.get(key, ()):
                    targets.add(waiter)
                    if hints and key in hints:
                        waiter.hints.extend(hints[key])
        for waiter in targets:
            waiter.wake()
        return len(targets)

    def wake_all_local(self) -> int:
        with self._lock:
            self._forget_all()
            targets = {w for bucket in self._waiters.values() for w in bucket}
        for waiter in targets:
            waiter.wake()
        return len(targets)

    def _learn(self, key: str, hints: list | None) -> None:
        if hints:
            latest = max(hint["sequence"] for hint in hints)
            if latest > self._latest.get(key, 0):
                self._latest[key] = latest
        else:
            self._latest.pop(key, None)
            self.generation += 1

    def forget_all(self) -> None:
        """Wake-ups may have been missed: nothing is known any more."""
        with self._lock:
            self._forget_all()

    def _forget_all(self) -> None:
        self._latest.clear()
        self.generation += 1

    def latest(self, key: str) -> int | None:
        """The latest sequence under `key`, when wake-ups can vouch for it; else None."""
        if not self.is_reliable():
            return None
        return self._latest.get(key)

    def confirm(self, key: str, latest: int, generation: int) -> None:
        """Record `latest`, read from the database after `generation` was current, unless a
        wake-up since then made the key unknown (the read may predate what it announced)."""
        with self._lock:
            if generation != self.generation:
                return
            if len(self._latest) > 200_000:
                self._latest.clear()
            if latest > self._latest.get(key, -1):
                self._latest[key] = latest

    def take_hints(self, waiter: Waiter) -> list:
        with self._lock:
            hints, waiter.hints = waiter.hints, []
        return hints

    def count(self) -> int:
        with self._lock:
            return len({w for bucket in self._waiters.values() for w in bucket})


# Every long-poll (agents' and Rooms') registers here; the first one starts the subscription.
registry = Registry(on_register=lambda: ensure_started())


def ensure_started() -> None:
    """With REDIS_URL, start this process's Redis subscription on the running loop, once.
    Runs at every registration (cheap when started), so Room polls and agent waits alike
    start it."""
    if bridge is not None:
        bridge.start()


# Set by configure() in a process that has REDIS_URL; publishes keys to other processes.
_remote_publisher: Callable[[list[str], dict | None], None] | None = None


def set_remote_publisher(publisher) -> None:
    global _remote_publisher
    _remote_publisher = publisher


def notify(keys: Iterable[str], hints: dict[str, list] | None = None) -> None:
    """Wake every waiter on these keys, in this process and (with Redis) in the others.

    `hints` (key -> new entries) travel along when small. Call after commit
    (transaction.on_commit), never inside a transaction.
    """
    keys = list(keys)
    woken = registry.wake_local(keys, hints)
    if _remote_publisher is not None and keys:
        _remote_publisher(keys, hints)
    if woken and not _on_event_loop():
        # The woken waiters answer on the event loop thread, which needs the GIL; left alone,
        # this (worker) thread keeps it while it builds its own response. Stepping aside for
        # a moment lets them answer first: delivery p50 0.87 -> 0.64 ms (bench/longpoll.py).
        time.sleep(GIL_HANDOFF_S)


GIL_HANDOFF_S = 0.00005


def _on_event_loop() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


# ---------------------------------------------------------------------------------------------
# Across processes: one Redis pub/sub channel, one subscription per process.


MAX_HINT_BYTES = 64 * 1024


class RedisBridge:
    """Publishes wake-up keys and routes the keys other processes publish to local waiters.

    One channel for everything: a send costs one PUBLISH, however many waiters or processes
    there are (a Channels group per waiter would cost several round trips per send). Each
    process subscribes once, lazily, from the async path; a process that only sends never
    subscribes. After every (re)subscribe all local waiters are woken to re-read, since wake-ups
    published while the subscription was down are lost.
    """

    def __init__(self, url: str, channel: str, *, target: Registry = registry):
        self.url = url
        self.channel = channel
        self.target = target
        self.origin = uuid.uuid4().hex.encode()  # our own publishes come back: skip them
        self._task: asyncio.Task | None = None
        self._sync_client = None
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
            backoff = min(backoff * 2, 5.0)


bridge: RedisBridge | None = None


def configure(redis_url: str, prefix: str = "osfoundry") -> None:
    """Called once at start-up: with a Redis URL, wake-ups cross process boundaries."""
    global bridge
    if not redis_url:
        bridge = None
        set_remote_publisher(None)
        registry.is_reliable = lambda: True
        return
    # Pub/sub ignores the database number: put it in the channel so databases stay apart.
    db = urlsplit(redis_url).path.strip("/") or "0"
    bridge = RedisBridge(redis_url, f"{prefix}:wakeups:{db}")
    set_remote_publisher(bridge.publish)
