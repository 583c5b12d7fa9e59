"""Input shapes every interface shares: the strict base model and the product-wide limits.

Each limit is written once, here or beside the rule it belongs to (sending.MAX_BODY_CHARS,
idempotency.KEY_MAX_CHARS); the REST schemas, the MCP tools' published schemas and the services
all read it from there.
"""

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field

# A long-poll parks at most this long: under the timeouts around it (a CDN, a load balancer, an
# MCP client's 60 s tool timeout).
MAX_WAIT_S = 50
# The most items one page of a list or a long-poll returns.
MAX_PAGE = 50

PageLimit = Annotated[int, Field(ge=1, le=MAX_PAGE)]
WaitSeconds = Annotated[int, Field(ge=0, le=MAX_WAIT_S)]
Sequence = Annotated[int, Field(ge=0)]


class Strict(BaseModel):
    # An invented field (say "visibility") is an error, never silently ignored.
    model_config = ConfigDict(extra="forbid")
