"""OAuth protected-resource metadata (RFC 9728) for the MCP endpoint: where a client that got
a 401 learns which authorization server issues tokens for it and which scopes exist. Each of the
endpoint's paths has its own document, naming itself as the resource (clients check that it is
the URL they connect to)."""

from django.conf import settings
from django.http import JsonResponse
from django.views.decorators.http import require_GET

from osfoundry.auth import SCOPES

from .protocol import EXTERNAL_MCP_PATH


def public_origin(request) -> str:
    return settings.PUBLIC_ORIGIN or f"{request.scheme}://{request.get_host()}"


@require_GET
def protected_resource(request, mcp_path: str = EXTERNAL_MCP_PATH):
    origin = public_origin(request)
    response = JsonResponse(
        {
            "resource": origin + mcp_path,
            "authorization_servers": [origin],
            "scopes_supported": list(SCOPES),
            "bearer_methods_supported": ["header"],
            "resource_name": "osFoundry Rooms",
        }
    )
    # Browser-based MCP clients (the Inspector) read it cross-origin.
    response["Access-Control-Allow-Origin"] = "*"
    return response
