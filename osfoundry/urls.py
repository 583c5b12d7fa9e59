from allauth.idp.oidc import views as oidc_views
from django.contrib import admin
from django.urls import include, path, re_path

from agents import consent

from . import oauth_views
from .api import api, not_found
from .mcp import metadata
from .mcp.protocol import EXTERNAL_MCP_PATH, MCP_PATH, metadata_path

# A database outage answers 503 with Retry-After, not Django's 500 page (osfoundry/outage.py).
handler500 = "osfoundry.outage.server_error"

urlpatterns = [
    path(
        metadata_path(MCP_PATH).lstrip("/"),
        metadata.protected_resource,
        {"mcp_path": MCP_PATH},
    ),
    path(
        metadata_path(EXTERNAL_MCP_PATH).lstrip("/"),
        metadata.protected_resource,
        {"mcp_path": EXTERNAL_MCP_PATH},
        name="mcp-resource-metadata",
    ),
    # Without a path suffix: the endpoint SPEC §6 named first, as before there were two.
    path(".well-known/oauth-protected-resource", metadata.protected_resource),
    # RFC 8414 discovery beside OpenID Connect's: MCP clients look here first.
    path(".well-known/oauth-authorization-server", oidc_views.configuration),
    # Ahead of allauth's own routes for the same paths; reverse() still finds allauth's names.
    path("identity/o/authorize", consent.authorization),  # oauth_views' page + a project menu
    path("identity/o/logout", oauth_views.logout),
    path("", include("allauth.idp.urls")),
    path("admin/", admin.site.urls),
    path("accounts/", include("allauth.urls")),
    path("api/v1/", api.urls),
    re_path(r"^api/v1/", not_found),
    path("", include("agents.urls")),  # /messages/… and /connected/…
    path("", include("notifications.urls")),
    path("", include("rooms.urls")),
]
