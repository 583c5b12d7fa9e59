"""What an MCP tool is. Apps declare their tools (rooms/tools.py, agents/tools.py) with this;
the protocol module (osfoundry/mcp/protocol.py) lists and dispatches them and knows nothing else.
"""

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from pydantic import BaseModel

from osfoundry.auth import Principal


@dataclass
class CallContext:
    """Per-call facts the protocol gives a tool.

    `is_disconnected()` turns true when the client went away while the call was parked.
    `after_response(fn)` runs `fn` only once the whole response was written to the client: a
    long-poll advances a stored cursor there, so a response that was never delivered never
    moves it.
    """

    principal: Principal
    is_disconnected: Callable[[], bool] = lambda: False
    _after_response: list[Callable[[], Awaitable[None] | None]] = field(default_factory=list)

    def after_response(self, fn: Callable[[], Awaitable[None] | None]) -> None:
        self._after_response.append(fn)


@dataclass(frozen=True)
class Tool:
    name: str
    description: str
    arguments: type[BaseModel]  # extra="forbid"; validates every call
    input_schema: dict  # published in tools/list exactly as given
    scope: str  # osfoundry:read or osfoundry:write
    annotations: dict
    # Sync handlers run in a worker thread (short database work); async handlers run on the
    # event loop and may park (long-polls). Both return a JSON-able dict (structuredContent)
    # or raise a DomainError, which becomes a result with isError: true.
    handler: Callable[[CallContext, BaseModel], dict | Awaitable[dict]]
    is_async: bool = False
