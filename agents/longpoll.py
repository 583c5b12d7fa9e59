"""GET /api/v1/agents/messages/wait: the REST mirror of wait_for_messages, as a plain ASGI
route that osfoundry/asgi.py calls before Django.

Django's handler runs every request in a thread; 20,000 idle agents would be 20,000 threads.
Here a parked request is a coroutine and a future. The client's disconnect is watched while
parked (the wait ends at once and nothing is written or stored), and the stored cursor moves
only after the response was handed to the server completely.
"""

import asyncio
from datetime import datetime
from functools import partial
from urllib.parse import parse_qsl

from pydantic import ValidationError

from osfoundry import outage, ratelimit
from osfoundry.auth import (
    READ,
    Principal,
    Unauthenticated,
    authenticate_bearer,
    bearer_from_header,
)
from osfoundry.dbthreads import run_sync
from osfoundry.disconnect import DisconnectWatcher
from osfoundry.errors import DomainError, Forbidden, Invalid, describe_validation_error
from osfoundry.http import Request, challenge_for, host_problem, origin_problem, send_json
from osfoundry.outage import DATABASE_OUTAGE, unavailable

from . import inbox, services
from .models import AgentProfile
from .schemas import WaitIn
from .tokens import hash_token

PATH = "/api/v1/agents/messages/wait"
MISSING_TOKEN = "A valid bearer token is required: send Authorization: Bearer <token>"


def matches(scope) -> bool:
    return scope["type"] == "http" and scope["path"] in (PATH, PATH + "/")


async def handle(scope, receive, send) -> None:
    client = DisconnectWatcher(receive)
    request = Request(scope)
    raw = bearer_from_header(request.headers.get("authorization"))
    # Charged first, to the budget REST and MCP calls share: by token, else by client address.
    try:
        key = await token_key(raw) if raw else None
    except DATABASE_OUTAGE as exc:
        await refuse_outage(send, exc, [ratelimit.limit_header()])
        return
    quota = await ratelimit.take(key or request.client_key)
    limit_headers = quota.headers()
    try:
        if quota.exceeded:
            raise ratelimit.RateLimited(quota)
        if scope["method"] not in ("GET", "HEAD"):
            error = Invalid("Use GET", code="method_not_allowed")
            await reply(send, 405, {"error": error.as_dict()}, [(b"allow", b"GET"), *limit_headers])
            return
        if problem := host_problem(request):
            raise Forbidden(problem, code="bad_host")
        if problem := origin_problem(request):
            raise Forbidden(problem, code="bad_origin")
        args = parse_query(scope)
        if raw is None or key is None:
            raise Unauthenticated(MISSING_TOKEN)
        client.start()
        arguments = args.model_dump()
        del args  # a parked request keeps as little alive as it can
        page, receipt = await inbox.wait_for_messages(
            connection=hash_token(raw),
            load_profile=partial(authorize, raw),
            check_access=partial(access_ends_at, raw),
            client=client,
            **arguments,
        )
    except DATABASE_OUTAGE as exc:
        client.stop()
        await refuse_outage(send, exc, limit_headers)
        return
    except DomainError as exc:
        client.stop()
        challenge = challenge_for(exc)
        headers = [(b"www-authenticate", challenge.encode())] if challenge else []
        await reply(send, exc.http_status, {"error": exc.as_dict()}, headers + limit_headers)
        return
    await asyncio.sleep(0)  # let a disconnect that already happened be noticed first
    if client.disconnected:
        client.stop()
        return
    await reply(send, 200, page.as_dict(), limit_headers)
    # Checked before the loop runs the watcher again: uvicorn drops a write to a closed
    # connection silently, and the watcher is how we learn it was closed.
    written = not client.disconnected
    client.stop()
    if written:
        await confirm(receipt)


async def confirm(receipt) -> None:
    try:
        await inbox.confirm_delivery(receipt)
    except DATABASE_OUTAGE as exc:
        # The page was delivered; the stored cursor stays, so the client's next poll without
        # after_sequence gets these messages again (with after_sequence, nothing is lost).
        unavailable(exc)


# A token's key never changes (agents.tokens.connection_key), so each process remembers it per
# token hash: charging an idle re-poll to its token's budget costs no database hop either.
token_keys: dict[str, str] = {}
MAX_TOKEN_KEYS = 200_000


async def token_key(raw: str) -> str | None:
    """The principal's token_key, the key its request budget is counted under (REST and MCP
    calls share it); None when the token is not valid."""
    connection = hash_token(raw)
    key = token_keys.get(connection)
    if key is None:
        principal = await run_sync(authenticate_bearer, raw)
        if principal is None:
            return None
        if len(token_keys) >= MAX_TOKEN_KEYS:
            token_keys.clear()
        key = token_keys[connection] = principal.token_key
    return key


def parse_query(scope) -> WaitIn:
    pairs = parse_qsl(scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True)
    query = {}
    for name, value in pairs:
        if name in query:
            raise Invalid(f"{name}: given twice; pass it once", field=name)
        query[name] = value
    try:
        return WaitIn.model_validate(query)
    except ValidationError as exc:
        raise describe_validation_error(exc, allowed=list(WaitIn.model_fields)) from None


def reader(raw: str) -> Principal:
    """The token's principal as the database says now, when it may read; else the refusal."""
    principal = authenticate_bearer(raw)
    if principal is None:
        raise Unauthenticated(MISSING_TOKEN)
    principal.require(READ)
    return principal


def authorize(raw: str) -> tuple[AgentProfile, datetime | None]:
    principal = reader(raw)
    profile = services.get_connected_profile(connection_key=principal.token_key)
    return profile, principal.expires_at


def access_ends_at(raw: str) -> datetime | None:
    return reader(raw).expires_at


async def refuse_outage(send, exc: BaseException, headers: list) -> None:
    error = unavailable(exc)
    body = {"error": error.as_dict()}
    await reply(send, error.http_status, body, [outage.retry_after_header(), *headers])


async def reply(send, status: int, data: dict, headers: list | None = None) -> None:
    await send_json(send, status, data, [(b"cache-control", b"no-store"), *(headers or [])])
