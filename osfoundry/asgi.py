"""ASGI entry point.

Django serves pages and the REST API; websockets go through Channels. Long-lived requests
(the MCP endpoint, long-polls) are routed to a lean asyncio path before Django's handler, which
would hold a thread per in-flight request.
"""

import gc
import inspect
import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "osfoundry.settings")
django_asgi = get_asgi_application()

from a2wsgi import WSGIMiddleware  # noqa: E402
from channels.auth import AuthMiddlewareStack  # noqa: E402
from channels.routing import URLRouter  # noqa: E402
from django.conf import settings  # noqa: E402

from agents import longpoll  # noqa: E402
from agents.routing import websocket_urlpatterns as messages_websockets  # noqa: E402
from notifications.mailer import start_in_background as start_mailer  # noqa: E402
from osfoundry import health, shutdown, wakeups  # noqa: E402
from osfoundry.checks import start_up_problems  # noqa: E402
from osfoundry.http import (  # noqa: E402
    MAX_HEADER_BYTES,
    WebsocketGuard,
    header_bytes,
    refuse_large_headers,
)
from osfoundry.mcp.protocol import EXTERNAL_MCP_PATH, MCP_PATH, MCPApp  # noqa: E402
from osfoundry.mcp.tooling import collect_task_store, collect_tools  # noqa: E402
from rooms.git import server as git_server  # noqa: E402
from rooms.live.routing import websocket_urlpatterns  # noqa: E402
from rooms.runtime.jsengine import warm_in_background  # noqa: E402

# One tool registry and one task store behind both doors of the MCP endpoint
# (osfoundry/mcp/protocol.py).
mcp_tools = collect_tools()
mcp_tasks = collect_task_store()
mcp_apps = {
    path: MCPApp(mcp_tools, path=path, is_discovery_open=is_open, task_store=mcp_tasks)
    for path, is_open in ((MCP_PATH, False), (EXTERNAL_MCP_PATH, True))
}


# Git over smart HTTP (rooms/git/server.py): dulwich is WSGI and blocking, so it runs in a2wsgi's
# threads (asgiref's WsgiToAsgi lacks the write() callable dulwich uses).
git_app = WSGIMiddleware(git_server.application, workers=settings.GIT_THREADS)


def http(scope, receive, send):
    # The MCP endpoint and the REST long-poll never enter Django's handler, which would hold a
    # thread per parked request: see osfoundry/mcp/protocol.py and agents/longpoll.py.
    # Returns the handler's coroutine rather than awaiting it: one frame fewer under each of
    # thousands of parked requests.
    if (size := header_bytes(scope)) > MAX_HEADER_BYTES:
        # Checked here, before any route: httptools, uvicorn's default parser, has no header
        # limit (h11's --h11-max-incomplete-event-size has one, at a third of the speed).
        return refuse_large_headers(send, size)
    if mcp_app := mcp_apps.get(scope["path"].removesuffix("/")):
        return mcp_app(scope, receive, send)
    if longpoll.matches(scope):
        return longpoll.handle(scope, receive, send)
    if health.matches(scope):
        return health.handle(scope, receive, send)
    if git_server.matches(scope):
        return git_app(scope, receive, send)
    return django_asgi(scope, receive, send)


async def lifespan(scope, receive, send):
    # The server's start-up: never serve when a start-up check fails (osfoundry/checks.py, e.g.
    # static files never collected, where every page would be a 500). uvicorn prints the
    # message and exits with status 3, which also stops its --workers supervisor.
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            if problems := start_up_problems():
                await send({"type": "lifespan.startup.failed", "message": problems})
                return
            # The engine that checks proposed apps (rooms/runtime/jsengine.py) takes ~150 ms to
            # start: pay that now, in a thread of its own, not in the first proposal.
            warm_in_background()
            # With Redis, hear other workers' wake-ups from the start: until then this process
            # trusts no remembered token check (osfoundry.trust).
            wakeups.ensure_started()
            # SIGTERM answers parked long-polls at once instead of cutting them.
            shutdown.watch_signals()
            start_mailer()  # proposal emails, batched, outside every request
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            await send({"type": "lifespan.shutdown.complete"})
            return


# Thousands of parked long-polls are long-lived objects. With the default thresholds a full
# collection walks all of them every few seconds: a pause of about a second at 20,000 parked
# (bench/longpoll.py). What exists after start-up never dies: freeze it; and let the young
# generations collect cycles often enough while the old one is walked rarely.
gc.freeze()
gc.set_threshold(10_000, 10, 100)

websocket = WebsocketGuard(
    AuthMiddlewareStack(URLRouter(websocket_urlpatterns + messages_websockets))
)


@inspect.markcoroutinefunction  # what servers look for in an ASGI 3 application
def application(scope, receive, send):
    # Channels' ProtocolTypeRouter, without its frame around every HTTP request.
    kind = scope["type"]
    if kind == "http":
        return http(scope, receive, send)
    if kind == "websocket":
        return websocket(scope, receive, send)
    if kind == "lifespan":
        return lifespan(scope, receive, send)
    raise ValueError(f"No application for scope type {kind!r}")
