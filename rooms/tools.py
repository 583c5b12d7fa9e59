"""Room tools for MCP clients. Each calls the same service as the REST API (rooms/api.py).

Every published byte is model context (SPEC §6: all tools under 7,000 B), so descriptions say
what a model needs to call the tool right, and what is out of reach, and nothing more.
"""

import asyncio
from typing import Literal

from pydantic import Field

from agents import wakeups
from osfoundry.auth import READ, WRITE
from osfoundry.mcp.tooling import CallContext, Tool, run_sync

from . import services
from .schemas import RepoProposalIn, SnippetProposalIn, Strict

READ_ONLY = {"readOnlyHint": True, "openWorldHint": False}
PROPOSES = {"readOnlyHint": False, "destructiveHint": True, "openWorldHint": False}
ROOM_ID = {"type": "string"}
LIMIT = {"type": "integer", "minimum": 1, "maximum": 50}
# MCP has no read_proposal: wait through list_room_apps or a poll_resource_events long-poll.
WAIT_FOR_APPROVAL = (
    "The proposal is pending: nothing is in the Room until its owner approves it under "
    '"Connected → Needs your approval". Cheapest way to wait: end your turn and ask the owner '
    "to approve, then call list_room_apps once. Only if you have other work, long-poll "
    "poll_resource_events on the Room for proposal.approved/declined, or poll list_room_apps "
    "with capped backoff (10 s doubling to 5 min)."
)


def schema(properties: dict, required: list[str]) -> dict:
    out: dict = {"type": "object", "properties": properties}
    if required:
        out["required"] = required
    out["additionalProperties"] = False
    return out


class NoArgs(Strict):
    pass


class RoomArgs(Strict):
    room_id: str


class RoomAppsArgs(Strict):
    room_id: str
    limit: int = Field(default=50, ge=1, le=50, strict=True)


class AppArgs(Strict):
    room_id: str
    instance_id: str


class SnippetArgs(SnippetProposalIn):
    room_id: str


class RepoArgs(RepoProposalIn):
    room_id: str


class PollArgs(Strict):
    resource_type: Literal["room"]
    resource_id: str
    after_sequence: int = Field(default=0, ge=0, strict=True)
    timeout_s: int = Field(default=30, ge=0, le=50, strict=True)
    limit: int = Field(default=50, ge=1, le=50, strict=True)


def list_rooms(ctx: CallContext, args: NoArgs) -> dict:
    return {"rooms": services.list_rooms(ctx.principal.user)}


def read_room(ctx: CallContext, args: RoomArgs) -> dict:
    room = services.get_room_for_user(ctx.principal.user, args.room_id, agent=True)
    return services.room_summary(room)


def list_room_apps(ctx: CallContext, args: RoomAppsArgs) -> dict:
    user = ctx.principal.user
    return {"apps": services.list_room_apps(user, args.room_id, limit=args.limit, agent=True)}


def read_room_app_status(ctx: CallContext, args: AppArgs) -> dict:
    user = ctx.principal.user
    app = services.get_app_for_user(user, args.room_id, args.instance_id, agent=True)
    return services.app_summary(app)


def proposal_result(result: services.ProposalResult) -> dict:
    data = services.proposal_result(result)
    if "next_step" in data:
        data["next_step"] = WAIT_FOR_APPROVAL
    return data


def propose_room_snippet_app(ctx: CallContext, args: SnippetArgs) -> dict:
    result = services.propose_snippet(
        caller=ctx.principal.user,
        room_id=args.room_id,
        name=args.name,
        files=args.files,
        idempotency_key=args.idempotency_key,
    )
    return proposal_result(result)


def propose_room_repo_app(ctx: CallContext, args: RepoArgs) -> dict:
    result = services.propose_repo_version(
        caller=ctx.principal.user,
        room_id=args.room_id,
        name=args.name,
        repository_id=args.repository_id,
        version_id=args.version_id,
        idempotency_key=args.idempotency_key,
    )
    return proposal_result(result)


