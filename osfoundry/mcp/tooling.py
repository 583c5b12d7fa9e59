"""What an MCP tool is. Apps declare their tools (rooms/tools.py, agents/tools.py) with this;
the protocol module (osfoundry/mcp/protocol.py) lists and dispatches them and knows nothing else.
"""

import importlib
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from pydantic import BaseModel

from osfoundry.auth import Principal, Unauthenticated


@dataclass
class CallContext:
    """Per-call facts the protocol gives a tool.

    `is_disconnected()` turns true when the client went away while the call was parked.
    `after_response(fn)` runs `fn` only once the whole response was written to the client: a
    long-poll advances a stored cursor there, so a response that was never delivered never
    moves it.
    """

    principal: Principal
    # The call's token checked again (None: no longer valid); blocking, for a database thread.
    reauthenticate: Callable[[], Principal | None]
    is_disconnected: Callable[[], bool] = lambda: False
    # This service's public origin (PUBLIC_ORIGIN, else where the request was sent): tools
    # build absolute links for the agent's person with it.
    origin: str = ""
    _after_response: list[Callable[[], Awaitable[None] | None]] = field(default_factory=list)

    def after_response(self, fn: Callable[[], Awaitable[None] | None]) -> None:
        self._after_response.append(fn)

    def principal_again(self, scope: str) -> Principal:
        """The caller, checked again now: a call that parked may outlive its access (a token
        revoked, a user deactivated). Raises Unauthenticated or InsufficientScope, which the
        protocol answers with its challenge. Blocking: call from a database thread."""
        principal = self.reauthenticate()
        if principal is None:
            raise Unauthenticated("This token is no longer valid; connect again")
        principal.require(scope)
        return principal


TERMINAL = ("completed", "failed", "cancelled")


@dataclass(frozen=True, slots=True)
class TaskState:
    """A task as its caller may read it (the Tasks extension, io.modelcontextprotocol/tasks):
    `detail` is what tasks/get answers, in the extension's words (taskId, status, statusMessage,
    createdAt, lastUpdatedAt, ttlMs, pollIntervalMs; `result` once completed), and `key` the
    wake-up key (osfoundry.wakeups) its changes are announced under."""

    detail: dict
    key: str

    @property
    def task_id(self) -> str:
        return self.detail["taskId"]

    @property
    def status(self) -> str:
        return self.detail["status"]

    @property
    def is_terminal(self) -> bool:
        return self.status in TERMINAL

    def created(self) -> dict:
        """The task as a tools/call that created it answers: the Task, without its result."""
        return {k: v for k, v in self.detail.items() if k not in ("result", "error")}


@dataclass(frozen=True)
class TaskStore:
    """Where an app keeps the tasks its tools answer with (its module's TASKS): the protocol
    reads, cancels and watches them and knows nothing else. Both run in a database thread and
    see only the caller's own tasks: `read` leaves out ids that are not theirs (or gone),
    `cancel` raises NotFound for them and Conflict when the task can no longer be cancelled."""

    read: Callable[["CallContext", Sequence[str]], dict[str, TaskState]]
    cancel: Callable[["CallContext", str], TaskState]
    # Every task of the caller, newest first (2025-11-25's tasks/list): (tasks, has_more).
    list_page: Callable[["CallContext", int, int], tuple[list[TaskState], bool]]


@dataclass(frozen=True)
class Tool:
    name: str
    description: str
    arguments: type[BaseModel]  # extra="forbid"; validates every call; its schema is published
    scope: str  # osfoundry:read or osfoundry:write
    annotations: dict
    # Sync handlers run in a database thread (short work); async handlers run on the event
    # loop and may park (long-polls). Both return a JSON-able dict (structuredContent) or raise
    # a DomainError, which becomes a result with isError: true.
    handler: Callable[[CallContext, Any], dict | Awaitable[dict]]
    is_async: bool = False
    # A quick answer on the event loop from what this process remembers (osfoundry.memory),
    # or None to run `handler`: a read that every call repeats costs no database hop.
    from_memory: Callable[[CallContext, Any], dict | None] | None = None
    # For a client that declared the Tasks extension: a sync handler that does the tool's work
    # and answers the task that follows it (stored before it returns), instead of `handler`.
    task_handler: Callable[[CallContext, Any], TaskState] | None = None

    @property
    def input_schema(self) -> dict:
        return published_schema(self.arguments)

    def parse_arguments(self, arguments: dict) -> BaseModel:
        """The call's arguments, validated; raises pydantic's ValidationError.

        Strict: a JSON call must match the published schema ("5" is not an integer), while
        the same models parse REST query strings leniently."""
        return self.arguments.model_validate(arguments, strict=True)


# The order keys are published in: the type first, then its constraints, as SPEC §3 writes them.
SCHEMA_KEYS = (
    "type",
    "enum",
    "pattern",
    "minLength",
    "maxLength",
    "minimum",
    "maximum",
    "properties",
    "required",
    "additionalProperties",
)


def published_schema(model: type[BaseModel]) -> dict:
    """The inputSchema tools/list publishes for `model`: pydantic's own schema, trimmed to what a
    model needs to call the tool right. Every published byte is context: no titles or defaults,
    `X | None` published as X (null is never needed: leave the argument out), no empty
    `required`, and the keys in one stable order."""
    return trim_schema(model.model_json_schema())


def trim_schema(node: dict) -> dict:
    branches = [b for b in node.get("anyOf", ()) if b.get("type") != "null"]
    if len(branches) == 1:
        node = {**node, **branches[0]}
    if "const" in node:
        node = {**node, "enum": [node["const"]]}
    out = {}
    for key in SCHEMA_KEYS:
        value = node.get(key)
        if value is None or (key == "required" and not value):
            continue
        if key == "properties":
            value = {name: trim_schema(field) for name, field in value.items()}
        elif key == "additionalProperties" and isinstance(value, dict):
            value = trim_schema(value)
        out[key] = value
    return out


def collect_tools(modules: Iterable[str] | None = None) -> list[Tool]:
    """Every app's TOOLS, in order; an app that is not installed simply adds none."""
    tools: list[Tool] = []
    for name in settings.MCP_TOOL_MODULES if modules is None else modules:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name != name:
                raise  # the module exists but is broken: fail loudly
            continue
        tools.extend(module.TOOLS)
    names = [tool.name for tool in tools]
    duplicates = {name for name in names if names.count(name) > 1}
    if duplicates:
        raise RuntimeError(f"MCP tools defined twice: {', '.join(sorted(duplicates))}")
    return tools


def collect_task_store(modules: Iterable[str] | None = None) -> TaskStore | None:
    """The one TaskStore an app declares (TASKS beside its TOOLS), or None."""
    stores = []
    for name in settings.MCP_TOOL_MODULES if modules is None else modules:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name != name:
                raise
            continue
        if (store := getattr(module, "TASKS", None)) is not None:
            stores.append(store)
    if len(stores) > 1:
        raise RuntimeError("MCP tasks are kept by more than one module: task ids would collide")
    return stores[0] if stores else None


def describe_tool(tool: Tool) -> dict:
    return {
        "name": tool.name,
        "description": tool.description,
        "inputSchema": tool.input_schema,
        "annotations": tool.annotations,
        "securitySchemes": [{"type": "oauth2", "scopes": [tool.scope]}],
    }
