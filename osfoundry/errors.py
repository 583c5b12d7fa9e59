"""The few domain errors services raise. Each interface maps them once.

Every error carries a stable `code` and a message that names the field and says how to fix it.
"""

from collections.abc import Sequence

from pydantic import ValidationError


class DomainError(Exception):
    code = "error"
    http_status = 400

    def __init__(self, message: str, *, code: str | None = None, field: str | None = None):
        super().__init__(message)
        self.message = message
        self.field = field
        if code:
            self.code = code

    def as_dict(self) -> dict:
        data = {"code": self.code, "message": self.message}
        if self.field:
            data["field"] = self.field
        return data


class NotFound(DomainError):
    """Missing, or not yours: the two are indistinguishable on purpose."""

    code = "not_found"
    http_status = 404


class Forbidden(DomainError):
    code = "forbidden"
    http_status = 403


class Conflict(DomainError):
    code = "conflict"
    http_status = 409


class Invalid(DomainError):
    code = "invalid"
    http_status = 400


class Unavailable(DomainError):
    code = "unavailable"
    http_status = 409


class TryLater(DomainError):
    """A service we depend on is down or slow: nothing was stored, and the same call may
    succeed later. REST answers 503 with Retry-After; MCP says when in the result."""

    code = "try_later"
    http_status = 503

    def __init__(
        self, message: str, *, retry_after: int, code: str | None = None, field: str | None = None
    ):
        super().__init__(message, code=code, field=field)
        self.retry_after = retry_after

    def as_dict(self) -> dict:
        return super().as_dict() | {"retry_after": self.retry_after}


# pydantic's wording is written for developers; these say what a caller must change.
_PYDANTIC_HINTS = {
    "extra_forbidden": "unknown field; remove it (allowed fields: {allowed})",
    "missing": "required field is missing",
    "string_type": "must be a string",
    "string_too_long": "is too long: {length} characters, at most {max_length} allowed",
    "string_too_short": "is too short: {length} characters, at least {min_length} required",
    "dict_type": "must be an object",
    "int_type": "must be an integer",
    "int_parsing": "must be an integer",
    "greater_than_equal": "must be at least {ge}",
    "less_than_equal": "must be at most {le}",
    "string_pattern_mismatch": "must match {pattern}",
    "model_type": "request body must be a JSON object",
}


def field_path(loc) -> str:
    parts = [str(part) for part in loc]
    # ninja prefixes the parameter source ("body", "query", "path") and the parameter name.
    if parts and parts[0] in ("body", "query", "path"):
        parts = parts[2:] if len(parts) > 2 else parts[1:]
    return ".".join(parts) or "body"


def describe_validation_error(
    exc: ValidationError | list[dict], *, allowed: list[str] | None = None
) -> Invalid:
    """Turn pydantic's errors into one Invalid naming every bad field and its fix."""
    messages = []
    first_field = None
    errors: list = exc.errors() if isinstance(exc, ValidationError) else exc
    for error in errors:
        field = field_path(error["loc"])
        first_field = first_field or field
        messages.append(f"{field}: {humanize(error, allowed)}")
    return Invalid("; ".join(messages), code="invalid_arguments", field=first_field)


def humanize(error: dict, allowed: list[str] | None) -> str:
    template = _PYDANTIC_HINTS.get(error["type"])
    ctx = dict(error.get("ctx") or {})
    value = error.get("input")
    if isinstance(value, str):
        ctx["length"] = len(value)
    ctx["allowed"] = ", ".join(allowed or []) or "see the schema"
    if template:
        try:
            text = template.format(**ctx)
        except (KeyError, IndexError):
            text = error["msg"]
    else:
        text = error["msg"]
    if error["type"] in {"string_type", "dict_type", "int_type"} and value is not None:
        text += f", got {type(value).__name__} {short_repr(value)}"
    return text


def short_repr(value) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


class Problem(str):
    """One reason a request is refused, as text, and the field it is about: a list of them
    joins into one Invalid whose `field` is the first problem's."""

    field: str

    def __new__(cls, text: str, *, field: str) -> "Problem":
        problem = super().__new__(cls, text)
        problem.field = field
        return problem


def refuse(problems: Sequence[Problem]) -> None:
    """Raise one Invalid naming every problem, if there is any. Its field is the first problem's
    and its code `invalid_<that field's root>`: `invalid_files`, `invalid_name`,
    `invalid_idempotency_key`."""
    if problems:
        first = problems[0].field
        code = "invalid_" + first.split(".", 1)[0]
        raise Invalid("; ".join(problems), code=code, field=first)
