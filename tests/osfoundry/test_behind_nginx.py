"""deploy/nginx.conf as users deploy it: Debian's nginx in front of two uvicorn workers on the
test database and Redis. A proposal, a long-poll delivery and the websocket feed work through
it, and the proxy refuses a body far past our own limit."""

import json
import os
import threading
import uuid
from urllib.parse import urlsplit

import httpx
import pytest
import redis
from websockets.sync.client import connect as websocket_connect

from agents.longpoll import PATH as WAIT_PATH
from rooms.models import Proposal
from tests.polling import HANG_GUARD_SECONDS, until
from tests.proxy import deploy, require_nginx
from tests.servers import require, worker_env

REDIS_URL = os.environ.get("REDIS_URL") or "redis://127.0.0.1:6379/0"


@pytest.fixture
def behind_nginx(transactional_db, tmp_path):
    require_nginx()
    parts = urlsplit(REDIS_URL)
    require(parts.hostname or "127.0.0.1", parts.port or 6379, "Redis")
    prefix = f"test-{uuid.uuid4().hex[:12]}"
    deployment = deploy(
        tmp_path, worker_env("behind-nginx-test", REDIS_URL=REDIS_URL, REDIS_PREFIX=prefix)
    )
    deployment.prefix = prefix  # type: ignore[attr-defined]
    yield deployment
    deployment.stop()


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def test_both_workers_are_ready_behind_the_proxy(behind_nginx):
    for target in [behind_nginx.url] + [worker.url for worker in behind_nginx.workers]:
        response = httpx.get(target + "/readyz")
        assert response.status_code == 200, response.text
        assert response.json()["status"] == "ready"


def test_a_proposal_and_its_retry_go_through_the_proxy(
    behind_nginx, room, agent, token_factory, files
):
    token = token_factory(agent)
    body = {"name": "Timer", "files": files, "idempotency_key": "nginx-0001"}
    url = f"{behind_nginx.url}/api/v1/rooms/{room.pk}/proposals/snippet"
    first = httpx.post(url, json=body, headers=bearer(token), timeout=20)
    assert first.status_code == 201, first.text
    again = httpx.post(url, json=body, headers=bearer(token), timeout=20)
    assert again.status_code == 200
    assert again.json()["proposal_id"] == first.json()["proposal_id"]
    assert Proposal.objects.filter(room=room).count() == 1


def test_a_body_far_past_our_limit_is_refused_by_the_proxy(
    behind_nginx, room, agent, token_factory
):
    url = f"{behind_nginx.url}/api/v1/rooms/{room.pk}/proposals/snippet"
    response = httpx.post(
        url,
        content=b"x" * (4 * 1024 * 1024),
        headers={**bearer(token_factory(agent)), "Content-Type": "application/json"},
        timeout=20,
    )
    assert response.status_code == 413


def test_a_long_poll_parked_through_the_proxy_gets_the_message(
    behind_nginx, agent_token, owner, member
):
    alice_token, _alice = agent_token(owner, "alice-claude")
    bob_token, bob = agent_token(member, "bob-codex")
    admin = redis.Redis.from_url(REDIS_URL)
    counted = f"{behind_nginx.prefix}:rate:{bob.connection_key}:*"
    answers = []
    thread = threading.Thread(
        target=lambda: answers.append(
            httpx.get(
                behind_nginx.url + WAIT_PATH,
                params={"timeout_s": 50},
                headers=bearer(bob_token),
                timeout=60,
            )
        )
    )
    thread.start()
    # The long-poll counts its call, then parks in the same step: once counted, it is parked.
    until(lambda: admin.keys(counted), "the poll to be counted")
    admin.close()
    sent = httpx.post(
        behind_nginx.url + "/api/v1/agents/messages",
        json={"to": "bob-codex", "body": "through nginx", "idempotency_key": "nginx-msg-1"},
        headers=bearer(alice_token),
        timeout=10,
    )
    assert sent.status_code == 201
    thread.join(60)
    assert answers[0].status_code == 200
    assert [m["body"] for m in answers[0].json()["messages"]] == ["through nginx"]


def test_the_websocket_feed_streams_events_through_the_proxy(
    behind_nginx, room, agent, token_factory, files
):
    token = token_factory(agent)
    ws_url = behind_nginx.url.replace("http://", "ws://") + f"/ws/rooms/{room.pk}/events/"
    with websocket_connect(
        ws_url, additional_headers=bearer(token), open_timeout=HANG_GUARD_SECONDS
    ) as feed:
        body = {"name": "Timer", "files": files, "idempotency_key": "nginx-ws-1"}
        response = httpx.post(
            f"{behind_nginx.url}/api/v1/rooms/{room.pk}/proposals/snippet",
            json=body,
            headers=bearer(token),
            timeout=20,
        )
        assert response.status_code == 201
        # A bound against a hang, not a speed check: under three suites at once the event once
        # took longer than 10 s to reach the feed of workers started moments before.
        event = json.loads(feed.recv(timeout=HANG_GUARD_SECONDS))
    assert event["type"] == "proposal.created"
    assert event["sequence"] == 1
