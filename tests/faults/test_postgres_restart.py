"""PostgreSQL stopped for 10 s under traffic, then started again: every request meanwhile gets
503 with Retry-After and a JSON error (never a 500), nothing is half-written (each refused
proposal and message is new when retried with its key), and every worker recovers without a
restart, its database threads' kept connections included (CONN_HEALTH_CHECKS)."""

import threading
import time

import httpx
import pytest

from tests.faults.clients import (
    is_ready,
    mcp_request,
    parked_total,
    poll,
    proposals_and_cards,
    propose,
    send,
)
from tests.polling import until

OUTAGE_S = 10
assert OUTAGE_S * 2 < 50  # the retries below fit in one page of messages


def during_the_outage(client, url, data, receiver, n) -> dict[str, httpx.Response]:
    """One request on every route, as clients would send them while the database is down."""
    return {
        "proposal": propose(client, url, data, f"during-{n}"),
        "send": send(
            client, url, data["sender"], receiver["handle"], f"during {n}", f"send-during-{n}"
        ),
        "mcp": mcp_request(client, url, data["sender"], "tools/list", {}),
        "readyz": client.get(url + "/readyz"),
    }


def assert_unavailable(refused: list[tuple[str, httpx.Response]]) -> None:
    for route, response in refused:
        assert response.status_code == 503, (route, response.status_code, response.text)
        assert response.headers["retry-after"] == "5", route
        error = response.json()["error"]
        if route == "mcp":  # a JSON-RPC error, the domain error in its data
            error = error["data"]["error"]
        assert error["code"] == ("not_ready" if route == "readyz" else "database_unavailable")


def retry_what_was_refused(client, url, data, receiver, rounds: int) -> None:
    """Nothing was half-written: each refused proposal and message is new when retried."""
    for i in range(1, rounds + 1):
        assert propose(client, url, data, f"during-{i}").status_code == 201
        sent = send(
            client, url, data["sender"], receiver["handle"], f"during {i}", f"send-during-{i}"
        )
        assert sent.status_code == 201


@pytest.fixture
def agents(seed_later):
    return seed_later(2)  # seeded while the workers start


def test_a_postgres_outage_answers_503_and_every_worker_recovers_without_a_restart(
    agents, deployment, services
):
    postgres, _redis = services
    data = agents.wait()
    receiver, parked = data["receivers"]
    url = deployment.url
    pids = [worker.process.pid for worker in deployment.workers]
    with httpx.Client(timeout=20) as client:
        assert propose(client, url, data, "before-1").status_code == 201
        for worker in deployment.workers:
            # Both workers' database threads hold a connection from before the outage.
            assert is_ready(worker.url)
            assert poll(client, worker.url, receiver["token"], 0, timeout_s=0).status_code == 200
        # One agent stays parked through the outage, on whichever worker nginx picks.
        answers: list[httpx.Response] = []
        waiter = threading.Thread(
            target=lambda: answers.append(poll(httpx.Client(timeout=60), url, parked["token"], 0))
        )
        waiter.start()
        until(lambda: parked_total(deployment) == 1, "the agent to park")

        postgres.stop()
        refused: list[tuple[str, httpx.Response]] = []
        n = 0
        outage_ends = time.monotonic() + OUTAGE_S
        while time.monotonic() < outage_ends:
            n += 1
            refused += during_the_outage(client, url, data, receiver, n).items()
            time.sleep(1)  # paces the clients: a round of requests a second
        postgres.start()

        assert_unavailable(refused)

        for worker in deployment.workers:
            until(lambda worker=worker: is_ready(worker.url), "the worker to be ready again")
        retry_what_was_refused(client, url, data, receiver, n)
        assert (
            send(client, url, data["sender"], parked["handle"], "after", "after-0001").status_code
            == 201
        )
        received = poll(client, url, receiver["token"], 0, timeout_s=0).json()
        # The agent parked through the outage is woken by the first message after it.
        waiter.join(30)

    assert [m["body"] for m in received["messages"]] == [f"during {i}" for i in range(1, n + 1)]
    assert [m["body"] for m in answers[0].json()["messages"]] == ["after"]
    assert proposals_and_cards(postgres, data["room_id"]) == (n + 1, n + 1)
    sequences = postgres.query(
        "SELECT sequence FROM rooms_roomevent WHERE room_id = %s ORDER BY sequence", data["room_id"]
    )
    assert [s for (s,) in sequences] == list(range(1, n + 2))
    assert [worker.process.pid for worker in deployment.workers] == pids
    assert all(worker.process.poll() is None for worker in deployment.workers)
