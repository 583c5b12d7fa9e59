"""ASGI entry point.

Django serves pages and the REST API; websockets go through Channels. Long-lived requests
(the MCP endpoint, long-polls) are routed to a lean asyncio path before Django's handler, which
would hold a thread per in-flight request.
"""

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "osfoundry.settings")
django_asgi = get_asgi_application()

from channels.auth import AuthMiddlewareStack  # noqa: E402
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from channels.security.websocket import AllowedHostsOriginValidator  # noqa: E402

from osfoundry.mcp.protocol import PATH as MCP_PATH  # noqa: E402
from osfoundry.mcp.protocol import MCPApp  # noqa: E402
from rooms.routing import websocket_urlpatterns  # noqa: E402

mcp_app = MCPApp()


async def http(scope, receive, send):
    # The MCP endpoint never enters Django's handler: see osfoundry/mcp/protocol.py.
    if scope["path"] in (MCP_PATH, MCP_PATH + "/"):
        await mcp_app(scope, receive, send)
    else:
        await django_asgi(scope, receive, send)


application = ProtocolTypeRouter(
    {
        "http": http,
        "websocket": AllowedHostsOriginValidator(
            AuthMiddlewareStack(URLRouter(websocket_urlpatterns))
        ),
    }
)
