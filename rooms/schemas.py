"""Input models of the REST API and the MCP tools; the tools publish their models' schemas
(osfoundry/mcp/tooling.published_schema). Limits come from where their rules live."""

from typing import Annotated, Literal

from pydantic import Field

from osfoundry.idempotency import IdempotencyKeyArg
from osfoundry.schemas import MAX_PAGE, PageLimit, Sequence, Strict, WaitSeconds

from .models import APP_NAME_MAX_CHARS

AppName = Annotated[str, Field(max_length=APP_NAME_MAX_CHARS)]
SnippetFiles = dict[str, str]


class SnippetProposalIn(Strict):
    name: AppName
    files: SnippetFiles
    idempotency_key: IdempotencyKeyArg


class UpdateProposalIn(Strict):
    files: SnippetFiles
    idempotency_key: IdempotencyKeyArg
    name: AppName | None = None


class RepoProposalIn(Strict):
    name: AppName
    repository_id: str
    version_id: str
    idempotency_key: IdempotencyKeyArg


# The MCP tools' arguments: the Room is an argument there (a path parameter in REST).


class NoArgs(Strict):
    pass


class RoomArgs(Strict):
    room_id: str


class RoomAppsArgs(Strict):
    room_id: str
    limit: PageLimit = MAX_PAGE


class AppArgs(Strict):
    room_id: str
    instance_id: str


class SnippetArgs(Strict):
    room_id: str
    name: AppName
    files: SnippetFiles
    idempotency_key: IdempotencyKeyArg


class RepoArgs(Strict):
    room_id: str
    name: AppName
    repository_id: str
    version_id: str
    idempotency_key: IdempotencyKeyArg


class UpdateArgs(Strict):
    room_id: str
    instance_id: str
    files: SnippetFiles
    idempotency_key: IdempotencyKeyArg
    name: AppName | None = None


class ReviseArgs(Strict):
    proposal_id: str
    files: SnippetFiles
    idempotency_key: IdempotencyKeyArg
    name: AppName | None = None


class ProposalArgs(Strict):
    proposal_id: str


class PollArgs(Strict):
    resource_type: Literal["room"]
    resource_id: str
    after_sequence: Sequence = 0
    timeout_s: WaitSeconds = 30
    limit: PageLimit = MAX_PAGE
