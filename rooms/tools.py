"""Room tools for MCP clients. Each calls the same service as the REST API (rooms/api.py).

Every published byte is model context (SPEC §6: all 15 tools within 8,800 B), so descriptions say
what a model needs to call the tool right, and what is out of reach, and nothing more.
"""

import asyncio
from collections.abc import Callable, Sequence
from typing import Any

from django.conf import settings
from django.urls import reverse

from osfoundry import wakeups
from osfoundry.auth import READ, WRITE
from osfoundry.dbthreads import run_sync
from osfoundry.mcp.tooling import CallContext, TaskState, TaskStore, Tool

from . import access, events, services
from .git import repositories
from .live import remembered_rooms
from .review import revisions, tasks
from .runtime import libraries
from .runtime.rules import ENTRY
from .schemas import (
    AppArgs,
    NoArgs,
    PollArgs,
    ProposalArgs,
    RepoArgs,
    ReviseArgs,
    RoomAppsArgs,
    RoomArgs,
    SnippetArgs,
    UpdateArgs,
)

READ_ONLY = {"readOnlyHint": True, "openWorldHint": False}
PROPOSES = {"readOnlyHint": False, "destructiveHint": True, "openWorldHint": False}
# How to wait for the owner, for each kind of client: the propose tools say it in a sentence
# (every byte of tools/list is context), the result of a client without tasks in full.
WAITING = " A Tasks client's task ends at the decision."
# What to do after proposing, in this interface's terms, for a client that did not declare the
# Tasks extension (one that did gets a task the decision completes: rooms/review/tasks.py).
WAIT_FOR_APPROVAL = (
    "The proposal is pending: nothing is in the Room until its owner approves it. Cheapest way "
    "to wait: end your turn and ask the owner to review it at review_url (or under "
    '"Connected → Needs your approval"), then call read_room_proposal once; if the owner '
    "requested changes, answer with revise_room_proposal. Only if you have other work, "
    "long-poll poll_resource_events on the Room for proposal.approved/declined/"
    "changes_requested, or poll read_room_proposal with capped backoff (10 s doubling to 5 min). "
    "A client that declares the MCP Tasks extension (io.modelcontextprotocol/tasks) gets a task "
    "instead, which the owner's decision completes: no turn is spent waiting."
)


def list_rooms(ctx: CallContext, args: NoArgs) -> dict:
    return {"rooms": access.list_rooms(ctx.principal.user)}


def read_room(ctx: CallContext, args: RoomArgs) -> dict:
    generation = remembered_rooms.memory.generation
    room = access.get_room_for_user(ctx.principal.user, args.room_id, agent=True)
    return remembered_rooms.read_and_remember(room, generation)


def read_room_from_memory(ctx: CallContext, args: RoomArgs) -> dict | None:
    return remembered_rooms.known_room(ctx.principal.user, args.room_id)


def list_room_apps(ctx: CallContext, args: RoomAppsArgs) -> dict:
    user = ctx.principal.user
    return {"apps": access.list_room_apps(user, args.room_id, limit=args.limit, agent=True)}


def read_room_app_status(ctx: CallContext, args: AppArgs) -> dict:
    user = ctx.principal.user
    app = access.get_app_for_user(user, args.room_id, args.instance_id, agent=True)
    return services.app_status(app)


def list_room_repositories(ctx: CallContext, args: RoomArgs) -> dict:
    user = ctx.principal.user
    return {
        "repositories": repositories.list_room_repositories(user, args.room_id, origin=ctx.origin)
    }


def proposal_result(ctx: CallContext, result: services.ProposalResult) -> dict:
    data = result.as_dict()
    data["review_url"] = ctx.origin + result.proposal.get_absolute_url()
    if result.proposal.is_pending:
        data["next_step"] = WAIT_FOR_APPROVAL
    return data


Proposes = Callable[[CallContext, Any], services.ProposalResult]


def answers_result(propose: Proposes) -> Callable[[CallContext, Any], dict]:
    """The tool's handler for a client without the Tasks extension: today's result."""

    def handler(ctx: CallContext, args) -> dict:
        return proposal_result(ctx, propose(ctx, args))

    return handler


