"""The Tasks extension (io.modelcontextprotocol/tasks): a tools/call answered with a task, and
tasks/get, tasks/cancel and subscriptions/listen for it; and the 2025-11-25 experimental shape
of the same (params.task on tools/call, tasks/get, tasks/result, tasks/list, tasks/cancel).

A task is the app's row (its TaskStore, rooms/review/tasks.py): this module frames what the store
says in each revision's words and parks listeners the way long-polls park (osfoundry.wakeups):
a listener is a coroutine, a Waiter and a DisconnectWatcher, woken only by its own tasks'
keys, in any worker (Redis when set).
"""

import asyncio
import dataclasses
import logging
from collections.abc import Sequence

from osfoundry import wakeups
from osfoundry.auth import READ, WRITE, InsufficientScope, Unauthenticated
from osfoundry.dbthreads import run_sync
from osfoundry.errors import Conflict, NotFound
from osfoundry.http import dumps

from .jsonrpc import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    SERVER_INFO,
    UNAUTHORIZED,
    Reply,
    decode_cursor,
    encode_cursor,
    rpc_error,
    rpc_result,
)
from .modern import (
    SERVER_INFO_META,
    SUBSCRIPTION_ID_META,
    Modern,
    complete,
    missing_tasks_capability,
)
from .tooling import TERMINAL, CallContext, TaskState, TaskStore, Tool

logger = logging.getLogger(__name__)

# 2026-07-28 (the extension; it has no tasks/list, and tasks/get replaced tasks/result) and
# 2025-11-25 (experimental, in core then).
MODERN_METHODS = frozenset({"tasks/get", "tasks/cancel", "tasks/update", "subscriptions/listen"})
LEGACY_METHODS = frozenset({"tasks/get", "tasks/cancel", "tasks/result", "tasks/list"})
# What initialize announces (2025-11-25): tools/call may carry params.task.
LEGACY_CAPABILITY: dict = {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}
RELATED_TASK_META = "io.modelcontextprotocol/related-task"
IMMEDIATE_RESPONSE_META = "io.modelcontextprotocol/model-immediate-response"
NOT_FOUND = "Failed to retrieve task: Task not found"
LIST_PAGE = 50
# Quiet listen streams send an SSE comment this often: idle timeouts of proxies and clients
# (nginx's proxy_read_timeout is 60 s by default) never see a silent connection.
KEEPALIVE_S = 25.0
MAX_TASK_IDS = 1_000


def as_task(tool: Tool, params: dict, modern: Modern | None, store: TaskStore | None) -> str | None:
    """Whether this tools/call is answered with a task: "modern" when the client declared the
    extension on the request, "legacy" when a 2025-11-25 client asked (params.task); else None,
    and the call answers what it always did."""
    if tool.task_handler is None or store is None:
        return None
    if modern is not None:
        return "modern" if modern.has_tasks else None
    return "legacy" if isinstance(params.get("task"), dict) else None


def created_result(state: TaskState, kind: str) -> dict:
    """What the tools/call answers once the task is stored (CreateTaskResult)."""
    if kind == "modern":
        return {"resultType": "task", **state.created(), "_meta": {SERVER_INFO_META: SERVER_INFO}}
    message = state.detail.get("statusMessage", "")
    return {"task": legacy_task(state), "_meta": {IMMEDIATE_RESPONSE_META: message}}


def legacy_task(state: TaskState) -> dict:
    """A task in 2025-11-25's words: ttl and pollInterval, and no result (tasks/result has it)."""
    detail = state.detail
    task = {
        "taskId": detail["taskId"],
        "status": detail["status"],
        "createdAt": detail["createdAt"],
        "lastUpdatedAt": detail["lastUpdatedAt"],
        "ttl": detail["ttlMs"],
    }
    if "statusMessage" in detail:
        task["statusMessage"] = detail["statusMessage"]
    if "pollIntervalMs" in detail:
        task["pollInterval"] = detail["pollIntervalMs"]
    return task


