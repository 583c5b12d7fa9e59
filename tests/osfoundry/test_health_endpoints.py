"""/healthz (the process answers) and /readyz (the database and Redis answer, and the worker is
not shutting down), for load balancers: plain JSON, 503 with Retry-After and the reason."""

import httpx
import pytest

from osfoundry import wakeups
from osfoundry.asgi import application
from tests.servers import free_port

pytestmark = pytest.mark.django_db(transaction=True)


async def get(path: str) -> httpx.Response:
    transport = httpx.ASGITransport(app=application)
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
        return await client.get(path)


async def test_healthz_answers_while_the_process_runs():
    response = await get("/healthz")
    assert response.status_code == 200
    assert response.json()["status"] == "ok"
    assert response.json()["parked_waits"] == 0
    assert response.headers["cache-control"] == "no-store"


async def test_readyz_is_ready_when_the_database_and_redis_answer():
    response = await get("/readyz")
    assert response.status_code == 200
    assert response.json() == {"status": "ready", "checks": {}}


async def test_readyz_answers_503_naming_redis_when_it_does_not_answer(settings):
    settings.REDIS_URL = f"redis://127.0.0.1:{free_port()}/0"  # nothing listens there
    response = await get("/readyz")
    assert response.status_code == 503
    assert response.headers["retry-after"] == "5"
    body = response.json()
    assert body["status"] == "unavailable"
    assert list(body["checks"]) == ["redis"]
    assert body["error"]["code"] == "not_ready"
    assert "redis: unreachable" in body["error"]["message"]


async def test_readyz_answers_503_once_the_worker_is_shutting_down(monkeypatch):
    monkeypatch.setattr(wakeups.registry, "is_draining", True)
    response = await get("/readyz")
    assert response.status_code == 503
    assert response.json()["checks"] == {"shutdown": "this worker is shutting down"}
    # The process still answers: a supervisor must not kill it while it drains.
    assert (await get("/healthz")).status_code == 200
