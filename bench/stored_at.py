"""Bench-only: the moment a send committed, as the X-Stored-At response header.

bench/longpoll.py times delivery from "committed, before any wake-up" to "the client has read the
whole response". Sending wakes recipients with transaction.on_commit(lambda: wakeups.notify(...))
and looks `notify` up when the hook runs, so the first notify of a request is the moment after
commit and before anyone is woken: the wrapper below stamps it. Django runs a sync view and the
sync middleware around it in one thread, and the hook runs there when the view's atomic block
exits, so a thread-local carries the stamp from the hook to the response.
"""

import threading
import time

from osfoundry import wakeups

_request = threading.local()
_product_notify = wakeups.notify


def _stamping_notify(keys, hints=None):
    stamps = getattr(_request, "stamps", None)  # None: outside the middleware's requests
    if stamps is not None and not stamps:
        stamps.append(time.time())
    _product_notify(keys, hints)


wakeups.notify = _stamping_notify


class StoredAtMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        _request.stamps = []
        try:
            response = self.get_response(request)
        finally:
            stamps = _request.stamps
            del _request.stamps
        if stamps:
            response.headers["X-Stored-At"] = f"{stamps[0]:.6f}"
        return response
