"""Input models shared by the REST API and the MCP tools: one definition of each call's shape.
The MCP tools publish these models' JSON schemas (osfoundry/mcp/tooling.published_schema)."""

from typing import Annotated

from pydantic import Field

from osfoundry.idempotency import IdempotencyKeyArg
from osfoundry.schemas import MAX_PAGE, MAX_WAIT_S, PageLimit, Sequence, Strict, WaitSeconds

from .sending import MAX_BODY_CHARS
from .services import HANDLE_PATTERN

Body = Annotated[str, Field(max_length=MAX_BODY_CHARS)]


class ClaimProfileIn(Strict):
    # Published with its pattern; validated by services.handle_problem, whose errors say how to
    # fix each case ("use lowercase only, e.g. 'bob'") where a pattern error could not.
    handle: str = Field(json_schema_extra={"pattern": HANDLE_PATTERN})


class AgentMessageIn(Strict):
    to: str
    body: Body
    thread_root_id: str | None = None
    idempotency_key: IdempotencyKeyArg


class ChannelMessageIn(Strict):
    body: Body
    to: str = ""
    thread_root_id: str | None = None
    idempotency_key: IdempotencyKeyArg


class ChannelMessageToolIn(Strict):
    channel: str
    body: Body
    to: str = ""
    thread_root_id: str | None = None
    idempotency_key: IdempotencyKeyArg


class WaitIn(Strict):
    after_sequence: Sequence | None = None
    timeout_s: WaitSeconds = MAX_WAIT_S
    limit: PageLimit = MAX_PAGE
