"""Two uvicorn processes sharing the database and Redis: a waiter parked on one is woken by a
message sent through the other (one Redis subscription per process routes the wake-up)."""

import os
import threading
import uuid
from urllib.parse import urlsplit

import httpx
import pytest
import redis
from django.conf import settings

from agents.longpoll import PATH
from agents.tokens import create_access_token, revoke_access_token
from osfoundry import wakeups
from osfoundry.mcp.protocol import EXTERNAL_MCP_PATH
from rooms.models import Room
from tests.mcpclient import rpc
from tests.polling import until
from tests.servers import require, uvicorn_workers, worker_env

REDIS_URL = os.environ.get("REDIS_URL") or "redis://127.0.0.1:6379/0"


@pytest.fixture
def workers(request, transactional_db, tmp_path):
    """Two uvicorn processes on the test database and Redis: their base URLs, and the Redis
    channel they share. Without their start-up (lifespan) unless a test asks for it
    (indirect parametrization with "on")."""
    lifespan = getattr(request, "param", "off")
    parts = urlsplit(REDIS_URL)
    require(parts.hostname or "127.0.0.1", parts.port or 6379, "Redis")
    prefix = f"test-{uuid.uuid4().hex[:12]}"
    env = worker_env("two-process-test", REDIS_URL=REDIS_URL, REDIS_PREFIX=prefix)
    with uvicorn_workers(env, tmp_path, lifespan=lifespan) as started:
        db = parts.path.strip("/") or "0"
        yield [url for _process, url in started], f"{prefix}:wakeups:{db}", prefix


def calls_counted(admin, prefix: str, token_key: str) -> int:
    """How many calls the workers counted for a token (osfoundry.ratelimit, in Redis)."""
    keys = admin.keys(f"{prefix}:rate:{token_key}:*")
    return sum(int(value) for value in admin.mget(keys)) if keys else 0


def test_a_send_on_one_process_wakes_the_waiter_on_the_other(workers, agent_token, owner, member):
    (waiting_on, sending_on), channel, prefix = workers
    alice_token, _alice = agent_token(owner, "alice-claude")
    bob_token, bob = agent_token(member, "bob-codex")
    headers = {"Authorization": f"Bearer {bob_token}"}
    admin = redis.Redis.from_url(REDIS_URL)
    # A first poll: the waiting process authenticates bob, reads his inbox, remembers both and
    # subscribes to the wake-ups, so the next poll parks without a database read.
    assert httpx.get(waiting_on + PATH, params={"timeout_s": 0}, headers=headers).json() == {
        "messages": [],
        "next_after_sequence": 0,
        "has_more": False,
    }
    until(
        lambda: dict(admin.pubsub_numsub(channel)).get(channel.encode(), 0) >= 1,
        "the waiting process to subscribe",
    )
    answers = []
    thread = threading.Thread(
        target=lambda: answers.append(
            httpx.get(waiting_on + PATH, params={"timeout_s": 50}, headers=headers, timeout=60)
        )
    )
    thread.start()
    # The long-poll counts its call, then parks in the same step: once counted, it is parked.
    until(lambda: calls_counted(admin, prefix, bob.connection_key) == 2, "the poll to be counted")
    admin.close()
    sent = httpx.post(
        sending_on + "/api/v1/agents/messages",
        json={"to": "bob-codex", "body": "across processes", "idempotency_key": "alice-0001"},
        headers={"Authorization": f"Bearer {alice_token}"},
        timeout=10,
    )
    assert sent.status_code == 201
    thread.join(60)
    # Without the cross-process wake-up the parked call would have answered [] at its timeout.
    assert [m["body"] for m in answers[0].json()["messages"]] == ["across processes"]


def test_a_user_deactivated_in_another_process_ends_a_wait_parked_in_a_worker(
    workers, agent_token, member
):
    """The way a script or `manage.py shell` on another host ends access: the ORM change there
    reaches the worker through the wake-up channel."""
    (waiting_on, _other), channel, prefix = workers
    bob_token, _bob = agent_token(member, "bob-codex")
    answers = []

    def wait():
        answers.append(
            httpx.get(
                waiting_on + PATH,
                params={"timeout_s": 50},
                headers={"Authorization": f"Bearer {bob_token}"},
                timeout=60,
            )
        )

    thread = threading.Thread(target=wait)
    thread.start()
    admin = redis.Redis.from_url(REDIS_URL)
    until(
        lambda: dict(admin.pubsub_numsub(channel)).get(channel.encode(), 0) >= 1,
        "the waiting process to subscribe",
    )
    admin.close()
    # This process publishes its wake-ups on the workers' channel, as a script would.
    wakeups.configure(REDIS_URL, prefix)
    try:
        member.is_active = False
        member.save()
        thread.join(60)
    finally:
        wakeups.configure(settings.REDIS_URL, settings.REDIS_PREFIX)
    # Whether the deactivation found the call parked or still reading, it is refused.
    assert answers[0].status_code == 401
    assert answers[0].json()["error"]["code"] == "invalid_token"


def read_room(base_url: str, token: str, room_id) -> dict:
    response = rpc(
        base_url + EXTERNAL_MCP_PATH,
        "tools/call",
        {"name": "read_room", "arguments": {"room_id": str(room_id)}},
        token=token,
    )
    return {"status": response.status_code, **response.json()}


def remembers(base_url: str, token: str, room: Room) -> bool:
    """Whether the worker now answers read_room from memory: a rename without a signal
    (update()) goes unseen by a remembered read."""
    name = read_room(base_url, token, room.pk)["result"]["structuredContent"]["name"]
    Room.objects.filter(pk=room.pk).update(name=f"{name}+")
    return read_room(base_url, token, room.pk)["result"]["structuredContent"]["name"] == name


@pytest.mark.parametrize("workers", ["on"], indirect=True)
def test_what_workers_remember_ends_with_a_change_made_in_another_process(workers, room, agent):
    """Both workers subscribe at start-up and answer read_room without the database; a token
    revoked or a Room renamed by another process is heard by both before their next answers."""
    (first, second), channel, prefix = workers
    admin = redis.Redis.from_url(REDIS_URL)
    until(
        lambda: dict(admin.pubsub_numsub(channel)).get(channel.encode(), 0) >= 2,
        "both workers to subscribe at start-up",
    )
    admin.close()
    token, raw = create_access_token(user=agent, scopes="osfoundry:read")
    for url in (first, second):
        until(lambda url=url: remembers(url, raw, room), f"{url} to remember")
    # This process publishes its wake-ups on the workers' channel, as a script would.
    wakeups.configure(REDIS_URL, prefix)
    try:
        room.name = "Team Osprey"
        room.save()
        for url in (first, second):
            until(
                lambda url=url: (
                    read_room(url, raw, room.pk)["result"]["structuredContent"]["name"]
                    == "Team Osprey"
                ),
                f"{url} to read the new name",
                seconds=10,  # far below what it would otherwise remember (REMEMBER_S)
            )
        revoke_access_token(token=token)
        for url in (first, second):
            until(
                lambda url=url: read_room(url, raw, room.pk)["status"] == 401,
                f"{url} to refuse the revoked token",
                seconds=10,  # far below what it would otherwise trust (TRUST_S)
            )
    finally:
        wakeups.configure(settings.REDIS_URL, settings.REDIS_PREFIX)
    assert read_room(second, raw, room.pk)["error"]["code"] == -32001
