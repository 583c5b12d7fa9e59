"""Database work from the async path (the MCP endpoint, the REST long-poll, Room polls).

Django's own ASGI handler runs each request in a thread of its own; the lean async routes run
their short, independent database calls here instead: a small pool whose threads keep their
connections (DATABASE_THREAD_CONN_MAX_AGE), so a parked request holds no thread and a call
costs no new connection.
"""

import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

from asgiref.sync import sync_to_async
from django.conf import settings
from django.db import connections

# Not asgiref's one shared thread: independent short calls may run side by side.
_database_threads: ThreadPoolExecutor | None = None


def database_threads() -> ThreadPoolExecutor:
    global _database_threads
    if _database_threads is None:
        _database_threads = ThreadPoolExecutor(
            max_workers=settings.DATABASE_THREADS, thread_name_prefix="osf-db"
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


# Per thread: the connection (by alias) whose closing time tidy_connections() last set.
_kept = threading.local()


def tidy_connections() -> None:
    """Django's close_old_connections for these long-lived threads.

    A connection is kept DATABASE_THREAD_CONN_MAX_AGE seconds whatever CONN_MAX_AGE says
    (Django's own ASGI path runs each request in a thread of its own, so it keeps none), and
    dropped early when it broke or was left outside autocommit, as Django decides.
    """
    kept = _kept.__dict__.setdefault("connections", {})
    for conn in connections.all(initialized_only=True):
        if conn.connection is None:
            continue
        if kept.get(conn.alias) is not conn.connection:
            kept[conn.alias] = conn.connection
            conn.close_at = time.monotonic() + settings.DATABASE_THREAD_CONN_MAX_AGE
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
