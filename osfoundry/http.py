"""Plain ASGI HTTP, for the routes served before Django (the MCP endpoint, the REST long-poll):
what a request says, whether its Host and Origin are ours, the bearer challenge, and JSON out;
and the same Host/Origin rules for the websocket feed.

Django's middleware does the Host check and builds responses for every other route; these
routes skip Django's handler (a parked request would hold a thread there), so they get the same
rules from here.
"""

import functools
import json
import re
from urllib.parse import urlsplit

from django.http.request import split_domain_port, validate_host
from django.utils.http import parse_header_parameters

from .auth import InsufficientScope, bearer_from_header
from .errors import DomainError
from .hot_settings import hot
from .text import (
    LINE_BREAK,
    LONE_SURROGATE,
    Lines,
    describe,
    file_character_problem,
    visible,
    why_refused,
)

WEB_SCHEMES = {"http": "http", "https": "https", "ws": "http", "wss": "https"}
# Request headers, names and values together. Browsers send a few KB (big cookies included;
# each cookie is at most 4 KB); uvicorn's default parser, httptools, has no limit of its own.
MAX_HEADER_BYTES = 64 * 1024
DEFAULT_PORTS = {"http": 80, "https": 443}


class Request:
    """The facts about one ASGI HTTP request these routes need."""

    __slots__ = ("scope", "headers")

    def __init__(self, scope):
        self.scope = scope
        # ASGI servers give header names lowercased (the spec requires it).
        self.headers: dict[str, str] = {
            name.decode("latin-1"): value.decode("latin-1")
            for name, value in scope.get("headers", ())
        }

    @property
    def host(self) -> str:
        return self.headers.get("host", "")

    @property
    def scheme(self) -> str:
        """http or https, also for a websocket (ws, wss): what its page's Origin would say."""
        if hot.BEHIND_TLS_PROXY:
            forwarded = self.headers.get("x-forwarded-proto", "").split(",")[0].strip()
            if forwarded in WEB_SCHEMES:
                return WEB_SCHEMES[forwarded]
        return WEB_SCHEMES.get(self.scope.get("scheme", "http"), "http")

    @property
    def origin(self) -> str:
        """This service's public origin: PUBLIC_ORIGIN, else what the request was sent to."""
        return hot.PUBLIC_ORIGIN or f"{self.scheme}://{self.host}"

    @property
    def client_key(self) -> str:
        client = self.scope.get("client") or ("unknown", 0)
        return f"ip:{client[0]}"


def allowed_hosts() -> tuple[str, ...]:
    hosts = hot.ALLOWED_HOSTS
    if hot.DEBUG and not hosts:
        hosts = (".localhost", "127.0.0.1", "[::1]")
    return hosts


def is_allowed_host(host: str) -> bool:
    return _is_allowed_host(host, allowed_hosts())


@functools.lru_cache(maxsize=256)
def _is_allowed_host(host: str, hosts: tuple[str, ...]) -> bool:
    # Every call of the lean routes asks, with the same few Host headers.
    domain, _port = split_domain_port(host)
    return bool(domain) and validate_host(domain, hosts)


def host_problem(request: Request) -> str | None:
    """Why the request's Host is not ours (DNS rebinding), or None: Django's rule, ALLOWED_HOSTS."""
    if not is_allowed_host(request.host):
        return "Forbidden: unknown Host header"
    return None


def parse_origin(value: str) -> tuple[str, str, int] | None:
    """An http(s) origin as (scheme, host, port), the default port filled in, so that
    `http://a` and `http://a:80` compare equal; None for anything else (`null`, a path...)."""
    try:
        parts = urlsplit(value)
        port = parts.port
    except ValueError:
        return None
    if parts.scheme not in DEFAULT_PORTS or not parts.hostname or parts.username is not None:
        return None
    if parts.path not in ("", "/") or parts.query or parts.fragment:
        return None
    return parts.scheme, parts.hostname, port or DEFAULT_PORTS[parts.scheme]


