"""The agent network's MCP tools (SPEC §6–7). Each publishes its argument model's schema."""

from datetime import datetime
from functools import partial

from osfoundry.auth import READ, WRITE
from osfoundry.mcp.tooling import CallContext, Tool

from . import inbox, sending, services
from .models import AgentProfile
from .schemas import AgentMessageIn, ChannelMessageToolIn, ClaimProfileIn, WaitIn


def hints(*, read_only: bool, open_world: bool) -> dict:
    if read_only:
        return {"readOnlyHint": True, "openWorldHint": open_world}
    # MCP reads a missing destructiveHint as true; these tools only add.
    return {"readOnlyHint": False, "destructiveHint": False, "openWorldHint": open_world}


def profile(ctx: CallContext) -> AgentProfile:
    return services.get_connected_profile(connection_key=ctx.principal.token_key)


def claim(ctx: CallContext, args: ClaimProfileIn) -> dict:
    result = services.claim_connected_profile(
        user=ctx.principal.user, connection_key=ctx.principal.token_key, handle=args.handle
    )
    return result.as_dict()


def send_direct(ctx: CallContext, args: AgentMessageIn) -> dict:
    return sending.send_agent_message(
        sender=profile(ctx),
        to=args.to,
        body=args.body,
        thread_root_id=args.thread_root_id,
        idempotency_key=args.idempotency_key,
    ).as_dict()


def send_channel(ctx: CallContext, args: ChannelMessageToolIn) -> dict:
    return sending.send_channel_message(
        sender=profile(ctx),
        channel=args.channel,
        to=args.to,
        body=args.body,
        thread_root_id=args.thread_root_id,
        idempotency_key=args.idempotency_key,
    ).as_dict()


def current_profile(ctx: CallContext) -> tuple[AgentProfile, datetime | None]:
    """The caller's profile and when its access ends, with the token checked again: a wait
    reads this at its start and after a wake-up that may mean access ended."""
    principal = ctx.principal_again(READ)
    profile = services.get_connected_profile(connection_key=principal.token_key)
    return profile, principal.expires_at


def access_ends_at(ctx: CallContext) -> datetime | None:
    """When the caller's access ends, with the token checked again: a wait asks this when it
    parks on what the process remembers and before it hands over what a wake-up carried."""
    return ctx.principal_again(READ).expires_at


async def wait(ctx: CallContext, args: WaitIn) -> dict:
    # No disconnect watch here: the protocol cancels a parked tool call when its client leaves.
    page, receipt = await inbox.wait_for_messages(
        connection=ctx.principal.token_key,
        load_profile=partial(current_profile, ctx),
        check_access=partial(access_ends_at, ctx),
        after_sequence=args.after_sequence,
        timeout_s=args.timeout_s,
        limit=args.limit,
    )
    if receipt is not None:
        # Runs only once the response is fully written: the stored cursor never skips ahead
        # of what the client actually got.
        ctx.after_response(lambda: inbox.confirm_delivery(receipt))
    return page.as_dict()


TOOLS = [
    Tool(
        name="claim_connected_profile",
        description=(
            "Claim your agent handle: 2-31 chars of a-z 0-9 -; not maestro, direct, all, "
            "everyone, here, channel. Others reach you as @handle."
        ),
        arguments=ClaimProfileIn,
        scope=WRITE,
        annotations=hints(read_only=False, open_world=False),
        handler=claim,
    ),
    Tool(
        name="send_agent_message",
        description=(
            "Message agents (`to`: handles, space-separated). Result: who received it, who "
            "was skipped and why. Reuse idempotency_key on retries."
        ),
        arguments=AgentMessageIn,
        scope=WRITE,
        annotations=hints(read_only=False, open_world=True),
        handler=send_direct,
    ),
    Tool(
        name="send_channel_message",
        description=(
            "Post to your channel; handles in `to` are addressed. Writing @handle in the body "
            "wakes nobody: it only shows in their wait_for_messages."
        ),
        arguments=ChannelMessageToolIn,
        scope=WRITE,
        annotations=hints(read_only=False, open_world=True),
        handler=send_channel,
    ),
    Tool(
        name="wait_for_messages",
        description=(
            "Messages to you (via to, @handle, direct) as soon as one arrives, or [] after "
            "timeout_s (max 50). Pass after_sequence = last sequence you processed; without "
            "it, it resumes where the last call stopped."
        ),
        arguments=WaitIn,
        scope=READ,
        annotations=hints(read_only=True, open_world=False),
        handler=wait,
        is_async=True,
    ),
]
