"""osfoundry/shutdown.py puts its drain in front of whatever the server did on SIGTERM and
SIGINT: a handler it installed runs after the drain, a signal it ignored stays ignored, a
signal left to its default still ends the process, and a server outside the main thread (where
no signal arrives) is left alone. The live worker's SIGTERM is tested end to end in
test_graceful_shutdown.py; here the handlers are called in this process, and the one call that
would end it (os.kill of the default case) is recorded instead."""

import asyncio
import logging
import os
import signal
import threading

import pytest

from osfoundry import shutdown, wakeups

DRAINED = "shutting down: %d parked wait(s) answered early"


@pytest.fixture
def signals():
    """Puts back the process's own handlers (pytest's, coverage's) and ends the drain."""
    saved = {signum: signal.getsignal(signum) for signum in shutdown.SIGNALS}
    yield
    for signum, handler in saved.items():
        signal.signal(signum, handler)
    wakeups.registry.is_draining = False


def drain_logs(caplog) -> list:
    return [r.args for r in caplog.records if r.name == "osfoundry.shutdown" and r.msg == DRAINED]


async def test_an_ignored_signal_drains_once_and_the_process_lives_on(signals, caplog):
    caplog.set_level(logging.INFO, logger="osfoundry.shutdown")
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    shutdown.watch_signals()
    waiter = wakeups.registry.register(["agent:shutdown-chain"])
    try:
        parked = waiter.wait(30)
        signal.raise_signal(signal.SIGTERM)
        assert await asyncio.wait_for(parked, 10) is False  # answered early, as a timeout
        assert shutdown.is_draining()
        # A second signal (an impatient supervisor) drains nothing twice.
        signal.raise_signal(signal.SIGTERM)
        await asyncio.sleep(0)  # the handler's call_soon_threadsafe runs before this resumes
    finally:
        wakeups.registry.unregister(waiter)
    assert drain_logs(caplog) == [(1,)]
    assert signal.getsignal(signal.SIGTERM) not in (signal.SIG_IGN, signal.SIG_DFL)


async def test_a_signal_left_to_its_default_drains_and_is_raised_again(signals, monkeypatch):
    raised = []
    monkeypatch.setattr(shutdown.os, "kill", lambda pid, signum: raised.append((pid, signum)))
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    shutdown.watch_signals()

    signal.raise_signal(signal.SIGTERM)

    # The default action (the process ends) comes back and runs, as without our handler.
    assert raised == [(os.getpid(), signal.SIGTERM)]
    assert signal.getsignal(signal.SIGTERM) == signal.SIG_DFL
    await asyncio.sleep(0)
    assert shutdown.is_draining()


def test_a_server_outside_the_main_thread_leaves_the_signal_handlers_alone(signals):
    before = {signum: signal.getsignal(signum) for signum in shutdown.SIGNALS}

    async def start_up():
        shutdown.watch_signals()

    thread = threading.Thread(target=asyncio.run, args=(start_up(),))
    thread.start()
    thread.join(10)

    assert {signum: signal.getsignal(signum) for signum in shutdown.SIGNALS} == before
    assert not shutdown.is_draining()
