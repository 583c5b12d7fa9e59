"""Proposal tasks across workers, as behind a load balancer: two uvicorn processes on the test
database and Redis. A task is a row, so the worker that made it may be gone when the owner
decides; the decision, taken through one worker, wakes a subscriptions/listen parked on the
other through Redis, and every worker answers tasks/get."""

import asyncio
import os
import uuid
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest
from django.conf import settings
from django.test import Client

from rooms.models import ProposalTask
from tests.mcptasks import get_task, listening, propose_as_task, tasks_client
from tests.servers import database_url, require, start_uvicorn, stop_process

ROOT = Path(__file__).resolve().parents[3]
REDIS_URL = os.environ.get("REDIS_URL") or "redis://127.0.0.1:6379/0"
MCP = "/api/v1/mcp"


class Workers:
    """uvicorn processes sharing the test database and Redis; one can be restarted."""

    def __init__(self, tmp_path):
        parts = urlsplit(REDIS_URL)
        require(parts.hostname or "127.0.0.1", parts.port or 6379, "Redis")
        self.tmp_path = tmp_path
        self.env = {
            "DATABASE_URL": database_url(settings.DATABASES["default"]),
            "REDIS_URL": REDIS_URL,
            "REDIS_PREFIX": f"test-{uuid.uuid4().hex[:12]}",
            # This process's: a session it makes is one the workers accept.
            "SECRET_KEY": settings.SECRET_KEY,
            "STATIC_MANIFEST": "0",
            "ALLOWED_HOSTS": "127.0.0.1",
        }
        self.processes: list = []
        self.urls: list[str] = []

    def start(self) -> str:
        n = len(self.processes)
        process, url = start_uvicorn(
            env=self.env,
            log_path=self.tmp_path / f"worker-{n}.log",
            options=["--no-access-log", "--lifespan", "off"],
            log_level="warning",
            cwd=ROOT,
        )
        self.processes.append(process)
        self.urls.append(url)
        return url

    def stop(self, url: str) -> None:
        stop_process(self.processes[self.urls.index(url)])

    def stop_all(self) -> None:
        for process in self.processes:
            if process.poll() is None:
                stop_process(process)


@pytest.fixture
def workers(transactional_db, tmp_path):
    started = Workers(tmp_path)
    try:
        yield started
    finally:
        started.stop_all()


def approve_on(base_url: str, session: str, proposal) -> None:
    """The owner's approval as the card posts it, through the worker at `base_url`."""
    client = httpx.Client(base_url=base_url, timeout=30, cookies={"sessionid": session})
    card = client.get(f"/proposals/{proposal.pk}/")
    assert card.status_code == 200, card.text[:500]
    form = {
        "csrfmiddlewaretoken": client.cookies["csrftoken"],
        "content_hash": proposal.content_hash,
    }
    response = client.post(
        f"/proposals/{proposal.pk}/approve/", data=form, headers={"Referer": base_url + "/"}
    )
    assert response.status_code == 302, response.text[:500]


def test_a_task_made_on_a_worker_since_restarted_is_completed_through_another(
    workers, room, agent, owner, token_factory, files
):
    token = token_factory(agent)
    first, other = workers.start(), workers.start()
    arguments = {
        "room_id": str(room.pk),
        "name": "Standup timer",
        "files": files,
        "idempotency_key": "two-workers-0001",
    }

    async def propose():
        async with tasks_client(first + MCP, token) as (client, _extension):
            return await propose_as_task(client, "propose_room_snippet_app", arguments)

    created = asyncio.run(asyncio.wait_for(propose(), 60))
    assert created.status == "working"
    workers.stop(first)
    restarted = workers.start()
    proposal = ProposalTask.objects.select_related("proposal").get(pk=created.task_id).proposal
    browser = Client()
    browser.force_login(owner)
    session = browser.cookies["sessionid"].value

    async def listen_on_the_other_and_approve_on_the_restarted():
        async with tasks_client(other + MCP, token) as (client, extension):
            async with listening(client.session, extension, [created.task_id]):
                await asyncio.to_thread(approve_on, restarted, session, proposal)
                notice = await extension.notices.get()
        async with tasks_client(restarted + MCP, token) as (client, _extension):
            return notice, await get_task(client, created.task_id)

    notice, read = asyncio.run(
        asyncio.wait_for(listen_on_the_other_and_approve_on_the_restarted(), 60)
    )
    assert notice.task_id == created.task_id
    assert notice.status == "completed"
    approved = notice.result["structuredContent"]
    assert approved["status"] == "approved"
    assert approved["instance_id"]
    assert read.status == "completed"
    assert read.result["structuredContent"]["instance_id"] == approved["instance_id"]
