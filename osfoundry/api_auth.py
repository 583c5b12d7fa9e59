"""Bearer auth and the request budget for the REST API, on top of osfoundry.auth."""

from django.http import HttpRequest, JsonResponse
from ninja.security import HttpBearer

from . import ratelimit
from .auth import Principal, Unauthenticated, authenticate_bearer, bearer_from_header

# Every route under it is the REST API (osfoundry/urls.py mounts osfoundry.api there).
API_PREFIX = "/api/v1/"
# What RestRateLimitMiddleware found for the request's Authorization header (None: no valid
# token), so the token is looked up once per request.
_PRINCIPAL = "_osfoundry_bearer_principal"


class Bearer(HttpBearer):
    def __call__(self, request):
        if hasattr(request, _PRINCIPAL):
            return getattr(request, _PRINCIPAL)
        return super().__call__(request)

    def authenticate(self, request, token):
        return authenticate_bearer(token)


bearer = Bearer()


def principal_with(request, scope: str) -> Principal:
    principal = request.auth
    if not isinstance(principal, Principal):
        raise Unauthenticated("A bearer token is required")
    principal.require(scope)
    return principal


class RestRateLimitMiddleware:
    """Charges every REST request to its caller's budget (osfoundry.ratelimit), the one the MCP
    endpoint and the REST long-poll charge too: by token, or by client address without a valid
    one. Every answer carries the x-ratelimit headers; past the budget it is a 429 with
    Retry-After and the API's JSON error, and the view never runs.

    The MCP endpoint and the long-poll are served before Django (osfoundry/asgi.py) and charge
    themselves; this covers everything else under API_PREFIX.
    """

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request: HttpRequest):
        if not request.path.startswith(API_PREFIX):
            return self.get_response(request)
        principal = authenticate_bearer(bearer_from_header(request.headers.get("Authorization")))
        setattr(request, _PRINCIPAL, principal)
        # The same key the ASGI routes use (osfoundry.http.Request.client_key).
        key = principal.token_key if principal else f"ip:{client_address(request)}"
        quota = ratelimit.take_sync(key)
        if quota.exceeded:
            error = ratelimit.RateLimited(quota)
            response = JsonResponse({"error": error.as_dict()}, status=error.http_status)
        else:
            response = self.get_response(request)
        for name, value in quota.header_items():
            response[name] = value
        return response


def client_address(request: HttpRequest) -> str:
    return request.META.get("REMOTE_ADDR") or "unknown"