async def poll_resource_events(ctx: CallContext, args: PollArgs) -> dict:
    user = ctx.principal.user
    room = await run_sync(services.get_room_for_user, user, args.resource_id, agent=True)
    loop = asyncio.get_running_loop()
    deadline = loop.time() + args.timeout_s
    # Register before the first read: an event committed in between still wakes us.
    waiter = wakeups.registry.register([wakeups.room_key(room.pk)])
    try:
        while True:
            page = await run_sync(
                services.room_events_after,
                user,
                room.pk,
                after_sequence=args.after_sequence,
                limit=args.limit,
                agent=True,
            )
            remaining = deadline - loop.time()
            if page["events"] or remaining <= 0:
                return page
            await waiter.wait(remaining)
    finally:
        wakeups.registry.unregister(waiter)


TOOLS = [
    Tool(
        name="list_rooms",
        description=(
            "List the Rooms you can reach, with room_id. Local Rooms show available: false: "
            "they are unavailable to cloud clients."
        ),
        arguments=NoArgs,
        input_schema=schema({}, []),
        scope=READ,
        annotations=READ_ONLY,
        handler=list_rooms,
    ),
    Tool(
        name="read_room",
        description="Read one Room: name, kind, project, owner. Local Rooms are unavailable.",
        arguments=RoomArgs,
        input_schema=schema({"room_id": ROOM_ID}, ["room_id"]),
        scope=READ,
        annotations=READ_ONLY,
        handler=read_room,
    ),
    Tool(
        name="list_room_apps",
        description=(
            "List a Room's approved launcher apps in tab order with their build state. "
            "Pending proposals and app data are not shown. Local Rooms are unavailable."
        ),
        arguments=RoomAppsArgs,
        input_schema=schema({"room_id": ROOM_ID, "limit": LIMIT}, ["room_id"]),
        scope=READ,
        annotations=READ_ONLY,
        handler=list_room_apps,
    ),
    Tool(
        name="read_room_app_status",
        description=(
            "The safe launcher entry and latest build state of one app. Never its config, "
            "files, logs, secrets or stored data."
        ),
        arguments=AppArgs,
        input_schema=schema(
            {"room_id": ROOM_ID, "instance_id": {"type": "string"}}, ["room_id", "instance_id"]
        ),
        scope=READ,
        annotations=READ_ONLY,
        handler=read_room_app_status,
    ),
    Tool(
        name="propose_room_snippet_app",
        description=(
            "Prepare a Room snippet with source files. It appears in the cloud Room launcher "
            "only after its owner reviews and approves the full code in osFoundry."
        ),
        arguments=SnippetArgs,
        input_schema={
            "type": "object",
            "properties": {
                "room_id": {"type": "string"},
                "name": {"type": "string", "maxLength": 200},
                "files": {"type": "object", "additionalProperties": {"type": "string"}},
                "idempotency_key": {"type": "string", "minLength": 8, "maxLength": 128},
            },
            "required": ["room_id", "name", "files", "idempotency_key"],
            "additionalProperties": False,
        },
        scope=WRITE,
        annotations=PROPOSES,
        handler=propose_room_snippet_app,
    ),
    Tool(
        name="propose_room_repo_app",
        description=(
            "Propose a pinned version of a repository in the Room's project as a Room app; for "
            "large apps. It appears only after the owner approves it. Local Rooms are unavailable."
        ),
        arguments=RepoArgs,
        input_schema=schema(
            {
                "room_id": ROOM_ID,
                "name": {"type": "string", "maxLength": 200},
                "repository_id": {"type": "string"},
                "version_id": {"type": "string"},
                "idempotency_key": {"type": "string", "minLength": 8, "maxLength": 128},
            },
            ["room_id", "name", "repository_id", "version_id", "idempotency_key"],
        ),
        scope=WRITE,
        annotations=PROPOSES,
        handler=propose_room_repo_app,
    ),
    Tool(
        name="poll_resource_events",
        description=(
            "Wait for a Room's events (proposal.approved, proposal.declined, app.deployed...) "
            "after after_sequence. Returns as soon as one exists, or [] after timeout_s "
            "(default 30); pass next_after_sequence next time. Local Rooms are unavailable."
        ),
        arguments=PollArgs,
        input_schema=schema(
            {
                "resource_type": {"type": "string", "enum": ["room"]},
                "resource_id": ROOM_ID,
                "after_sequence": {"type": "integer", "minimum": 0},
                "timeout_s": {"type": "integer", "minimum": 0, "maximum": 50},
                "limit": LIMIT,
            },
            ["resource_type", "resource_id"],
        ),
        scope=READ,
        annotations=READ_ONLY,
        handler=poll_resource_events,
        is_async=True,
    ),
]
