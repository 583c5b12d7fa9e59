"""A client that goes away mid-request on every path (proposal, send, long-poll, websocket),
through nginx, leaves nothing behind: no parked waiter, no task, no database connection beyond
the kept ones, and no half-written proposal."""

import socket

import httpx

from agents.longpoll import PATH as WAIT_PATH
from osfoundry.http import dumps
from tests.faults.clients import (
    SEND_PATH,
    Feed,
    health,
    parked_total,
    poll,
    proposal_body,
    proposals_and_cards,
    send,
)
from tests.polling import until

TIMES = 5  # disconnects per path
DATABASE_THREADS = 4  # tests/faults/conftest.py gives each worker 4


def request_bytes(method: str, path: str, token: str, body: dict | None = None) -> bytes:
    data = dumps(body) if body is not None else b""
    head = [f"{method} {path} HTTP/1.1", "Host: 127.0.0.1", f"Authorization: Bearer {token}"]
    if body is not None:
        head += ["Content-Type: application/json", f"Content-Length: {len(data)}"]
    return ("\r\n".join(head) + "\r\n\r\n").encode() + data


def send_and_leave(url: str, raw: bytes, *, wait_for=None) -> None:
    """Sends a request, then closes the connection before reading any answer."""
    port = int(url.rsplit(":", 1)[1])
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(raw)
        if wait_for is not None:
            until(wait_for, "the request to reach its worker")


def warm_up(worker_url: str, data: dict) -> None:
    """One complete call on every path, so that what a worker keeps (its Redis subscription,
    its database threads' connections) exists before the count starts."""
    receiver = data["receivers"][0]
    with httpx.Client(timeout=20) as client:
        assert poll(client, worker_url, receiver["token"], 0, timeout_s=0).status_code == 200
        reply = send(
            client,
            worker_url,
            data["sender"],
            receiver["handle"],
            "warm",
            f"warm-{worker_url[-5:]}",
        )
        assert reply.status_code == 201
    feed = Feed(worker_url, data["room_id"], data["proposer"]).start()
    until(lambda: feed.connects == 1, "the feed to open")
    feed.stop()


def test_clients_that_leave_mid_request_leave_nothing_behind(deployment, services, seed):
    postgres, _redis = services
    data = seed(receivers=2)
    (receiver, idle), room = data["receivers"], data["room_id"]  # idle: is sent nothing
    for worker in deployment.workers:
        warm_up(worker.url, data)
    until(lambda: parked_total(deployment) == 0, "the warm-up to end")
    tasks_before = [health(worker.url)["tasks"] for worker in deployment.workers]
    connections_before = postgres.connections()

    url = deployment.url
    proposal_path = f"/api/v1/rooms/{room}/proposals/snippet"
    for n in range(TIMES):
        body = proposal_body(f"gone-{n:04d}")
        send_and_leave(url, request_bytes("POST", proposal_path, data["proposer"], body))
        message = {
            "to": receiver["handle"],
            "body": f"gone {n}",
            "idempotency_key": f"gone-m-{n:04d}",
        }
        send_and_leave(url, request_bytes("POST", SEND_PATH, data["sender"], message))
        wait = f"{WAIT_PATH}?timeout_s=50&after_sequence=0"
        send_and_leave(
            url,
            request_bytes("GET", wait, idle["token"]),
            wait_for=lambda: parked_total(deployment) == 1,
        )
        websocket = (
            f"GET /ws/rooms/{room}/events/ HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            f"Authorization: Bearer {data['proposer']}\r\nUpgrade: websocket\r\n"
            "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
            "Sec-WebSocket-Version: 13\r\n\r\n"
        ).encode()
        send_and_leave(url, websocket)

    until(lambda: parked_total(deployment) == 0, "every parked waiter to be gone")
    for worker, before in zip(deployment.workers, tasks_before, strict=True):
        until(lambda w=worker, b=before: health(w.url)["tasks"] <= b, "the tasks to end")
    connections_after = postgres.connections()
    # Django's request threads keep none (CONN_MAX_AGE=0); each worker's database threads keep
    # one each at most.
    assert connections_after <= max(connections_before, 2 * DATABASE_THREADS)
    # Each proposal the server took is whole: a row and its event, or neither.
    proposals, events = proposals_and_cards(postgres, room)
    assert proposals == events
    print(
        f"\ntasks per worker {tasks_before}; database connections {connections_before} -> "
        f"{connections_after}; proposals kept {proposals} of {TIMES}"
    )
