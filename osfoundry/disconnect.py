"""Noticing that a client went away while its request is parked, on the lean ASGI path
(the MCP endpoint and the REST long-poll).

A plain ASGI app learns of a disconnect only from `receive()`, so a parked request keeps a
receive() call pending. Two things keep that cheap with 20,000 requests parked:

- It is not a Task. The watcher steps the server's receive() coroutine itself, once per future
  it waits on, which is all a Task would do for it; a Task would add its own object, a copied
  context, an entry in asyncio's task set and a coroutine frame (bench/longpoll.py).
- It is never cancelled. Once the response is sent, receive() returns http.disconnect (the ASGI
  spec says so) and the watch ends by itself. Cancelling would leave a CancelledError, its
  traceback and frames, and the server's request object in a reference cycle per request:
  parked for 50 s, those reach the collector's oldest generation, which it rarely walks, and
  the server grew by about 4 KB per idle re-poll.
"""

import asyncio
import contextvars
import logging
from collections.abc import Callable
from typing import Any

logger = logging.getLogger(__name__)

# Stepping receive() needs no context variables; without one, each step would copy the
# current context.
_NO_CONTEXT = contextvars.Context()


class DisconnectWatcher:
    __slots__ = ("disconnected", "_callbacks", "_receive", "_stopped", "_pending")

    def __init__(self, receive):
        self.disconnected = False
        self._callbacks: list[Callable[[], None]] = []
        self._receive = receive
        self._stopped = False
        self._pending: Any = None  # the receive() coroutine being stepped

    def start(self) -> None:
        """Start watching; call once the request body was read."""
        if self._pending is None and not self.disconnected:
            self._next()

    def on_disconnect(self, callback: Callable[[], None]) -> None:
        if self.disconnected:
            callback()
        else:
            self._callbacks.append(callback)

    def is_disconnected(self) -> bool:
        return self.disconnected

    def stop(self) -> None:
        """The response was sent (or will never be): what receive() says from now on is
        the end of this request, not the client leaving."""
        self._stopped = True
        self._callbacks = []

    def _next(self) -> None:
        self._pending = self._receive()
        self._step()

    def _step(self, _future=None) -> None:
        try:
            awaited = self._pending.send(None)
        except StopIteration as done:
            self._pending = None
            if done.value["type"] == "http.disconnect":
                self._ended()
            else:
                self._next()  # more of the request body: nobody asked for it
            return
        except (Exception, asyncio.CancelledError):
            self._pending = None
            logger.warning("receive() failed while watching for a disconnect", exc_info=True)
            return
        if awaited is None:  # a bare yield: step again on the next loop iteration
            asyncio.get_running_loop().call_soon(self._step)
        else:
            awaited._asyncio_future_blocking = False
            awaited.add_done_callback(self._step, context=_NO_CONTEXT)

    def _ended(self) -> None:
        if self._stopped:
            return
        self.disconnected = True
        callbacks, self._callbacks = self._callbacks, []
        for callback in callbacks:
            callback()
