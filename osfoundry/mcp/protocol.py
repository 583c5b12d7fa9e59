"""The MCP endpoint: Streamable HTTP, JSON-RPC 2.0, revision 2026-07-28 beside 2025-11-25,
2025-06-18 and 2025-03-26, from the same tools, auth and limits.

A small ASGI app, routed in osfoundry/asgi.py before Django: a parked call costs a coroutine,
not a thread, and a client that goes away is noticed at once. It is stateless (no session id):
every POST carries one JSON-RPC message and gets one JSON answer, except subscriptions/listen,
whose answer is a stream (tasks.py).

This module speaks the protocol and the auth challenge only; the JSON-RPC envelope is in
jsonrpc.py, what revision 2026-07-28 requires of a request in modern.py, the Tasks extension
in tasks.py. It knows no tool: it publishes and dispatches the `TOOLS` lists of the apps
(rooms/tools.py, agents/tools.py), and the TaskStore one of them keeps (rooms/review/tasks.py).
"""

import logging
from functools import partial

from osfoundry import ratelimit
from osfoundry.auth import (
    SCOPES,
    InsufficientScope,
    Principal,
    Unauthenticated,
    authenticate_bearer,
    authenticate_remembered,
    bearer_from_header,
)
from osfoundry.dbthreads import run_sync
from osfoundry.disconnect import DisconnectWatcher
from osfoundry.hot_settings import hot
from osfoundry.http import (
    BodyTooLarge,
    ClientGone,
    Request,
    dumps,
    host_problem,
    json_content_type_problem,
    origin_problem,
    read_body,
    send_json,
    www_authenticate,
)
from osfoundry.outage import DATABASE_OUTAGE, retry_after_header, unavailable
from osfoundry.trust import known_principal

from . import tasks
from .calling import run_after_response, run_tool
from .jsonrpc import (
    ALL_VERSIONS,
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    PROTOCOL_VERSION,
    SERVER_INFO,
    SUPPORTED_VERSIONS,
    UNAUTHORIZED,
    InvalidParams,
    Reply,
    check_protocol_version,
    decode_cursor,
    encode_cursor,
    id_of,
    is_valid_id,
    parse_message,
    rpc_error,
    rpc_result,
    tool_result,
)
from .modern import TASKS_EXTENSION, Modern, cacheable, complete, modern_request
from .tooling import (
    CallContext,
    TaskStore,
    Tool,
    collect_task_store,
    collect_tools,
    describe_tool,
)

logger = logging.getLogger(__name__)

# Two doors to the same tools, one auth path. Every request to MCP_PATH needs a token, so a
# client meets the 401 at `initialize` and signs in as it connects. EXTERNAL_MCP_PATH is SPEC §6's:
# `initialize` and `tools/list` answer without one (anonymous discovery, token set-ups), and
# clients that connected without a token meet the 401 only at their first `tools/call`.
MCP_PATH = "/api/v1/mcp"
EXTERNAL_MCP_PATH = "/api/v1/external-mcp"
MCP_PATHS = (MCP_PATH, EXTERNAL_MCP_PATH)
PAGE_SIZE = 50
INSTRUCTIONS = (
    "osFoundry Rooms: propose small apps to a team's cloud Rooms; each Room's owner reviews "
    "every file and approves or declines. Start with list_rooms. Nothing you propose runs "
    "before approval. Local-only data is unavailable to cloud clients."
)
CONNECT = "Connect osFoundry to continue"


def check_origin(request: Request) -> None:
    """Refuse DNS rebinding and cross-site browser calls (osfoundry.http's rules)."""
    problem = host_problem(request) or origin_problem(request)
    if problem:
        raise Reply(403, rpc_error(None, INVALID_REQUEST, problem))


def check_content_type(request: Request) -> None:
    if problem := json_content_type_problem(request.headers.get("content-type")):
        message = f"Unsupported Media Type: {problem}"
        raise Reply(415, rpc_error(None, INVALID_REQUEST, message))


def metadata_path(path: str) -> str:
    """Where the protected-resource metadata (RFC 9728) of the endpoint at `path` is served."""
    return "/.well-known/oauth-protected-resource" + path


