"""Bearer auth for the REST API, on top of osfoundry.auth."""

from ninja.security import HttpBearer

from .auth import Principal, Unauthenticated, authenticate_bearer


class Bearer(HttpBearer):
    def authenticate(self, request, token):
        return authenticate_bearer(token)


bearer = Bearer()


def principal_with(request, scope: str) -> Principal:
    principal = request.auth
    if not isinstance(principal, Principal):
        raise Unauthenticated("A bearer token is required")
    principal.require(scope)
    return principal
