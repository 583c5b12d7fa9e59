"""GET /api/v1/agents/messages/wait: the REST mirror of wait_for_messages, as a plain ASGI
route that osfoundry/asgi.py calls before Django.

Django's handler runs every request in a thread; 20,000 idle agents would be 20,000 threads.
Here a parked request is a coroutine and a future. The client's disconnect is watched while
parked (the wait ends at once and nothing is written or stored), and the stored cursor moves
only after the response was handed to the server completely.
"""

import asyncio
import json
from datetime import datetime
from functools import partial
from urllib.parse import parse_qsl

from pydantic import ValidationError

from osfoundry.auth import (
    READ,
    InsufficientScope,
    Unauthenticated,
    authenticate_bearer,
    bearer_from_header,
    hash_token,
)
from osfoundry.disconnect import DisconnectWatcher
from osfoundry.errors import DomainError, Invalid, describe_validation_error

from . import services, wakeups
from .schemas import WaitIn

PATH = "/api/v1/agents/messages/wait"


def matches(scope) -> bool:
    return scope["type"] == "http" and scope["path"] in (PATH, PATH + "/")


async def handle(scope, receive, send) -> None:
    client = DisconnectWatcher(receive)
    try:
        if scope["method"] not in ("GET", "HEAD"):
            await reply(send, 405, error("method_not_allowed", "Use GET"), [(b"allow", b"GET")])
            return
        args = parse_query(scope)
        raw = bearer_from_header(
            dict(scope.get("headers") or []).get(b"authorization", b"").decode("latin-1")
        )
        if raw is None:
            raise Unauthenticated(MISSING_TOKEN)
        client.start()
        arguments = args.model_dump()
        del args  # a parked request keeps as little alive as it can
        page = await services.wait_for_connection(
            connection=hash_token(raw),
            load_profile=partial(authorize, raw),
            is_disconnected=client.is_disconnected,
            on_register=partial(wake_when_gone, client),
            **arguments,
        )
    except DomainError as exc:
        client.stop()
        await reply(send, exc.http_status, {"error": exc.as_dict()}, auth_headers(exc))
        return
    await asyncio.sleep(0)  # let a disconnect that already happened be noticed first
    if client.disconnected or page.client_gone:
        client.stop()
        return
    await reply(send, 200, page.as_dict())
    # Checked before the loop runs the watcher again: uvicorn drops a write to a closed
    # connection silently, and the watcher is how we learn it was closed.
    written = not client.disconnected
    client.stop()
    if written:
        await services.record_page_delivered(page)


def wake_when_gone(client: DisconnectWatcher, key: str) -> None:
    # The parked wait wakes, sees is_disconnected() and ends at once.
    client.on_disconnect(partial(wakeups.registry.wake_local, (key,)))


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


MISSING_TOKEN = "A valid bearer token is required: send Authorization: Bearer <token>"


def authorize(raw: str) -> tuple[services.AgentProfile, datetime | None]:
    principal = authenticate_bearer(raw)
    if principal is None:
        raise Unauthenticated(MISSING_TOKEN)
    principal.require(READ)
    profile = services.get_connected_profile(connection_key=principal.token_key)
    return profile, principal.expires_at


def error(code: str, message: str) -> dict:
    return {"error": {"code": code, "message": message}}


def auth_headers(exc: DomainError) -> list:
    if isinstance(exc, InsufficientScope):
        value = f'Bearer error="insufficient_scope", scope="{exc.scope}"'
    elif exc.http_status == 401:
        value = 'Bearer error="invalid_token"'
    else:
        return []
    return [(b"www-authenticate", value.encode())]


async def reply(send, status: int, data: dict, headers: list | None = None) -> None:
    body = json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                (b"cache-control", b"no-store"),
                *(headers or []),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})