class MCPApp:
    """The endpoint at `path`. With `is_discovery_open`, initialize, ping and tools/list answer
    without a token and only tools/call needs one; without it, every request does."""

    def __init__(
        self,
        tools: list[Tool] | None = None,
        *,
        path: str,
        is_discovery_open: bool,
        page_size: int = PAGE_SIZE,
        task_store: TaskStore | None = None,
    ):
        self.path = path
        self.is_discovery_open = is_discovery_open
        self.tools = collect_tools() if tools is None else tools
        self.task_store = collect_task_store() if tools is None else task_store
        self.by_name = {tool.name: tool for tool in self.tools}
        self.descriptions = [describe_tool(tool) for tool in self.tools]
        self.page_size = page_size
        # tools/list answers the same pages every time: each encoded once (their JSON is most
        # of the call's work otherwise).
        self.encoded_pages: dict[tuple[int, int, bool], bytes] = {}

    async def __call__(self, scope, receive, send):
        request = Request(scope)
        watcher = ctx = None
        body = b""
        try:
            if scope["method"] != "POST":
                raise Reply(
                    405,
                    rpc_error(None, INVALID_REQUEST, "Method not allowed: send JSON-RPC by POST"),
                    [(b"allow", b"POST")],
                )
            check_origin(request)
            check_content_type(request)
            body = await read_request_body(receive)
            watcher = DisconnectWatcher(receive)
            status, answer, headers, ctx = await self.handle(request, body, watcher)
        except Reply as reply:
            status, answer, headers = reply.status, reply.body, reply.headers
        except DATABASE_OUTAGE as exc:
            error = unavailable(exc)
            status, headers = error.http_status, [retry_after_header()]
            data = {"error": error.as_dict()}
            answer = rpc_error(id_of(body), INTERNAL_ERROR, error.message, data)
        if isinstance(answer, tasks.Stream):
            # subscriptions/listen: the answer is written as it happens, until either side ends it.
            await answer.run(send, headers)
            return
        try:
            if watcher is not None and watcher.disconnected:
                return  # nobody to answer; after_response callbacks never run
            await respond(send, status, answer, headers)
            # Checked right after the last send, before the loop runs the watcher again: a
            # server drops what it cannot write, and reports the disconnect instead.
            delivered = not (watcher is not None and watcher.disconnected)
        finally:
            if watcher is not None:
                watcher.stop()
        if ctx is not None and delivered:
            await run_after_response(ctx)

    async def handle(self, request: Request, body: bytes, watcher):
        # Behind a closed door nothing is answered without a token, not even a malformed message.
        principal = None if self.is_discovery_open else await self.authenticate(request)
        message = parse_message(body)
        request_id = message.get("id")
        check_protocol_version(request, request_id if is_valid_id(request_id) else None)
        if "method" not in message:
            return 202, None, [], None  # a response or error from the client: nothing to say
        if "id" not in message:
            return 202, None, [], None  # a notification
        method = message["method"]
        if not isinstance(method, str) or not is_valid_id(request_id):
            raise Reply(
                400,
                rpc_error(
                    None,
                    INVALID_REQUEST,
                    "Invalid request: method must be a string, id a string or integer",
                ),
            )
        params = message.get("params", {})
        if not isinstance(params, dict):
            return 200, rpc_error(request_id, INVALID_PARAMS, "params must be an object"), [], None
        modern = modern_request(request, message)
        if method == "tools/call":
            return await self.call_tool(request, request_id, params, watcher, principal, modern)
        if method in (tasks.LEGACY_METHODS if modern is None else tasks.MODERN_METHODS):
            return await self.task_method(request, request_id, method, params, modern, watcher)
        limit_headers = await charge(principal.token_key if principal else request.client_key)
        answer: dict | bytes
        status = 200
        try:
            if method == "tools/list":
                answer = self.tools_list_answer(request_id, params, modern=modern is not None)
            elif modern is not None and method == "server/discover":
                answer = rpc_result(request_id, self.discover())
            elif modern is None and method == "initialize":
                answer = rpc_result(request_id, self.initialize(params))
            elif modern is None and method == "ping":
                answer = rpc_result(request_id, {})
            else:
                # A modern server says 404 for a method it lacks: no HTTP+SSE fallback to try.
                status = 200 if modern is None else 404
                answer = rpc_error(request_id, METHOD_NOT_FOUND, f"Method not found: {method}")
        except InvalidParams as exc:
            answer = rpc_error(request_id, INVALID_PARAMS, str(exc))
        return status, answer, limit_headers, None

    async def task_method(
        self, request: Request, request_id, method: str, params: dict, modern, watcher
    ):
        """tasks/* and subscriptions/listen: a caller's tasks, so a token on both doors (checked
        against the database for a request that parks)."""
        parks = method in ("subscriptions/listen", "tasks/result")
        principal = await self.authenticate(request, request_id, remembered=not parks)
        headers = await charge(principal.token_key)
        if self.task_store is None:
            error = rpc_error(request_id, METHOD_NOT_FOUND, f"Method not found: {method}")
            return (200 if modern is None else 404), error, headers, None
        ctx = self.context(request, principal, watcher)
        try:
            answer = await tasks.answer(
                ctx, self.task_store, request_id, method, params, modern, watcher
            )
        except InsufficientScope as exc:
            raise Reply(
                403,
                rpc_error(request_id, UNAUTHORIZED, exc.message),
                headers
                + self.challenge(request, error="insufficient_scope", description=exc.message),
            ) from None
        except Unauthenticated:
            raise self.unauthorized(request, request_id, headers) from None
        return 200, answer, headers, None

    def initialize(self, params: dict) -> dict:
        offered = params.get("protocolVersion")
        capabilities: dict = {"tools": {"listChanged": False}}
        # SPEC §6's answer exactly, unless the client speaks 2025-11-25's experimental tasks
        # itself (it declared them): then it learns that tools/call may carry params.task.
        declared = params.get("capabilities")
        if self.task_store is not None and isinstance(declared, dict) and "tasks" in declared:
            capabilities["tasks"] = tasks.LEGACY_CAPABILITY
        return {
            "protocolVersion": offered if offered in SUPPORTED_VERSIONS else PROTOCOL_VERSION,
            "capabilities": capabilities,
            "serverInfo": SERVER_INFO,
            "instructions": INSTRUCTIONS,
        }

    def discover(self) -> dict:
        """server/discover (2026-07-28): what initialize told, for every request at once."""
        capabilities: dict = {"tools": {"listChanged": False}}
        if self.task_store is not None:
            capabilities["extensions"] = {TASKS_EXTENSION: {}}
        result = {
            "supportedVersions": list(ALL_VERSIONS),
            "capabilities": capabilities,
            "instructions": INSTRUCTIONS,
        }
        return cacheable(complete(result))

    def tools_page(self, start: int) -> dict:
        end = start + self.page_size
        result: dict = {"tools": self.descriptions[start:end]}
        if end < len(self.descriptions):
            result["nextCursor"] = encode_cursor(end)
        return result

    def tools_list_answer(self, request_id, params: dict, *, modern: bool = False) -> bytes:
        """The whole JSON-RPC answer, encoded: the page once per process, the id each time.
        The order is the registry's, the same every time (2026-07-28 asks for a stable one)."""
        start = decode_cursor(params.get("cursor"), len(self.descriptions))
        key = (start, self.page_size, modern)
        if (page := self.encoded_pages.get(key)) is None:
            result = self.tools_page(start)
            if modern:
                # No serverInfo here (server/discover has it): tools/list stays within SPEC
                # §6's byte budget, every byte of it model context.
                result = cacheable({"resultType": "complete", **result})
            page = self.encoded_pages[key] = dumps(result)
        encoded_id = b"%d" % request_id if isinstance(request_id, int) else dumps(request_id)
        return b'{"jsonrpc":"2.0","id":%s,"result":%s}' % (encoded_id, page)

    async def call_tool(
        self,
        request: Request,
        request_id,
        params: dict,
        watcher,
        principal: Principal | None,
        modern: Modern | None = None,
    ):
        name = params.get("name")
        tool = self.by_name.get(name) if isinstance(name, str) else None
        if tool is not None and tool.is_async:
            watcher.start()  # a call that may park ends when its client goes away
        if tool is None:
            known = ", ".join(self.by_name)
            error = rpc_error(request_id, INVALID_PARAMS, f"Unknown tool {name!r}; tools: {known}")
            return 200, error, [], None
        arguments = params.get("arguments") or {}
        if not isinstance(arguments, dict):
            error = rpc_error(request_id, INVALID_PARAMS, "arguments must be an object")
            return 200, error, [], None
        if principal is None or tool.is_async:
            # A call that parks starts from what the database says now (a remembered check
            # may predate an expiry set without a signal).
            principal = await self.authenticate(request, request_id, remembered=not tool.is_async)
        limit_headers = await charge(principal.token_key)
        ctx = self.context(request, principal, watcher)
        as_task = tasks.as_task(tool, params, modern, self.task_store)
        try:
            principal.require(tool.scope)
            result = await run_tool(tool, ctx, arguments, watcher, as_task=as_task)
            if modern is not None and "resultType" not in result:
                result = complete(result)
        except InsufficientScope as exc:
            if not principal.can_widen_scopes:
                # A personal token is a header in the client's settings: no client can widen it,
                # so the step-up challenge below would end the call in a protocol error the
                # model never reads (the official client raises it). The refusal is the tool's
                # result, as any other refusal, and says what the person can do.
                refusal = tool_result({"error": exc.as_dict()}, is_error=True)
                if modern is not None:
                    refusal = complete(refusal)
                return 200, rpc_result(request_id, refusal), limit_headers, None
            raise Reply(
                403,
                rpc_error(request_id, UNAUTHORIZED, exc.message),
                limit_headers
                + self.challenge(request, error="insufficient_scope", description=exc.message),
            ) from None
        except Unauthenticated:
            # Access ended while the call was parked (a token revoked, a user deactivated).
            raise self.unauthorized(request, request_id, limit_headers) from None
        return 200, rpc_result(request_id, result), limit_headers, ctx

    def context(self, request: Request, principal: Principal, watcher) -> CallContext:
        return CallContext(
            principal=principal,
            origin=request.origin,
            is_disconnected=watcher.is_disconnected,
            reauthenticate=partial(
                authenticate_bearer, bearer(request), resource=self.resource(request)
            ),
        )

    def resource(self, request: Request) -> str:
        """This endpoint's URI: OAuth tokens must be bound to it (RFC 8707; osfoundry/oauth.py
        says which other URIs name the same resource)."""
        return request.origin + self.path

    async def authenticate(
        self, request: Request, request_id=None, *, remembered: bool = True
    ) -> Principal:
        """The caller; else a 401, counted against the client address's budget. `remembered`:
        what this process checked and can still vouch for costs no database hop."""
        raw = bearer(request)
        resource = self.resource(request)
        principal = None
        if raw and remembered:
            principal = known_principal(raw, resource) or await run_sync(
                authenticate_remembered, raw, resource=resource
            )
        elif raw:
            principal = await run_sync(authenticate_bearer, raw, resource=resource)
        if principal is None:
            raise self.unauthorized(request, request_id, await charge(request.client_key))
        return principal

    def unauthorized(self, request: Request, request_id, headers: list) -> Reply:
        message = CONNECT + ": in Claude Code run /mcp and choose Authenticate"
        if self.is_discovery_open:
            # The client connected without a token and meets the 401 only now, in the middle
            # of a conversation (Claude Code just marks the server "needs auth"): the model
            # relays this to the person.
            message += f", or add {request.origin}{MCP_PATH} instead"
        return Reply(
            401,
            rpc_error(request_id, UNAUTHORIZED, message),
            [*headers, *self.challenge(request, error="invalid_token", description=CONNECT)],
        )

    def challenge(self, request: Request, *, error: str, description: str) -> list:
        value = www_authenticate(
            resource_metadata=request.origin + metadata_path(self.path),
            error=error,
            description=description,
            scope=" ".join(SCOPES),
        )
        return [(b"www-authenticate", value.encode())]