async def answer(ctx: CallContext, store: TaskStore, request_id, method, params, modern, watcher):
    """The answer to a tasks/* or subscriptions/listen request (a Stream for a listen), in the
    request's revision. Raises InsufficientScope and Unauthenticated for the protocol's
    challenge."""
    try:
        if method == "subscriptions/listen":
            return await open_listen(ctx, store, request_id, params, modern, watcher)
        if modern is not None and not modern.has_tasks:
            raise missing_tasks_capability(request_id, method)
        if method == "tasks/list":
            ctx.principal.require(READ)
            return rpc_result(request_id, await list_tasks(ctx, store, params))
        task_id = params.get("taskId")
        if not isinstance(task_id, str):
            return rpc_error(request_id, INVALID_PARAMS, "taskId: must be a string")
        if method == "tasks/cancel":
            # Cancelling withdraws what the task stands for: a write.
            ctx.principal.require(WRITE)
            state = await run_sync(store.cancel, ctx, task_id)
            result = complete({}) if modern else legacy_task(state)
            return rpc_result(request_id, result)
        ctx.principal.require(READ)
        state = await read_one(ctx, store, task_id)
        if method == "tasks/update":
            # Nothing here ever asks a client for input (no task is input_required).
            message = f"Task {task_id!r} is {state.status}: it asks for no input"
            return rpc_error(request_id, INVALID_PARAMS, message)
        if method == "tasks/result":
            return rpc_result(request_id, await wait_for_result(ctx, store, state, watcher))
        result = complete(state.detail) if modern else legacy_task(state)
        return rpc_result(request_id, result)
    except NotFound:
        return rpc_error(request_id, INVALID_PARAMS, NOT_FOUND)
    except Conflict as exc:
        return rpc_error(request_id, INVALID_PARAMS, exc.message, {"error": exc.as_dict()})


async def read_one(ctx: CallContext, store: TaskStore, task_id: str) -> TaskState:
    found = await run_sync(store.read, ctx, [task_id])
    if task_id not in found:
        raise NotFound(NOT_FOUND)
    return found[task_id]


async def list_tasks(ctx: CallContext, store: TaskStore, params: dict) -> dict:
    start = decode_cursor(params.get("cursor"), 10**9)
    states, has_more = await run_sync(store.list_page, ctx, start, LIST_PAGE)
    result: dict = {"tasks": [legacy_task(state) for state in states]}
    if has_more:
        result["nextCursor"] = encode_cursor(start + len(states))
    return result


async def wait_for_result(ctx: CallContext, store: TaskStore, state: TaskState, watcher) -> dict:
    """2025-11-25's tasks/result: blocks until the task ends (or its client leaves), then
    answers the tool's result, as a tasks/get of the extension inlines it."""
    watcher.start()
    waiter = wakeups.registry.register([state.key])
    watcher.on_disconnect(waiter.wake)
    try:
        # Read again once registered: a change between the first read and now still counts.
        state = await read_one(ctx, store, state.task_id)
        while not state.is_terminal:
            await waiter.wait(KEEPALIVE_S)
            if watcher.disconnected:
                return {}  # for nobody: the protocol writes no answer to a client that left
            if waiter.is_expired:
                raise Reply(503, rpc_error(None, INTERNAL_ERROR, "Server restarting: ask again"))
            found = await run_sync(read_now, ctx, store, [state.task_id])
            if state.task_id not in found:
                raise NotFound(NOT_FOUND)
            state = found[state.task_id]
    finally:
        wakeups.registry.unregister(waiter)
    result = dict(state.detail.get("result") or {})
    result.pop("resultType", None)  # 2025-11-25 has none
    if state.status == "cancelled":
        result = {"content": [], "isError": True}
    result["_meta"] = {RELATED_TASK_META: {"taskId": state.task_id}}
    return result


def read_now(ctx: CallContext, store: TaskStore, task_ids: Sequence[str]) -> dict[str, TaskState]:
    """The tasks, read as who the caller is now (blocking: a database thread): a parked
    request may outlive its token or its person's access."""
    return store.read(dataclasses.replace(ctx, principal=ctx.principal_again(READ)), task_ids)


async def open_listen(ctx, store: TaskStore, request_id, params: dict, modern, watcher) -> "Stream":
    wanted = params.get("notifications")
    wanted = wanted if isinstance(wanted, dict) else {}
    task_ids = wanted.get("taskIds") or []
    if not isinstance(task_ids, list) or not all(isinstance(i, str) for i in task_ids):
        raise Reply(
            400, rpc_error(request_id, INVALID_PARAMS, "notifications.taskIds: a list of strings")
        )
    if task_ids and not modern.has_tasks:
        raise missing_tasks_capability(request_id, "notifications.taskIds")
    ctx.principal.require(READ)
    found = await run_sync(store.read, ctx, task_ids[:MAX_TASK_IDS])
    # The acknowledgment names the subset honoured: task ids when asked for; the list-changed
    # kinds never (tools, prompts and resources do not change here), so they are left out.
    return Stream(ctx, store, request_id, found, watcher, is_for_tasks="taskIds" in wanted)


