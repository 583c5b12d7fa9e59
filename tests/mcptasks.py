"""The Tasks extension (io.modelcontextprotocol/tasks) from the official Python client.

The `mcp` package 2.3 has no Tasks client of its own (its ROADMAP defers it), but it has what an
extension needs: a ClientExtension that advertises the extension on every 2026-07-28 request,
claims `resultType: "task"` and observes `notifications/tasks`; and typed requests
(`name_param` sets the Mcp-Name header SEP-2663 asks for on tasks/*). This module is that
extension, as small as the wire: nothing here is ours but the test's waiting.
"""

import asyncio
import contextlib
from typing import Any, Literal

import mcp_types as types
from mcp.client import Client
from mcp.client.extension import ClaimContext, ClientExtension, NotificationBinding, ResultClaim
from mcp_types._types import MCPModel
from pydantic import ConfigDict

from tests.mcpclient import TASKS, connect_client


class TaskIdParams(types.RequestParams):
    task_id: str


class GetTask(types.Request[TaskIdParams, Literal["tasks/get"]]):
    method: Literal["tasks/get"] = "tasks/get"
    name_param = "taskId"


class CancelTask(types.Request[TaskIdParams, Literal["tasks/cancel"]]):
    method: Literal["tasks/cancel"] = "tasks/cancel"
    name_param = "taskId"


class TaskFilter(MCPModel):
    task_ids: list[str]


class ListenParams(types.RequestParams):
    notifications: TaskFilter


class ListenTasks(types.Request[ListenParams, Literal["subscriptions/listen"]]):
    method: Literal["subscriptions/listen"] = "subscriptions/listen"


class Task(types.Result):
    """A task as tasks/get answers it (DetailedTask)."""

    model_config = ConfigDict(extra="allow")
    result_type: str | None = None
    task_id: str
    status: str
    status_message: str | None = None
    created_at: str
    last_updated_at: str
    ttl_ms: int | None
    poll_interval_ms: int | None = None
    result: dict | None = None


class CreatedTask(Task):
    """What a tools/call answers when it made a task (CreateTaskResult)."""

    result_type: Literal["task"] = "task"


class TaskNotice(types.NotificationParams):
    model_config = ConfigDict(extra="allow")
    task_id: str
    status: str
    status_message: str | None = None
    last_updated_at: str
    result: dict | None = None


class Acknowledged(Exception):
    pass


class TasksExtension(ClientExtension):
    """Declares the extension; `Client.call_tool` of a tool that answers a task waits for its
    notifications/tasks (on a subscriptions/listen of its own) and returns the tool's final
    result, as a host would hand it to the model."""

    identifier = TASKS

    def __init__(self) -> None:
        self.notices: asyncio.Queue[TaskNotice] = asyncio.Queue()
        self.acknowledged: asyncio.Queue[dict] = asyncio.Queue()

    def claims(self):
        return [ResultClaim(result_type="task", model=CreatedTask, resolve=self.resolve)]

    def notifications(self):
        return [
            NotificationBinding(
                method="notifications/tasks", params_type=TaskNotice, handler=self.notices.put
            )
        ]

    async def resolve(self, created: CreatedTask, ctx: ClaimContext) -> types.CallToolResult:
        async with listening(ctx.session, self, [created.task_id]):
            while True:
                notice = await self.notices.get()
                if notice.task_id == created.task_id and notice.status != "working":
                    return types.CallToolResult.model_validate(notice.result or {"content": []})

    async def on_message(self, message: Any) -> None:
        """The client's message_handler: the listen acknowledgments arrive here."""
        # The SDK hands it over parsed as core's filter, which drops the extension's taskIds:
        # it says only that the stream is open (tests read the filter raw, tests/rawlisten.py).
        if getattr(message, "method", None) == "notifications/subscriptions/acknowledged":
            await self.acknowledged.put(message.params.meta or {})


@contextlib.asynccontextmanager
async def listening(session, extension: TasksExtension, task_ids: list[str]):
    """subscriptions/listen for `task_ids`, open until the block ends; entered once the server
    acknowledged it (the acknowledgment's _meta is returned)."""
    request = ListenTasks(params=ListenParams(notifications=TaskFilter(task_ids=task_ids)))
    stream = asyncio.ensure_future(session.send_request(request, types.EmptyResult, 3600))
    try:
        acknowledged = await asyncio.wait_for(extension.acknowledged.get(), 30)
        yield acknowledged
    finally:
        stream.cancel()
        with contextlib.suppress(BaseException):
            await stream


@contextlib.asynccontextmanager
async def tasks_client(url: str, token: str, *, mode: str = "auto"):
    """The official client with the Tasks extension: (client, extension)."""
    extension = TasksExtension()
    async with connect_client(
        url, token, mode=mode, extensions=[extension], message_handler=extension.on_message
    ) as client:
        yield client, extension


async def get_task(client: Client, task_id: str) -> Task:
    return await client.session.send_request(GetTask(params=TaskIdParams(task_id=task_id)), Task)


async def cancel_task(client: Client, task_id: str) -> types.EmptyResult:
    request = CancelTask(params=TaskIdParams(task_id=task_id))
    return await client.session.send_request(request, types.EmptyResult)


async def propose_as_task(client: Client, name: str, arguments: dict) -> CreatedTask:
    """A propose call that hands back the task itself (not its final result)."""
    created = await client.session.call_tool(name, arguments, allow_claimed=True)
    assert isinstance(created, CreatedTask), created
    return created
