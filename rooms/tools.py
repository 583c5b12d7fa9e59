"""Room tools for MCP clients. Each calls the same service as the REST API (rooms/api.py).

Every published byte is model context (SPEC §6: all 15 tools within 8,800 B), so descriptions say
what a model needs to call the tool right, and what is out of reach, and nothing more.
"""

import asyncio

from django.urls import reverse

from osfoundry import wakeups
from osfoundry.auth import READ, WRITE
from osfoundry.dbthreads import run_sync
from osfoundry.mcp.tooling import CallContext, Tool

from . import access, events, known, libraries, repositories, revisions, services
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
# What to do after proposing, in this interface's terms.
WAIT_FOR_APPROVAL = (
    "The proposal is pending: nothing is in the Room until its owner approves it. Cheapest way "
    "to wait: end your turn and ask the owner to review it at review_url (or under "
    '"Connected → Needs your approval"), then call read_room_proposal once; if the owner '
    "requested changes, answer with revise_room_proposal. Only if you have other work, "
    "long-poll poll_resource_events on the Room for proposal.approved/declined/"
    "changes_requested, or poll read_room_proposal with capped backoff (10 s doubling to 5 min)."
)


def list_rooms(ctx: CallContext, args: NoArgs) -> dict:
    return {"rooms": access.list_rooms(ctx.principal.user)}


def read_room(ctx: CallContext, args: RoomArgs) -> dict:
    generation = known.memory.generation
    room = access.get_room_for_user(ctx.principal.user, args.room_id, agent=True)
    return known.read_and_remember(room, generation)


def read_room_from_memory(ctx: CallContext, args: RoomArgs) -> dict | None:
    return known.known_room(ctx.principal.user, args.room_id)


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


def propose_room_snippet_app(ctx: CallContext, args: SnippetArgs) -> dict:
    result = services.propose_snippet(
        caller=ctx.principal.user,
        room_id=args.room_id,
        name=args.name,
        files=args.files,
        idempotency_key=args.idempotency_key,
    )
    return proposal_result(ctx, result)


def propose_room_repo_app(ctx: CallContext, args: RepoArgs) -> dict:
    result = services.propose_repo_version(
        caller=ctx.principal.user,
        room_id=args.room_id,
        name=args.name,
        repository_id=args.repository_id,
        version_id=args.version_id,
        idempotency_key=args.idempotency_key,
    )
    return proposal_result(ctx, result)


def propose_room_app_update(ctx: CallContext, args: UpdateArgs) -> dict:
    result = revisions.propose_update(
        caller=ctx.principal.user,
        room_id=args.room_id,
        instance_id=args.instance_id,
        name=args.name,
        files=args.files,
        idempotency_key=args.idempotency_key,
    )
    return proposal_result(ctx, result)


def revise_room_proposal(ctx: CallContext, args: ReviseArgs) -> dict:
    result = revisions.revise_proposal(
        caller=ctx.principal.user,
        proposal_id=args.proposal_id,
        name=args.name,
        files=args.files,
        idempotency_key=args.idempotency_key,
    )
    return proposal_result(ctx, result)


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


TOOLS = [
    Tool(
        name="list_rooms",
        description=(
            "The Rooms you can reach, with room_id. Local Rooms show available: false: "
            "unavailable to cloud clients."
        ),
        arguments=NoArgs,
        scope=READ,
        annotations=READ_ONLY,
        handler=list_rooms,
    ),
    Tool(
        name="read_room",
        description="Read one Room: name, kind, project, owner. Local Rooms are unavailable.",
        arguments=RoomArgs,
        scope=READ,
        annotations=READ_ONLY,
        handler=read_room,
        from_memory=read_room_from_memory,
    ),
    Tool(
        name="list_room_apps",
        description=(
            "A Room's approved launcher apps in tab order, with build state; no pending "
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
            "The Room's project repositories: clone_url and latest versions (version_id for "
            "propose_room_repo_app). git push with a token as password; a push creates the "
            "repository and pins each branch tip."
        ),
        arguments=RoomArgs,
        scope=READ,
        annotations=READ_ONLY,
        handler=list_room_repositories,
    ),
    Tool(
        name="propose_room_snippet_app",
        description=(
            "Prepare a Room snippet with source files. It appears in the cloud Room launcher "
            "only after its owner reviews and approves the full code in osFoundry. The Room "
            "renders src/App.tsx's default export; imports: relative paths, react, react-dom, "
            + ", ".join(libraries.package_imports())
            + '; for Tailwind, @import "tailwindcss" in a CSS file.'
        ),
        arguments=SnippetArgs,
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
        scope=WRITE,
        annotations=PROPOSES,
        handler=propose_room_repo_app,
    ),
    Tool(
        name="propose_room_app_update",
        description=(
            "New files for an approved snippet app (instance_id from list_room_apps; name "
            "defaults to its own). The owner reviews the diff; approval replaces the app in place."
        ),
        arguments=UpdateArgs,
        scope=WRITE,
        annotations=PROPOSES,
        handler=propose_room_app_update,
    ),
    Tool(
        name="revise_room_proposal",
        description=(
            "Answer the owner's review with a new revision of your proposal (all files), on the "
            "same card."
        ),
        arguments=ReviseArgs,
        scope=WRITE,
        annotations=PROPOSES,
        handler=revise_room_proposal,
    ),
    Tool(
        name="read_room_proposal",
        description=(
            "Your proposal's review: status, decision, the owner's line comments (outdated or "
            "not), revisions."
        ),
        arguments=ProposalArgs,
        scope=READ,
        annotations=READ_ONLY,
        handler=read_room_proposal,
    ),
    Tool(
        name="poll_resource_events",
        description=(
            "Wait for a Room's events (proposal.approved, proposal.changes_requested, "
            "app.updated...) "
            "after after_sequence. Returns as soon as one exists, or [] after timeout_s "
            "(default 30); pass next_after_sequence next time. Local Rooms are unavailable."
        ),
        arguments=PollArgs,
        scope=READ,
        annotations=READ_ONLY,
        handler=poll_resource_events,
        is_async=True,
    ),
]
