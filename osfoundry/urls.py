from allauth.idp.oidc import views as oidc_views
from django.contrib import admin
from django.urls import include, path

from . import oauth
from .api import api
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
    # allauth's own, with a consent page whose form may reach the client's callback.
    path("identity/o/authorize", oauth.authorization),
    path("", include("allauth.idp.urls")),
    path("admin/", admin.site.urls),
    path("accounts/", include("allauth.urls")),
    path("api/v1/", api.urls),
    path("", include("rooms.urls")),
]
