"""Input shapes every interface shares: the strict base model and the product-wide limits.

Each limit is written once, here or beside the rule it belongs to (sending.MAX_BODY_CHARS,
idempotency.KEY_MAX_CHARS); the REST schemas, the MCP tools' published schemas and the services
all read it from there.
"""

import re
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


# A whole number in a form field (a revision, a number of days): ASCII digits, and few enough
# for every integer column. str.isdigit() also takes "²", and int() refuses it (and numbers
# past 4,300 digits): a 500 where the form should have answered.
WHOLE_NUMBER = re.compile(r"[0-9]{1,9}")


def whole_number(value: str) -> int | None:
    """`value` as a whole number, or None when it is not one written in ASCII digits."""
    return int(value) if WHOLE_NUMBER.fullmatch(value) else None


class Strict(BaseModel):
    # An invented field (say "visibility") is an error, never silently ignored.
    model_config = ConfigDict(extra="forbid")
