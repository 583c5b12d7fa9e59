"""What an MCP tool is. Apps declare their tools (rooms/tools.py, agents/tools.py) with this;
the protocol module (osfoundry/mcp/protocol.py) lists and dispatches them and knows nothing else.
"""

import threading
import time
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from asgiref.sync import sync_to_async
from django.conf import settings
from django.db import connections
from pydantic import BaseModel

from osfoundry.auth import Principal


@dataclass
class CallContext:
    """Per-call facts the protocol gives a tool.

    `is_disconnected()` turns true when the client went away while the call was parked.
    `after_response(fn)` runs `fn` only once the whole response was written to the client: a
    long-poll advances a stored cursor there, so a response that was never delivered never
    moves it.
    """

    principal: Principal
    is_disconnected: Callable[[], bool] = lambda: False
    _after_response: list[Callable[[], Awaitable[None] | None]] = field(default_factory=list)

    def after_response(self, fn: Callable[[], Awaitable[None] | None]) -> None:
        self._after_response.append(fn)


@dataclass(frozen=True)
class Tool:
    name: str
    description: str
    arguments: type[BaseModel]  # extra="forbid"; validates every call
    input_schema: dict  # published in tools/list exactly as given
    scope: str  # osfoundry:read or osfoundry:write
    annotations: dict
    # Sync handlers run in a worker thread (short database work); async handlers run on the
    # event loop and may park (long-polls). Both return a JSON-able dict (structuredContent)
    # or raise a DomainError, which becomes a result with isError: true.
    handler: Callable[[CallContext, BaseModel], dict | Awaitable[dict]]
    is_async: bool = False


# Database work from the async path runs here, not in asgiref's one shared thread: independent
# short calls may run side by side, and each thread keeps its connection (CONN_MAX_AGE).
_database_threads: ThreadPoolExecutor | None = None


def database_threads() -> ThreadPoolExecutor:
    global _database_threads
    if _database_threads is None:
        _database_threads = ThreadPoolExecutor(
            max_workers=settings.MCP_DATABASE_THREADS, thread_name_prefix="mcp-db"
        )
    return _database_threads


def shutdown_database_threads() -> None:
    """Stop the threads and close their connections (tests, server shutdown)."""
    global _database_threads
    pool, _database_threads = _database_threads, None
    if pool is None:
        return
    # One close per thread: a blocked barrier makes each thread take exactly one task.
    barrier = threading.Barrier(pool._max_workers, timeout=5)

    def close():
        connections.close_all()
        try:
            barrier.wait()
        except threading.BrokenBarrierError:
            pass

    for _ in range(pool._max_workers):
        pool.submit(close)
    pool.shutdown(wait=True)


def tidy_connections() -> None:
    """Django's close_old_connections for these long-lived threads.

    A connection is kept MCP_CONN_MAX_AGE seconds whatever CONN_MAX_AGE says (Django's own ASGI
    path runs each request in a thread of its own, so it keeps none), and dropped early when it
    broke or was left outside autocommit, as Django decides.
    """
    for conn in connections.all(initialized_only=True):
        if conn.connection is None:
            continue
        if getattr(conn, "_mcp_connection", None) is not conn.connection:
            conn._mcp_connection = conn.connection
            conn.close_at = time.monotonic() + settings.MCP_CONN_MAX_AGE
        conn.close_if_unusable_or_obsolete()


async def run_sync[T](fn: Callable[..., T], /, *args, **kwargs) -> T:
    """Run a short, independent database call off the event loop, on a kept connection."""

    def call():
        tidy_connections()
        try:
            return fn(*args, **kwargs)
        finally:
            tidy_connections()

    return await sync_to_async(call, thread_sensitive=False, executor=database_threads())()