def bearer(request: Request) -> str | None:
    return bearer_from_header(request.headers.get("authorization"))


async def charge(key: str) -> list:
    """Count one call against `key`'s budget, shared with the REST API (osfoundry.ratelimit);
    the rate-limit headers, or a 429 past it."""
    quota = await ratelimit.take(key)
    if quota.exceeded:
        raise Reply(429, rpc_error(None, INVALID_REQUEST, quota.message), quota.headers())
    return quota.headers()


async def read_request_body(receive) -> bytes:
    # The same cap as Django's (DATA_UPLOAD_MAX_MEMORY_SIZE): beyond it the request is refused.
    limit = hot.DATA_UPLOAD_MAX_MEMORY_SIZE
    try:
        return await read_body(receive, limit=limit)
    except ClientGone:
        raise Reply(400) from None
    except BodyTooLarge:
        message = (
            f"Request body over {limit} bytes; propose a large app as a pinned repository "
            "version, not as a snippet"
        )
        raise Reply(413, rpc_error(None, INVALID_REQUEST, message)) from None


async def respond(send, status: int, answer: dict | bytes | None, headers: list) -> None:
    # Answers given before a budget was charged (405, 403...) still announce the limit. A
    # charged call's headers start with it (Quota.headers).
    charged = headers and headers[0][0] == b"x-ratelimit-limit"
    if not charged and not any(name == b"x-ratelimit-limit" for name, _ in headers):
        headers = [*headers, ratelimit.limit_header()]
    await send_json(send, status, answer, headers)