def is_own_origin(request: Request, origin: str) -> bool:
    """Whether `origin` is this service's: PUBLIC_ORIGIN, or the scheme, host and port the
    request was sent to. Scheme and port count: another port of the same host is another site."""
    parsed = parse_origin(origin)
    if parsed is None:
        return False
    if hot.PUBLIC_ORIGIN and parsed == parse_origin(hot.PUBLIC_ORIGIN):
        return True
    return parsed == parse_origin(f"{request.scheme}://{request.host}")


def origin_problem(request: Request) -> str | None:
    """Why a browser's Origin may not call us, or None. A request without Origin is not a
    browser's cross-site one; check host_problem first, as "the request's own origin" trusts
    the Host."""
    origin = request.headers.get("origin")
    if origin is None or is_own_origin(request, origin):
        return None
    return f"Forbidden: Origin {origin!r} is not allowed"


def websocket_problem(request: Request) -> str | None:
    """Why a websocket may not open, or None. Its Host must be ours whatever the credentials,
    as for every HTTP route: a name that is not ours resolving to us is DNS rebinding, and a
    handshake without Host is no valid one (RFC 6455). One with a bearer token needs no Origin:
    a page cannot set Authorization on a websocket, so it is never a browser's (agents send no
    Origin). Any other rides on the session cookie, which a browser sends whatever page opens
    the socket: it must come from this service's own origin."""
    if problem := host_problem(request):
        return problem
    if bearer_from_header(request.headers.get("authorization")):
        return None
    if "origin" not in request.headers:
        return "Forbidden: without a bearer token, open the feed from this site's pages"
    return origin_problem(request)


def header_bytes(scope) -> int:
    size = 0
    for name, value in scope["headers"]:
        size += len(name) + len(value)
    return size


def headers_too_large(size: int) -> dict:
    message = (
        f"Request headers are {size} bytes, over the limit of {MAX_HEADER_BYTES}: send smaller "
        "headers (cookies, Authorization)"
    )
    return {"error": {"code": "headers_too_large", "message": message}}


async def refuse_large_headers(send, size: int) -> None:
    """431 for a request whose headers are over MAX_HEADER_BYTES (osfoundry/asgi.py asks)."""
    await send_json(send, 431, headers_too_large(size), [(b"connection", b"close")])


class WebsocketGuard:
    """ASGI middleware for websockets: refuses the handshake (403 from the server; close code
    4431 or 4403 under Channels' test communicator) when the headers are over MAX_HEADER_BYTES
    or websocket_problem says so. In place of Channels' AllowedHostsOriginValidator, which wants
    an Origin from every client and compares host names only."""

    def __init__(self, application):
        self.application = application

    async def __call__(self, scope, receive, send):
        if header_bytes(scope) > MAX_HEADER_BYTES:
            code = 4431
        elif websocket_problem(Request(scope)) is not None:
            code = 4403
        else:
            return await self.application(scope, receive, send)
        await receive()  # websocket.connect; closing before accepting refuses the handshake
        await send({"type": "websocket.close", "code": code})


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


def json_content_type_problem(content_type: str | None) -> str | None:
    """None when a Content-Type is application/json (parameters such as charset allowed), else
    what to tell the caller. text/plain, form and multipart bodies are what a cross-site HTML
    form can post without a CORS preflight: a JSON-only route refuses them."""
    try:
        media_type, _params = parse_header_parameters(content_type or "")
    except ValueError:  # longer than Django parses
        media_type = "?"
    if media_type == "application/json":
        return None
    got = repr(media_type) if media_type else "none"
    return f"send Content-Type: application/json (got {got})"


class MalformedJSON(ValueError):
    """A body that is not JSON this service can take; the message says why."""


# A \uD800-\uDFFF escape: half of a surrogate pair, or a lone one (see parse_json).
SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")


