"""osfoundry/disconnect.py: a parked request learns that its client left from the server's
receive(), which the watcher keeps one call of pending; once the response is sent, what
receive() says is the end of the request, not the client leaving."""

import asyncio

from osfoundry.disconnect import DisconnectWatcher


class Server:
    """An ASGI server's receive(): each call waits for the next message put in."""

    def __init__(self, *, yields_first: bool = False):
        self.messages: asyncio.Queue = asyncio.Queue()
        self.calls = 0
        self.answered = asyncio.Event()
        self.yields_first = yields_first

    async def receive(self) -> dict:
        self.calls += 1
        if self.yields_first:
            await asyncio.sleep(0)  # a bare yield to the loop, not a future to wait on
        message = await self.messages.get()
        self.answered.set()
        return message


async def test_a_watch_asks_the_server_once_however_often_it_is_started():
    server = Server()
    watcher = DisconnectWatcher(server.receive)
    left = asyncio.Event()
    watcher.on_disconnect(left.set)

    watcher.start()
    watcher.start()  # a second start while one receive() is pending
    assert server.calls == 1

    server.messages.put_nowait({"type": "http.disconnect"})
    await asyncio.wait_for(left.wait(), 10)
    assert watcher.is_disconnected()
    watcher.start()  # the client is gone: nothing left to watch for
    assert server.calls == 1


async def test_a_callback_added_after_the_client_left_runs_at_once():
    server = Server()
    watcher = DisconnectWatcher(server.receive)
    watcher.start()
    server.messages.put_nowait({"type": "http.disconnect"})
    await asyncio.wait_for(server.answered.wait(), 10)
    cancelled = []

    watcher.on_disconnect(lambda: cancelled.append("parked call"))

    assert cancelled == ["parked call"]


async def test_the_end_of_a_request_after_its_response_is_not_a_disconnect():
    server = Server()
    watcher = DisconnectWatcher(server.receive)
    cancelled = []
    watcher.on_disconnect(lambda: cancelled.append("parked call"))
    watcher.start()

    watcher.stop()  # the response was sent
    server.messages.put_nowait({"type": "http.disconnect"})  # what the ASGI spec says next
    # receive() returned in the same step of the watcher that set `answered`.
    await asyncio.wait_for(server.answered.wait(), 10)

    assert not watcher.is_disconnected()
    assert cancelled == []


async def test_a_receive_that_yields_to_the_loop_before_it_waits_is_still_watched():
    server = Server(yields_first=True)
    watcher = DisconnectWatcher(server.receive)
    left = asyncio.Event()
    watcher.on_disconnect(left.set)
    watcher.start()

    server.messages.put_nowait({"type": "http.request", "body": b"", "more_body": False})
    server.messages.put_nowait({"type": "http.disconnect"})

    await asyncio.wait_for(left.wait(), 10)
    assert watcher.is_disconnected()
    assert server.calls == 2  # the rest of the body was read past, then the disconnect
