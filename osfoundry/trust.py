"""What this process remembers of the bearer tokens it checked, so that a busy agent's calls cost
no database hop for the token check.

An agent calling read_room in a loop presents the same token every time; reading it (and its
user) from the database each time cost most of a call. So each process remembers, per token
and resource, the principal its last check found, for at most TRUST_S and never past the
token's expiry, under osfoundry.memory's rule: whatever ends or changes access (a token
revoked, re-scoped, given an expiry or deleted, personal or OAuth; a user saved, deactivated or
deleted; agents/revocation.py) sends the wake-up ACCESS_KEY after commit, and every process
forgets every token it checked before it wakes the parked waits of the same wake-up; while
wake-ups may be missed, every check reads the database.
"""

import hashlib
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from .memory import HeardMemory

if TYPE_CHECKING:
    from .auth import Principal

ACCESS_KEY = "access:changed"
TRUST_S = 60.0

memory: HeardMemory["Principal"] = HeardMemory(ACCESS_KEY, ttl=TRUST_S)


def memory_key(raw: str, resource: str | None) -> tuple[str, str | None]:
    return hashlib.sha256(raw.encode()).hexdigest(), resource


def known_principal(raw: str, resource: str | None) -> "Principal | None":
    """The principal this process checked for `raw` at `resource`, if it can still vouch for
    it; None: ask the database (osfoundry.auth.authenticate_remembered)."""
    return memory.get(memory_key(raw, resource))


def check(raw: str, resource: str | None, read: Callable[[], "Principal | None"]):
    """The principal for `raw` at `resource`: remembered when that can be trusted, else
    `read()` (the database), remembered for next time."""
    key = memory_key(raw, resource)
    if (principal := memory.get(key)) is not None:
        return principal
    generation = memory.generation
    principal = read()
    if principal is not None:
        ttl = TRUST_S
        if principal.expires_at is not None:
            ttl = min(ttl, principal.expires_at.timestamp() - time.time())
        memory.put(key, principal, generation, ttl=ttl)
    return principal
