"""Noticing that a client went away while its request is parked, on the lean ASGI path
(the MCP endpoint and the REST long-poll).

A plain ASGI app learns of a disconnect only from `receive()`, so a parked request keeps one
small task waiting on it. That task is never cancelled: once the response is sent, `receive()`
returns http.disconnect (the ASGI spec says so) and the task ends by itself. Cancelling it would
leave a CancelledError, its traceback and frames, and the server's request object in a
reference cycle for every request. Parked for 50 s, those objects reach the oldest generation,
which the collector rarely walks: the server grew by about 4 KB per idle re-poll, over
1 MB a second with 20,000 agents parked (bench/longpoll.py).
"""

import asyncio
from collections.abc import Callable


class DisconnectWatcher:
    __slots__ = ("disconnected", "_callbacks", "_receive", "_stopped", "_task")

    def __init__(self, receive):
        self.disconnected = False
        self._callbacks: list[Callable[[], None]] = []
        self._receive = receive
        self._stopped = False
        self._task: asyncio.Task | None = None

    def start(self) -> None:
        """Start watching; call once the request body was read."""
        if self._task is None:
            self._task = asyncio.ensure_future(self._watch())

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

    async def _watch(self) -> None:
        while (await self._receive())["type"] != "http.disconnect":
            pass
        if self._stopped:
            return
        self.disconnected = True
        callbacks, self._callbacks = self._callbacks, []
        for callback in callbacks:
            callback()
