"""Graceful shutdown of a worker: SIGTERM (or SIGINT) drains it instead of cutting requests.

On the signal uvicorn stops accepting connections, lets in-flight requests finish (for at most
--timeout-graceful-shutdown seconds, then it cancels them) and closes websockets with 1012
(service restart), on which the console's feed reconnects. What it cannot know is that a parked
long-poll may answer early: left alone, each would hold the worker for up to 50 s and then be
cut. So the signal also drains the wake-up registry: every parked wait answers at once with
what it has (`[]`, like a timeout), and /readyz answers 503 (osfoundry/health.py).

uvicorn installs its own handlers with signal.signal() before the application's start-up
(lifespan); watch_signals() chains ours in front of them then.
"""

import asyncio
import logging
import os
import signal
import threading

from . import wakeups

logger = logging.getLogger(__name__)

SIGNALS = (signal.SIGTERM, signal.SIGINT)


def is_draining() -> bool:
    return wakeups.registry.is_draining


def begin_drain() -> None:
    """Answer every parked wait now and every later one at once; call on the event loop."""
    if is_draining():
        return
    parked = wakeups.registry.drain()
    logger.info("shutting down: %d parked wait(s) answered early", parked)


def watch_signals() -> None:
    """Drain on SIGTERM and SIGINT, then let the server's own handler run. Call from the
    lifespan start-up, on the loop; signals reach the main thread only, so elsewhere (a server
    in a test's thread) this does nothing."""
    if threading.current_thread() is not threading.main_thread():
        return
    loop = asyncio.get_running_loop()
    for signum in SIGNALS:
        previous = signal.getsignal(signum)

        def on_signal(received, frame, previous=previous):
            # A signal handler may interrupt code holding the registry's lock: only schedule.
            loop.call_soon_threadsafe(begin_drain)
            if callable(previous):
                previous(received, frame)
            elif previous == signal.SIG_DFL:
                signal.signal(received, signal.SIG_DFL)
                os.kill(os.getpid(), received)

        signal.signal(signum, on_signal)
