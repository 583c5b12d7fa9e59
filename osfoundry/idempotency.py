"""Idempotency keys: a retry with the same key never stores anything twice (SPEC §4).

MCP over HTTP can lose a response after the server acted, so clients retry. The protocol, for
proposals and message sends alike:

- same key, same arguments: the original result again, marked as a replay, nothing stored;
- same key, other arguments: a Conflict naming the key, nothing stored;
- concurrent requests with one key: one row, because the key row is inserted in the same
  transaction as what it stands for, under a unique constraint (never check-then-insert).

Each app keeps its own key model (a subclass of `IdempotencyKey` naming who and what); this
module holds the rules once.
"""

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import Annotated, Any, ClassVar

from django.apps import apps
from django.db import IntegrityError, models
from django.utils import timezone
from pydantic import Field

from .errors import Conflict, Problem, refuse
from .text import one_line_problems

KEY_MIN_CHARS = 8
KEY_MAX_CHARS = 128
# The published and validated shape of every idempotency_key argument.
IdempotencyKeyArg = Annotated[str, Field(min_length=KEY_MIN_CHARS, max_length=KEY_MAX_CHARS)]

# A concurrent request can win the unique constraint between our read and our insert; the next
# pass then finds its row. Past this many passes something else is wrong: say so.
INSERT_ATTEMPTS = 3


def key_problems(key: str) -> list[Problem]:
    """Why `key` cannot be stored (control, bidirectional or lone surrogate characters), or [].
    Checked before the key is looked up: a NUL cannot even reach PostgreSQL."""
    return [
        Problem(problem, field="idempotency_key")
        for problem in one_line_problems(key, field="idempotency_key", what="key")
    ]


def canonical_hash(data: Any) -> str:
    encoded = json.dumps(data, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    # surrogatepass: a lone surrogate must reach validation (and its clear error), not crash.
    return hashlib.sha256(encoded.encode("utf-8", "surrogatepass")).hexdigest()


class IdempotencyKey(models.Model):
    """A key one caller used for one operation. Subclasses add who used it (a foreign key that
    forms, with `operation` and `key`, a unique constraint) and what it stands for (the foreign
    key named by `target`)."""

    target: ClassVar[str]  # the field holding what the key stands for, e.g. "proposal"

    operation = models.CharField(max_length=40)
    key = models.CharField(max_length=128)
    request_hash = models.CharField(max_length=64)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        abstract = True

    def __str__(self):
        return f"{self.operation}:{self.key}"

    @classmethod
    def expired(cls, cutoff) -> models.QuerySet:
        """Keys that may be forgotten: used before `cutoff`. Subclasses keep what a client may
        still be retrying."""
        return cls._default_manager.filter(created_at__lt=cutoff)


@dataclass(frozen=True)
class IdempotentRequest[T: models.Model]:
    """One call carrying an idempotency key: who (`scope`, e.g. {"caller": user}), which
    operation, the key, and the hash of its arguments."""

    model: type[IdempotencyKey]
    scope: dict[str, Any]
    operation: str
    key: str
    request_hash: str

    def __post_init__(self) -> None:
        refuse(key_problems(self.key))

    def previous(self) -> T | None:
        """What the key was used for with these same arguments, or None if it is new.
        Raises Conflict when it was used with other arguments."""
        used = (
            self.model._default_manager.select_related(self.model.target)
            .filter(**self.scope, operation=self.operation, key=self.key)
            .first()
        )
        if used is None:
            return None
        target = getattr(used, self.model.target)
        if used.request_hash != self.request_hash:
            raise Conflict(
                f"idempotency_key {self.key!r} was already used for a different request "
                f"({self.model.target} {target.pk}); use a new key for new content, or resend "
                "the original arguments to get the original result",
                code="idempotency_key_reused",
                field="idempotency_key",
            )
        return target

    def record(self, target: T) -> None:
        """Store the key for `target`: call inside the transaction that stores `target`, before
        any other lock is taken, so a concurrent twin stops at the unique constraint."""
        self.model._default_manager.create(
            **self.scope,
            operation=self.operation,
            key=self.key,
            request_hash=self.request_hash,
            **{self.model.target: target},
        )

    def store[R](self, insert: Callable[[], R], replay: Callable[[T], R]) -> R:
        """Run `insert` (one transaction that calls record()); if a concurrent request with
        the same key committed first, answer `replay` of its result instead."""
        for _attempt in range(INSERT_ATTEMPTS):
            try:
                return insert()
            except IntegrityError:
                previous = self.previous()
                if previous is not None:
                    return replay(previous)
        raise Conflict(
            "Too many concurrent requests with this key or content; retry in a moment",
            code="busy",
        )


def purge_expired_keys(*, older_than_days: int) -> dict[str, int]:
    """Forget keys older than the retention window (IDEMPOTENCY_KEY_DAYS), for every app's key
    model, by its verbose name. What the keys stood for is never deleted."""
    cutoff = timezone.now() - timedelta(days=older_than_days)
    deleted = {}
    for model in apps.get_models():
        if issubclass(model, IdempotencyKey):
            deleted[str(model._meta.verbose_name)], _ = model.expired(cutoff).delete()
    return deleted
