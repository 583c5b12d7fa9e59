"""The JSON-RPC 2.0 envelope the MCP endpoint speaks: error codes and answers, request ids, the
pagination cursor and the MCP-Protocol-Version header. Nothing here knows a tool or a token."""

import base64

from osfoundry.http import MalformedJSON, Request, dumps, parse_json

PROTOCOL_VERSION = "2025-11-25"
# The handshake revisions whose messages we answer the same way; a client that offers one in
# initialize gets it back, any other offer gets ours.
LEGACY_VERSIONS = ("2025-11-25", "2025-06-18", "2025-03-26")
SUPPORTED_VERSIONS = LEGACY_VERSIONS
# Revisions without a handshake (osfoundry/mcp/modern.py); newest first, all of them.
MODERN_VERSIONS = ("2026-07-28",)
ALL_VERSIONS = (*MODERN_VERSIONS, *LEGACY_VERSIONS)

# Who answers: initialize's serverInfo, and every modern result's _meta.
SERVER_INFO = {"name": "osfoundry", "title": "osFoundry Rooms", "version": "0.1.0"}

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
UNAUTHORIZED = -32001
UNSUPPORTED_PROTOCOL_VERSION = -32022


class Reply(Exception):
    """An HTTP answer decided before dispatch (bad origin, auth challenge, rate limit...)."""

    def __init__(self, status: int, body: dict | None = None, headers: list | None = None):
        self.status = status
        self.body = body
        self.headers = headers or []


def rpc_result(request_id, result: dict) -> dict:
    return {"jsonrpc": "2.0", "id": request_id, "result": result}


def rpc_error(request_id, code: int, message: str, data=None) -> dict:
    error = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return {"jsonrpc": "2.0", "id": request_id, "error": error}


def tool_result(data: dict, *, is_error: bool = False) -> dict:
    return {
        "content": [{"type": "text", "text": dumps(data).decode()}],
        "structuredContent": data,
        "isError": is_error,
    }


def parse_message(body: bytes) -> dict:
    """One JSON-RPC 2.0 message, or a 400 Reply saying what is wrong with the body."""
    try:
        message = parse_json(body)
    except MalformedJSON as exc:
        raise Reply(400, rpc_error(None, PARSE_ERROR, f"Parse error: {exc}")) from None
    if isinstance(message, list):
        raise Reply(
            400,
            rpc_error(
                None,
                INVALID_REQUEST,
                "Batches are not supported: send one JSON-RPC message per POST",
            ),
        )
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
        raise Reply(
            400, rpc_error(None, INVALID_REQUEST, 'Invalid request: send {"jsonrpc": "2.0"}')
        )
    return message


def id_of(body: bytes):
    """The id of the request in `body`, for an answer given before it was dispatched (a
    database outage); None when the body holds no valid one."""
    try:
        message = parse_json(body)
    except MalformedJSON:
        return None
    request_id = message.get("id") if isinstance(message, dict) else None
    return request_id if is_valid_id(request_id) else None


class InvalidParams(Exception):
    pass


def is_valid_id(value) -> bool:
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def encode_cursor(offset: int) -> str:
    return base64.urlsafe_b64encode(f"o:{offset}".encode()).decode()


def decode_cursor(cursor, total: int) -> int:
    if cursor is None:
        return 0
    try:
        kind, _, offset = base64.urlsafe_b64decode(str(cursor).encode()).decode().partition(":")
        value = int(offset)
    except ValueError:
        raise InvalidParams("Invalid cursor: pass nextCursor from the previous page") from None
    if kind != "o" or not 0 <= value <= total:
        raise InvalidParams("Invalid cursor: pass nextCursor from the previous page")
    return value


def check_protocol_version(request: Request, request_id=None) -> None:
    """Refuse a revision we do not speak; the error carries the request's id (`request_id`,
    None when the message has none that is valid), as every error to a request does."""
    version = request.headers.get("mcp-protocol-version")
    if version is None or version in ALL_VERSIONS:
        return
    raise unsupported_version(request_id, version)


def unsupported_version(request_id, version) -> Reply:
    # -32022 with every revision we speak: a client that offered another picks from these (the
    # official clients' auto mode, seeing 2026-07-28 here, retries with it).
    return Reply(
        400,
        rpc_error(
            request_id,
            UNSUPPORTED_PROTOCOL_VERSION,
            f"Unsupported MCP-Protocol-Version {version!r}; supported: " + ", ".join(ALL_VERSIONS),
            {"supported": list(ALL_VERSIONS), "requested": version},
        ),
    )