def answers_task(propose: Proposes) -> Callable[[CallContext, Any], TaskState]:
    """The tool's handler for a client that declared the Tasks extension: the proposal's task,
    stored with it; the owner's decision completes it (rooms/review/tasks.py)."""

    def handler(ctx: CallContext, args) -> TaskState:
        result = propose(ctx, args)
        return tasks.task_for(ctx.principal, result.proposal, origin=ctx.origin)

    return handler


def propose_room_snippet_app(ctx: CallContext, args: SnippetArgs) -> services.ProposalResult:
    return services.propose_snippet(
        caller=ctx.principal.user,
        room_id=args.room_id,
        name=args.name,
        files=args.files,
        idempotency_key=args.idempotency_key,
    )


def propose_room_repo_app(ctx: CallContext, args: RepoArgs) -> services.ProposalResult:
    return services.propose_repo_version(
        caller=ctx.principal.user,
        room_id=args.room_id,
        name=args.name,
        repository_id=args.repository_id,
        version_id=args.version_id,
        idempotency_key=args.idempotency_key,
    )


def propose_room_app_update(ctx: CallContext, args: UpdateArgs) -> services.ProposalResult:
    return revisions.propose_update(
        caller=ctx.principal.user,
        room_id=args.room_id,
        instance_id=args.instance_id,
        name=args.name,
        files=args.files,
        idempotency_key=args.idempotency_key,
    )


def revise_room_proposal(ctx: CallContext, args: ReviseArgs) -> services.ProposalResult:
    return revisions.revise_proposal(
        caller=ctx.principal.user,
        proposal_id=args.proposal_id,
        name=args.name,
        files=args.files,
        idempotency_key=args.idempotency_key,
    )


def read_room_proposal(ctx: CallContext, args: ProposalArgs) -> dict:
    data = revisions.read_proposal(ctx.principal.user, args.proposal_id)
    data["review_url"] = ctx.origin + reverse("rooms:proposal", args=[data["proposal_id"]])
    return data


async def poll_resource_events(ctx: CallContext, args: PollArgs) -> dict:
    user = ctx.principal.user
    room = await run_sync(access.get_room_for_user, user, args.resource_id, agent=True)
    loop = asyncio.get_running_loop()
    deadline = loop.time() + args.timeout_s
    # Register before the first read: an event committed in between still wakes us.
    waiter = wakeups.registry.register([events.room_key(room.pk)])
    try:
        page = await run_sync(
            events.room_events_after,
            user,
            room.pk,
            after_sequence=args.after_sequence,
            limit=args.limit,
            agent=True,
        )
        while not page["events"]:
            remaining = deadline - loop.time()
            if remaining <= 0 or not await waiter.wait(remaining):
                break
            # Whatever woke us (an event, a member removed, a user deactivated), read as who
            # the caller is now.
            page = await run_sync(events_for_caller_now, ctx, room.pk, args)
        return page
    finally:
        wakeups.registry.unregister(waiter)


def events_for_caller_now(ctx: CallContext, room_id, args: PollArgs) -> dict:
    user = ctx.principal_again(READ).user
    return events.room_events_after(
        user, room_id, after_sequence=args.after_sequence, limit=args.limit, agent=True
    )


def snippet_description(*, has_registry: bool) -> str:
    """SPEC §3's text, then what an app may import (issue 33: the curated set, and with an npm
    registry configured the dependencies its package.json names) and how it asks for Tailwind:
    the sentence that spares agents a failed proposal."""
    imports = ["relative paths", "react", "react-dom", *libraries.package_imports()]
    if has_registry:
        imports.append("package.json dependencies")
    return (
        "Prepare a Room snippet with source files. It appears in the cloud Room launcher only "
        "after its owner reviews and approves the full code in osFoundry. The Room runs "
        f"{ENTRY}'s default export; imports: {', '.join(imports)}; "
        'Tailwind: @import "tailwindcss" in CSS.' + WAITING
    )