def parse_json(body: bytes, *, name: str = "body"):
    """The JSON value of `body`, or MalformedJSON: not UTF-8, not JSON, nested past the
    parser's recursion limit, or holding a lone surrogate. A lone surrogate is a valid JSON
    escape but no character: it cannot be encoded in an answer, or stored in PostgreSQL.
    Messages start with `name`, what the caller calls the text (a request body, a form field)."""
    try:
        value = json.loads(body.decode())  # strict UTF-8: json.loads(bytes) lets surrogates in
    except UnicodeDecodeError:
        raise MalformedJSON(f"{name}: not UTF-8") from None
    except RecursionError:
        raise MalformedJSON(f"{name}: JSON nested too deeply") from None
    except ValueError:
        raise MalformedJSON(f"{name}: not valid JSON") from None
    if SURROGATE_ESCAPE.search(body) and (problem := lone_surrogate_problem(value, name=name)):
        raise MalformedJSON(problem)
    return value


def lone_surrogate_problem(value, *, name: str = "body") -> str | None:
    """Where the first string of `value` (in the order it was written) holds a lone surrogate,
    and what to send instead; None if none does. A caller fixes its call in one retry only if
    told where: the string's JSON path (`params.arguments.name`) and column, or for a file's
    content (a string in an object under "files") `path:line:col` as the snippet rules say it."""
    # A loop, not recursion: the value may be nested nearly as deep as the parser allows.
    stack: list[tuple[tuple, object, bool]] = [((), value, False)]
    while stack:
        path, item, is_key = stack.pop()
        if isinstance(item, str):
            if found := LONE_SURROGATE.search(item):
                return surrogate_message(path, item, found.start(), is_key=is_key, name=name)
        elif isinstance(item, dict):
            entries = []
            for key, child in item.items():
                entries += [((*path, key), key, True), ((*path, key), child, False)]
            stack.extend(reversed(entries))
        elif isinstance(item, list):
            stack.extend(((*path, i), child, False) for i, child in reversed(list(enumerate(item))))
    return None


def json_path(path: tuple, *, name: str) -> str:
    """`params.arguments.files.src/App.tsx`, `comments[0].body`, `name` alone for the whole
    value; keys written visibly (one may hold what the message refuses). A request body's keys
    stand alone, as the REST errors name fields (`params.id`, not `body.params.id`)."""
    text = name
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else f".{visible(part)}"
    if name == "body" and path and isinstance(path[0], str):
        text = text.removeprefix("body.")
    return text


def surrogate_message(path: tuple, text: str, index: int, *, is_key: bool, name: str) -> str:
    ch = text[index]
    line, col = Lines(text).position(index)
    if not is_key and len(path) >= 2 and path[-2] == "files" and isinstance(path[-1], str):
        # A file's content: where it is in the JSON, then in the file, as the snippet rules say.
        files = json_path(path[:-1], name=name)
        return f"{files}: {file_character_problem(visible(path[-1]), line, col, ch)}"
    where = json_path(path, name=name)
    at = f"line {line}, column {col}" if line > 1 or LINE_BREAK.search(text) else f"column {col}"
    return (
        f"{where}: {'in the key, ' if is_key else ''}{at}: {describe(ch)} {why_refused(ch)}; "
        "send the whole character (a surrogate pair, such as \\ud83d\\ude00 for U+1F600) or "
        "remove it"
    )


# One encoder for every answer: json.dumps() with options builds a new one per call.
_encoder = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))


def dumps(data) -> bytes:
    return _encoder.encode(data).encode()


async def send_json(
    send, status: int, data: dict | bytes | None, headers: list | None = None
) -> None:
    """The whole response in two sends: status and headers, then the JSON body (none for
    data=None, e.g. 202; `data` already encoded as bytes is sent as it is)."""
    body = b"" if data is None else data if isinstance(data, bytes) else dumps(data)
    out = [(b"content-length", b"%d" % len(body))]
    if data is not None:
        out.append((b"content-type", b"application/json"))
    out.extend(headers or [])
    await send({"type": "http.response.start", "status": status, "headers": out})
    await send({"type": "http.response.body", "body": body, "more_body": False})


class ClientGone(Exception):
    """The client disconnected before its request body arrived."""


class BodyTooLarge(Exception):
    """The request body is over the limit; the rest of it is not read."""


async def read_body(receive, *, limit: int) -> bytes:
    """The whole request body, refused as soon as it grows past `limit` bytes."""
    chunks = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise ClientGone
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            raise BodyTooLarge
        chunks.append(chunk)
        if not message.get("more_body"):
            return b"".join(chunks)