class Stream:
    """A subscriptions/listen answer: an SSE stream that acknowledges the task ids the caller
    owns, pushes notifications/tasks whenever one of them changes (first, once, for any that
    changed before the stream opened), and stays open until the client leaves, the caller's
    access ends, or the server shuts down (a graceful end: the listen request's result)."""

    def __init__(
        self, ctx: CallContext, store: TaskStore, request_id, found: dict, watcher, is_for_tasks
    ):
        self.ctx = ctx
        self.store = store
        self.request_id = request_id
        self.sent = {task_id: ("working", "") for task_id in found}
        self.keys = sorted({state.key for state in found.values()})
        self.watcher = watcher
        self.meta = {SUBSCRIPTION_ID_META: request_id}
        self.honoured = {"taskIds": list(self.sent)} if is_for_tasks else {}

    async def run(self, send, headers: list) -> None:
        watcher = self.watcher
        waiter = wakeups.registry.register(self.keys)
        watcher.start()
        watcher.on_disconnect(waiter.wake)
        start = [
            (b"content-type", b"text/event-stream"),
            (b"cache-control", b"no-store"),
            (b"x-accel-buffering", b"no"),
            *headers,
        ]
        try:
            await send({"type": "http.response.start", "status": 200, "headers": start})
            ack = {"_meta": self.meta, "notifications": self.honoured}
            await self.event(send, "notifications/subscriptions/acknowledged", ack)
            # Registered before this read: whatever changes from here on wakes the waiter.
            await self.push_changes(send, READ_FIRST)
            while not watcher.disconnected:
                woken = await waiter.wait(KEEPALIVE_S)
                if watcher.disconnected:
                    break
                if waiter.is_expired:
                    end = complete({"_meta": self.meta})
                    await self.frame(send, rpc_result(self.request_id, end))
                    break
                if woken:
                    await self.push_changes(send, READ_AGAIN)
                else:
                    await send({"type": "http.response.body", "body": b":\n\n", "more_body": True})
        except (Unauthenticated, InsufficientScope):
            error = rpc_error(
                self.request_id, UNAUTHORIZED, "This token is no longer valid; connect again"
            )
            await self.frame(send, error)
        except asyncio.CancelledError:
            raise
        except Exception:
            logger.exception("subscriptions/listen failed")
        finally:
            wakeups.registry.unregister(waiter)
            watcher.stop()
        if not watcher.disconnected:
            await send({"type": "http.response.body", "body": b"", "more_body": False})

    async def push_changes(self, send, how: str) -> None:
        if how == READ_AGAIN:
            # A task sent in a terminal status never changes again (a decision is final, a
            # revision is a task of its own): a wake-up re-reads only the ones still working,
            # so a listener on many decided tasks pays for none of them. The caller is checked
            # again all the same (read_now), even with none left working.
            live = [
                task_id for task_id, (status, _at) in self.sent.items() if status not in TERMINAL
            ]
            found = await run_sync(read_now, self.ctx, self.store, live)
        elif self.sent:
            found = await run_sync(self.store.read, self.ctx, list(self.sent))
        else:
            return
        for task_id, state in found.items():
            seen = (state.status, state.detail.get("lastUpdatedAt", ""))
            if how == READ_FIRST and state.status == "working":
                self.sent[task_id] = seen
            if self.sent.get(task_id) != seen:
                self.sent[task_id] = seen
                await self.event(send, "notifications/tasks", {"_meta": self.meta, **state.detail})

    async def event(self, send, method: str, params: dict) -> None:
        await self.frame(send, {"jsonrpc": "2.0", "method": method, "params": params})

    async def frame(self, send, message: dict) -> None:
        body = b"event: message\ndata: " + dumps(message) + b"\n\n"
        await send({"type": "http.response.body", "body": body, "more_body": True})


READ_FIRST, READ_AGAIN = "first", "again"
