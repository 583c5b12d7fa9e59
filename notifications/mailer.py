"""The background thread that sends due proposal emails, one per process.

Started at server start-up (osfoundry/asgi.py). It polls rather than being woken by each
proposal: emails are batched for 10 minutes anyway, and polling reads only committed events,
so no request ever waits for, or fails because of, a mail server.
"""

import logging
import threading
import time

from django.conf import settings
from django.db import close_old_connections, connections

from . import services

logger = logging.getLogger(__name__)
started = threading.Event()


def start_in_background() -> None:
    interval = settings.PROPOSAL_EMAIL_POLL_SECONDS
    if interval <= 0 or started.is_set():
        return
    started.set()
    threading.Thread(target=run, args=(interval,), name="proposal-mailer", daemon=True).start()


def run(interval: int) -> None:
    while True:
        run_once()
        time.sleep(interval)


def run_once() -> int:
    """One round; never raises: a database or mail outage must not end the thread."""
    try:
        close_old_connections()
        return services.send_due_emails()
    except Exception:
        logger.exception("sending proposal emails failed; the next round retries")
        return 0
    finally:
        connections.close_all()
