"""Input models shared by the REST API and the MCP tools: one definition of each call's shape."""

from pydantic import BaseModel, ConfigDict, Field


class Strict(BaseModel):
    # An invented field (say "visibility") is an error, never silently ignored.
    model_config = ConfigDict(extra="forbid")


class SnippetProposalIn(Strict):
    name: str = Field(max_length=200)
    files: dict[str, str]
    idempotency_key: str = Field(min_length=8, max_length=128)


class RepoProposalIn(Strict):
    name: str = Field(max_length=200)
    repository_id: str
    version_id: str
    idempotency_key: str = Field(min_length=8, max_length=128)


class DeclineIn(Strict):
    reason: str = Field(default="", max_length=1000)
    content_hash: str | None = None


class DecisionIn(Strict):
    content_hash: str | None = None
