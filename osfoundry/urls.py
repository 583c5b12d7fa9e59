from allauth.idp.oidc import views as oidc_views
from django.contrib import admin
from django.urls import include, path, re_path

from . import oauth_views
from .api import api, not_found
from .mcp import metadata

urlpatterns = [
    path(
        ".well-known/oauth-protected-resource/api/v1/external-mcp",
        metadata.protected_resource,
        name="mcp-resource-metadata",
    ),
    path(".well-known/oauth-protected-resource", metadata.protected_resource),
    # RFC 8414 discovery beside OpenID Connect's: MCP clients look here first.
    path(".well-known/oauth-authorization-server", oidc_views.configuration),
    # Ahead of allauth's own routes for the same paths; reverse() still finds allauth's names.
    path("identity/o/authorize", oauth_views.authorization),
    path("identity/o/logout", oauth_views.logout),
    path("", include("allauth.idp.urls")),
    path("admin/", admin.site.urls),
    path("accounts/", include("allauth.urls")),
    path("api/v1/", api.urls),
    re_path(r"^api/v1/", not_found),
    path("", include("rooms.urls")),
]
