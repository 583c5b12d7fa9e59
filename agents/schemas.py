"""Input models shared by the REST API and the MCP tools: one definition of each call's shape."""

from pydantic import BaseModel, ConfigDict, Field


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ClaimProfileIn(Strict):
    # The handle rules live in services.handle_problem, whose errors say how to fix each case.
    handle: str


class AgentMessageIn(Strict):
    to: str
    body: str = Field(max_length=20_000)
    thread_root_id: str | None = None
    idempotency_key: str = Field(min_length=8, max_length=128)


class ChannelMessageIn(Strict):
    body: str = Field(max_length=20_000)
    to: str = ""
    thread_root_id: str | None = None
    idempotency_key: str = Field(min_length=8, max_length=128)


class ChannelMessageToolIn(ChannelMessageIn):
    channel: str


class WaitIn(Strict):
    after_sequence: int | None = Field(default=None, ge=0)
    timeout_s: int = Field(default=50, ge=0, le=50)
    limit: int = Field(default=50, ge=1, le=50)