TOOLS = [
    Tool(
        name="list_rooms",
        description=(
            "The Rooms you can reach (room_id). Local Rooms are unavailable (available: false)."
        ),
        arguments=NoArgs,
        scope=READ,
        annotations=READ_ONLY,
        handler=list_rooms,
    ),
    Tool(
        name="read_room",
        description="One Room: name, kind, project, owner. Local Rooms are unavailable.",
        arguments=RoomArgs,
        scope=READ,
        annotations=READ_ONLY,
        handler=read_room,
        from_memory=read_room_from_memory,
    ),
    Tool(
        name="list_room_apps",
        description=(
            "A Room's approved apps in tab order, with build state; no pending "
            "proposals or app data. Local Rooms are unavailable."
        ),
        arguments=RoomAppsArgs,
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
        scope=READ,
        annotations=READ_ONLY,
        handler=read_room_app_status,
    ),
    Tool(
        name="list_room_repositories",
        description=(
            "The Room's project repositories: clone_url, latest versions (version_id). A git "
            "push (token as password) creates one and pins each tip."
        ),
        arguments=RoomArgs,
        scope=READ,
        annotations=READ_ONLY,
        handler=list_room_repositories,
    ),
    Tool(
        name="propose_room_snippet_app",
        description=snippet_description(has_registry=bool(settings.NPM_REGISTRY_URL)),
        arguments=SnippetArgs,
        scope=WRITE,
        annotations=PROPOSES,
        handler=answers_result(propose_room_snippet_app),
        task_handler=answers_task(propose_room_snippet_app),
    ),
    Tool(
        name="propose_room_repo_app",
        description=(
            "Propose a pinned version of a repository of the Room's project as a Room app, for "
            "large apps; it appears once the owner approves. Local Rooms are unavailable." + WAITING
        ),
        arguments=RepoArgs,
        scope=WRITE,
        annotations=PROPOSES,
        handler=answers_result(propose_room_repo_app),
        task_handler=answers_task(propose_room_repo_app),
    ),
    Tool(
        name="propose_room_app_update",
        description=(
            "New files for an approved snippet app (instance_id from list_room_apps). The "
            "owner reviews the diff; approval replaces the app in place." + WAITING
        ),
        arguments=UpdateArgs,
        scope=WRITE,
        annotations=PROPOSES,
        handler=answers_result(propose_room_app_update),
        task_handler=answers_task(propose_room_app_update),
    ),
    Tool(
        name="revise_room_proposal",
        description=(
            "Answer the owner's review with a new revision of your proposal (all files); it "
            "replaces the earlier one on its card." + WAITING
        ),
        arguments=ReviseArgs,
        scope=WRITE,
        annotations=PROPOSES,
        handler=answers_result(revise_room_proposal),
        task_handler=answers_task(revise_room_proposal),
    ),
    Tool(
        name="read_room_proposal",
        description=(
            "Your proposal's review: status, decision, line comments (outdated or not), revisions."
        ),
        arguments=ProposalArgs,
        scope=READ,
        annotations=READ_ONLY,
        handler=read_room_proposal,
    ),
    Tool(
        name="poll_resource_events",
        description=(
            "A Room's events after after_sequence, as soon as one exists, or [] after "
            "timeout_s; then pass next_after_sequence. "
            "Local Rooms are unavailable."
        ),
        arguments=PollArgs,
        scope=READ,
        annotations=READ_ONLY,
        handler=poll_resource_events,
        is_async=True,
    ),
]


def read_tasks(ctx: CallContext, task_ids: Sequence[str]) -> dict[str, TaskState]:
    return tasks.read_tasks(ctx.principal, task_ids, origin=ctx.origin)


def cancel_task(ctx: CallContext, task_id: str) -> TaskState:
    return tasks.cancel_task(ctx.principal, task_id, origin=ctx.origin)


def list_tasks(ctx: CallContext, start: int, limit: int) -> tuple[list[TaskState], bool]:
    return tasks.list_tasks(ctx.principal, start, limit, origin=ctx.origin)


TASKS = TaskStore(read=read_tasks, cancel=cancel_task, list_page=list_tasks)
