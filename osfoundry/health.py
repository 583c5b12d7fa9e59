"""/healthz and /readyz for load balancers and orchestrators, as plain ASGI routes that
osfoundry/asgi.py calls before Django.

- /healthz: the process answers (its event loop runs). Nothing else is asked, so a database
  outage never makes a supervisor restart healthy workers. It also says how many waits are
  parked and how many asyncio tasks run in this process: what a leak would make grow.
- /readyz: this worker can serve now: the database answers a query and, with REDIS_URL, Redis
  answers a PING; and the worker is not shutting down. Otherwise 503 with Retry-After and the
  reasons as JSON, so a proxy stops sending it traffic until it recovers.

Neither checks Host or charges a rate budget: probes come from the proxy with whatever Host it
uses, every few seconds, and say nothing about any Room.
"""

import asyncio
import logging

from django.conf import settings
from django.db import connections

from . import shutdown, wakeups
from .dbthreads import run_sync
from .http import send_json

HEALTHZ = "/healthz"
READYZ = "/readyz"
CHECK_TIMEOUT_S = 2.0
RETRY_AFTER_S = 5

logger = logging.getLogger(__name__)


def matches(scope) -> bool:
    return scope["type"] == "http" and scope["path"].rstrip("/") in (HEALTHZ, READYZ)


async def handle(scope, receive, send) -> None:
    headers = [(b"cache-control", b"no-store")]
    if scope["path"].rstrip("/") == HEALTHZ:
        await send_json(send, 200, process_counts(), headers)
        return
    problems = await readiness_problems()
    if not problems:
        await send_json(send, 200, {"status": "ready", "checks": {}}, headers)
        return
    error = {"code": "not_ready", "message": "; ".join(problems.values())}
    body = {"status": "unavailable", "checks": problems, "error": error}
    await send_json(send, 503, body, [*headers, (b"retry-after", str(RETRY_AFTER_S).encode())])


def process_counts() -> dict:
    return {
        "status": "ok",
        "parked_waits": wakeups.registry.count(),
        "tasks": len(asyncio.all_tasks()),
    }


async def readiness_problems() -> dict[str, str]:
    """What keeps this worker from serving, by check name; empty when ready."""
    checks = {"database": check_database()}
    if settings.REDIS_URL:
        checks["redis"] = check_redis()
    problems = {}
    if shutdown.is_draining():
        problems["shutdown"] = "this worker is shutting down"
    for name, check in checks.items():
        try:
            await asyncio.wait_for(check, CHECK_TIMEOUT_S)
        except TimeoutError:
            problems[name] = f"{name}: no answer within {CHECK_TIMEOUT_S:g} s"
        except Exception as exc:
            logger.warning("readiness: %s unreachable: %s", name, exc)
            problems[name] = f"{name}: unreachable ({type(exc).__name__})"
    return problems


async def check_database() -> None:
    await run_sync(select_one)


def select_one() -> None:
    with connections["default"].cursor() as cursor:
        cursor.execute("SELECT 1")


async def check_redis() -> None:
    import redis.asyncio as redis

    client = redis.Redis.from_url(
        settings.REDIS_URL, socket_connect_timeout=CHECK_TIMEOUT_S, socket_timeout=CHECK_TIMEOUT_S
    )
    try:
        await client.ping()
    finally:
        await client.aclose()
