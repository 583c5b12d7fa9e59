"""osfoundry/asgi.py's application routes the three ASGI scope types a server sends (http,
websocket, lifespan) and refuses any other, as Channels' ProtocolTypeRouter did."""

import pytest

from osfoundry.asgi import application


async def receive():
    raise AssertionError("an unknown scope is refused before anything is received")


async def send(message):
    raise AssertionError(f"nothing is sent for an unknown scope: {message}")


def test_a_scope_type_no_application_serves_is_refused():
    with pytest.raises(ValueError, match="No application for scope type 'webtransport'"):
        application({"type": "webtransport", "path": "/"}, receive, send)
