"""Plain ASGI HTTP, for the routes served before Django (the MCP endpoint, the REST long-poll):
what a request says, whether its Host and Origin are ours, the bearer challenge, and JSON out.

Django's middleware does the Host check and builds responses for every other route; these
routes skip Django's handler (a parked request would hold a thread there), so they get the same
rules from here.
"""

import json

from django.conf import settings
from django.http.request import split_domain_port, validate_host

from .auth import InsufficientScope
from .errors import DomainError


class Request:
    """The facts about one ASGI HTTP request these routes need."""

    __slots__ = ("scope", "headers")

    def __init__(self, scope):
        self.scope = scope
        self.headers: dict[str, str] = {}
        for raw_name, raw_value in scope.get("headers", []):
            self.headers[raw_name.decode("latin-1").lower()] = raw_value.decode("latin-1")

    @property
    def host(self) -> str:
        return self.headers.get("host", "")

    @property
    def scheme(self) -> str:
        if settings.BEHIND_TLS_PROXY:
            forwarded = self.headers.get("x-forwarded-proto", "").split(",")[0].strip()
            if forwarded in ("http", "https"):
                return forwarded
        return self.scope.get("scheme", "http")

    @property
    def origin(self) -> str:
        """This service's public origin: PUBLIC_ORIGIN, else what the request was sent to."""
        return settings.PUBLIC_ORIGIN or f"{self.scheme}://{self.host}"

    @property
    def client_key(self) -> str:
        client = self.scope.get("client") or ("unknown", 0)
        return f"ip:{client[0]}"


def allowed_hosts() -> list[str]:
    hosts = list(settings.ALLOWED_HOSTS)
    if settings.DEBUG and not hosts:
        hosts = [".localhost", "127.0.0.1", "[::1]"]
    return hosts


def is_allowed_host(host: str) -> bool:
    domain, _port = split_domain_port(host)
    return bool(domain) and validate_host(domain, allowed_hosts())


def host_problem(request: Request) -> str | None:
    """Why the request's Host is not ours (DNS rebinding), or None: Django's rule, ALLOWED_HOSTS."""
    if not is_allowed_host(request.host):
        return "Forbidden: unknown Host header"
    return None


def origin_problem(request: Request) -> str | None:
    """Why a browser's Origin may not call us, or None. Allowed: this service (PUBLIC_ORIGIN,
    the Host, or an allowed host); a request without Origin is not a browser's cross-site one."""
    origin = request.headers.get("origin")
    if origin is None:
        return None
    origin = origin.rstrip("/")
    scheme, _, rest = origin.partition("://")
    allowed = (
        scheme in ("http", "https")
        and bool(rest)
        and (origin == settings.PUBLIC_ORIGIN or rest == request.host or is_allowed_host(rest))
    )
    return None if allowed else f"Forbidden: Origin {origin!r} is not allowed"


def www_authenticate(
    *,
    error: str,
    scope: str | None = None,
    description: str | None = None,
    resource_metadata: str | None = None,
) -> str:
    """A Bearer challenge (RFC 6750; resource_metadata from RFC 9728, as MCP asks)."""
    parts = []
    if resource_metadata:
        parts.append(f'resource_metadata="{resource_metadata}"')
    parts.append(f'error="{error}"')
    if description:
        parts.append(f'error_description="{description}"')
    if scope:
        parts.append(f'scope="{scope}"')
    return "Bearer " + ", ".join(parts)


def challenge_for(error: DomainError) -> str | None:
    """The WWW-Authenticate value an auth error answers with (None for any other error)."""
    if isinstance(error, InsufficientScope):
        return www_authenticate(error="insufficient_scope", scope=error.scope)
    if error.http_status == 401:
        return www_authenticate(error="invalid_token")
    return None


def dumps(data) -> bytes:
    return json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode()


async def send_json(send, status: int, data: dict | None, headers: list | None = None) -> None:
    """The whole response in two sends: status and headers, then the JSON body (none for
    data=None, e.g. 202)."""
    body = b"" if data is None else dumps(data)
    out = [(b"content-length", str(len(body)).encode())]
    if data is not None:
        out.append((b"content-type", b"application/json"))
    out.extend(headers or [])
    await send({"type": "http.response.start", "status": status, "headers": out})
    await send({"type": "http.response.body", "body": body, "more_body": False})
