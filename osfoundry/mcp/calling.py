"""Running one tool call: its arguments validated, its handler run where it belongs (a database
thread, or the event loop for one that parks), and what it raised mapped to a tool result with
isError, or left to the protocol when the answer is HTTP's (a challenge, a 503)."""

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import cast

from pydantic import ValidationError

from osfoundry.auth import InsufficientScope, Unauthenticated
from osfoundry.dbthreads import run_sync
from osfoundry.errors import DomainError, describe_validation_error
from osfoundry.outage import DATABASE_OUTAGE

from . import tasks
from .jsonrpc import tool_result
from .tooling import CallContext, TaskState, Tool

# The endpoint logs under one name, whichever of its modules logs.
logger = logging.getLogger("osfoundry.mcp.protocol")


async def run_tool(
    tool: Tool, ctx: CallContext, arguments: dict, watcher, *, as_task: str | None = None
) -> dict:
    """The call's result; with `as_task` ("modern" or "legacy", tasks.as_task), the task
    its task_handler stored, as that revision's CreateTaskResult (a refusal stays a tool
    result with isError: nothing was stored, no task follows)."""
    try:
        args = tool.parse_arguments(arguments)
    except ValidationError as exc:
        allowed = list(tool.arguments.model_fields)
        error = describe_validation_error(exc, allowed=allowed)
        return tool_result({"error": error.as_dict()}, is_error=True)
    if as_task is None and tool.from_memory is not None:
        if (data := tool.from_memory(ctx, args)) is not None:
            return tool_result(data)
    try:
        if as_task is not None:
            handler = cast(Callable[..., TaskState], tool.task_handler)
            return tasks.created_result(await run_sync(handler, ctx, args), as_task)
        if tool.is_async:
            # A parked call ends as soon as its client goes away.
            task = asyncio.ensure_future(cast(Awaitable[dict], tool.handler(ctx, args)))
            watcher.on_disconnect(task.cancel)
            data = await task
        else:
            data = await run_sync(cast(Callable[..., dict], tool.handler), ctx, args)
    except (Unauthenticated, InsufficientScope, *DATABASE_OUTAGE):
        # An HTTP answer (a challenge, a 503 with Retry-After), not a tool result.
        raise
    except DomainError as exc:
        return tool_result({"error": exc.as_dict()}, is_error=True)
    except asyncio.CancelledError:
        if watcher.disconnected:
            return tool_result({"error": {"code": "cancelled"}}, is_error=True)
        raise
    except Exception:
        logger.exception("MCP tool %s failed", tool.name)
        return tool_result(
            {"error": {"code": "server_error", "message": "Unexpected error; it was logged"}},
            is_error=True,
        )
    return tool_result(data)


async def run_after_response(ctx: CallContext) -> None:
    for fn in ctx._after_response:
        try:
            outcome = fn()
            if asyncio.iscoroutine(outcome):
                await outcome
        except Exception:
            logger.exception("MCP after_response callback failed")
