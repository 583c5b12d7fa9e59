"""Revision 2026-07-28, the "modern" era: no initialize and no session. Every request carries
its revision and the client's capabilities in `params._meta`, mirrored in headers that must
agree with the body (a load balancer may route on the header while we act on the body); every
result says its `resultType`. Which era a request speaks is decided here, per request: the
same client may send both, and nothing is remembered between requests.

What the revision requires of a request, and the errors it names (-32020 header mismatch,
-32021 missing client capability, -32022 unsupported revision), are here; protocol.py
dispatches.
"""

import base64
import binascii
from dataclasses import dataclass

from osfoundry.http import Request

from .jsonrpc import (
    INVALID_PARAMS,
    MODERN_VERSIONS,
    SERVER_INFO,
    Reply,
    rpc_error,
    unsupported_version,
)

MODERN_VERSION = MODERN_VERSIONS[0]

PROTOCOL_VERSION_META = "io.modelcontextprotocol/protocolVersion"
CLIENT_CAPABILITIES_META = "io.modelcontextprotocol/clientCapabilities"
SERVER_INFO_META = "io.modelcontextprotocol/serverInfo"
SUBSCRIPTION_ID_META = "io.modelcontextprotocol/subscriptionId"
TASKS_EXTENSION = "io.modelcontextprotocol/tasks"

HEADER_MISMATCH = -32020
MISSING_REQUIRED_CLIENT_CAPABILITY = -32021

# Methods only the modern era has: without _meta they are malformed, not legacy.
MODERN_METHODS = frozenset({"server/discover", "subscriptions/listen"})
# The body field each method's Mcp-Name header mirrors (the Tasks extension adds taskId).
NAME_FIELDS = {
    "tools/call": "name",
    "prompts/get": "name",
    "resources/read": "uri",
    "tasks/get": "taskId",
    "tasks/update": "taskId",
    "tasks/cancel": "taskId",
}
BASE64_PREFIX, BASE64_SUFFIX = "=?base64?", "?="

# A tools/list page and server/discover change only with a deploy; the same for everyone.
LIST_TTL_MS = 3_600_000


@dataclass(frozen=True, slots=True)
class Modern:
    """A modern request's framing: its revision and what the client declared for it."""

    version: str
    capabilities: dict

    @property
    def has_tasks(self) -> bool:
        """The client declared the Tasks extension on this request."""
        extensions = self.capabilities.get("extensions")
        return isinstance(extensions, dict) and isinstance(extensions.get(TASKS_EXTENSION), dict)


def bad_request(request_id, code: int, message: str, data=None) -> Reply:
    return Reply(400, rpc_error(request_id, code, message, data))


def missing_tasks_capability(request_id, why: str) -> Reply:
    return bad_request(
        request_id,
        MISSING_REQUIRED_CLIENT_CAPABILITY,
        f"Missing required client capability: {why} needs the {TASKS_EXTENSION} extension "
        "in _meta's clientCapabilities.extensions",
        {"requiredCapabilities": {"extensions": {TASKS_EXTENSION: {}}}},
    )


def modern_request(request: Request, message: dict) -> Modern | None:
    """The framing of a request that speaks the modern era; None for a legacy one. Raises a
    400 Reply naming what is wrong with a modern request's _meta or headers."""
    method, request_id = message["method"], message["id"]
    params = message.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    header = request.headers.get("mcp-protocol-version")
    is_modern = (
        (isinstance(meta, dict) and PROTOCOL_VERSION_META in meta)
        or header in MODERN_VERSIONS
        or method in MODERN_METHODS
    )
    if not is_modern:
        return None
    if not isinstance(meta, dict) or any(
        key not in meta for key in (PROTOCOL_VERSION_META, CLIENT_CAPABILITIES_META)
    ):
        raise bad_request(
            request_id,
            INVALID_PARAMS,
            f"params._meta must carry {PROTOCOL_VERSION_META!r} and {CLIENT_CAPABILITIES_META!r} "
            f"(revision {MODERN_VERSION}); or start with initialize for an earlier revision",
        )
    version, capabilities = meta[PROTOCOL_VERSION_META], meta[CLIENT_CAPABILITIES_META]
    if not isinstance(version, str) or not isinstance(capabilities, dict):
        raise bad_request(
            request_id,
            INVALID_PARAMS,
            f"params._meta: {PROTOCOL_VERSION_META!r} must be a string and "
            f"{CLIENT_CAPABILITIES_META!r} an object",
        )
    check_headers(request, request_id, method, version, params if isinstance(params, dict) else {})
    if version not in MODERN_VERSIONS:
        raise unsupported_version(request_id, version)
    return Modern(version, capabilities)


def check_headers(request: Request, request_id, method: str, version: str, params: dict) -> None:
    """The headers a modern request must send, each equal to what the body says (-32020)."""
    headers = request.headers
    mismatches = []
    if headers.get("mcp-protocol-version") != version:
        mismatches.append(header_problem("MCP-Protocol-Version", headers, version))
    if headers.get("mcp-method") != method:
        mismatches.append(header_problem("Mcp-Method", headers, method))
    field = NAME_FIELDS.get(method)
    if field is not None and (value := params.get(field)) is not None:
        if decode_header(headers.get("mcp-name")) != value:
            mismatches.append(header_problem("Mcp-Name", headers, value, field=field))
    if mismatches:
        raise bad_request(request_id, HEADER_MISMATCH, "Header mismatch: " + "; ".join(mismatches))


def header_problem(name: str, headers: dict, body_value, *, field: str | None = None) -> str:
    sent = headers.get(name.lower())
    where = f"params.{field}" if field else {"Mcp-Method": "method"}.get(name, "_meta's version")
    if sent is None:
        return f"send the {name} header ({where} is {body_value!r})"
    return f"{name} header value {sent!r} does not match {where} {body_value!r}"


def decode_header(value: str | None) -> str | None:
    """An Mcp-Name value as the body would say it: `=?base64?…?=` carries UTF-8 in base64."""
    if value is None or not (value.startswith(BASE64_PREFIX) and value.endswith(BASE64_SUFFIX)):
        return value
    encoded = value[len(BASE64_PREFIX) : -len(BASE64_SUFFIX)]
    try:
        return base64.b64decode(encoded, validate=True).decode()
    except (binascii.Error, UnicodeDecodeError):
        return None  # never equal to a body value: a mismatch


def complete(result: dict) -> dict:
    """A modern result: its resultType, and who answered (every result's _meta)."""
    meta = {**result.get("_meta", {}), SERVER_INFO_META: SERVER_INFO}
    return {"resultType": "complete", **result, "_meta": meta}


def cacheable(result: dict) -> dict:
    """A result clients and shared caches may keep (tools/list, server/discover): the same
    for every caller, fresh until the next deploy could change it."""
    return {**result, "ttlMs": LIST_TTL_MS, "cacheScope": "public"}
