"""SIGTERM to a worker drains it: a parked long-poll answers `[]` at once instead of being cut,
a request in flight finishes, the websocket feed closes with 1012 (service restart, on which the
console reconnects: static/rooms/feed.js gives up on 4401 and 4404 only), and the process
exits cleanly."""

import json
import signal
import socket
import threading

import httpx
import pytest
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect as websocket_connect

from agents.longpoll import PATH as WAIT_PATH
from rooms.models import Proposal
from tests.polling import until
from tests.servers import ROOT, start_uvicorn, stop_process, worker_env


@pytest.fixture
def worker(transactional_db, tmp_path):
    """One uvicorn worker, with its start-up (lifespan) as in production; (process, url, log)."""
    process, url = start_uvicorn(
        env=worker_env("graceful-shutdown-test"),
        log_path=tmp_path / "worker.log",
        options=["--no-access-log", "--timeout-graceful-shutdown", "30"],
        cwd=ROOT,
    )
    yield process, url, tmp_path / "worker.log"
    if process.poll() is None:
        stop_process(process)


def start_partial_post(url: str, path: str, token: str, body: bytes) -> tuple[socket.socket, bytes]:
    """A POST whose headers and first half of the body are sent: in flight, not finished.
    Returns the socket and the rest of the body."""
    port = int(url.rsplit(":", 1)[1])
    sock = socket.create_connection(("127.0.0.1", port), timeout=30)
    head = (
        f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {token}\r\n"
        f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
    )
    half = len(body) // 2
    sock.sendall(head.encode() + body[:half])
    return sock, body[half:]


def read_status_and_body(sock: socket.socket) -> tuple[int, dict]:
    data = b""
    while b"\r\n\r\n" not in data:
        data += sock.recv(65536)
    head, _, rest = data.partition(b"\r\n\r\n")
    length = next(
        int(line.split(b":", 1)[1])
        for line in head.split(b"\r\n")
        if line.lower().startswith(b"content-length:")
    )
    while len(rest) < length:
        rest += sock.recv(65536)
    return int(head.split(b" ", 2)[1]), json.loads(rest)


def test_sigterm_answers_parked_polls_finishes_requests_and_closes_feeds_with_1012(
    worker, room, agent, agent_token, member, token_factory, files
):
    process, url, log = worker
    bob_token, _bob = agent_token(member, "bob-codex")
    agent_raw = token_factory(agent)
    answers = []
    poll = threading.Thread(
        target=lambda: answers.append(
            httpx.get(
                url + WAIT_PATH,
                params={"timeout_s": 50},
                headers={"Authorization": f"Bearer {bob_token}"},
                timeout=20,  # well under the 50 s park: only an early answer arrives in time
            )
        )
    )
    poll.start()
    until(lambda: httpx.get(url + "/healthz").json()["parked_waits"] == 1, "the poll to park")
    feed = websocket_connect(
        url.replace("http://", "ws://") + f"/ws/rooms/{room.pk}/events/",
        additional_headers={"Authorization": f"Bearer {agent_raw}"},
        open_timeout=10,
        legacy=True,  # held open across the signal, not in a with block
    )
    body = json.dumps({"name": "Timer", "files": files, "idempotency_key": "drain-0001"})
    in_flight, rest = start_partial_post(
        url, f"/api/v1/rooms/{room.pk}/proposals/snippet", agent_raw, body.encode()
    )
    # Served after the POST's connection was accepted: the POST is the worker's, in flight.
    assert httpx.get(url + "/healthz").status_code == 200

    process.send_signal(signal.SIGTERM)

    poll.join(30)
    assert answers[0].status_code == 200
    assert answers[0].json()["messages"] == []
    with pytest.raises(ConnectionClosed) as closed:
        feed.recv(timeout=20)
    assert closed.value.rcvd is not None and closed.value.rcvd.code == 1012
    in_flight.sendall(rest)
    status, answer = read_status_and_body(in_flight)
    in_flight.close()
    assert status == 201
    assert Proposal.objects.filter(pk=answer["proposal_id"]).exists()
    # uvicorn raises the signal again once it has shut down cleanly, so the exit status says
    # SIGTERM; its log says whether the shutdown finished.
    assert process.wait(30) == -signal.SIGTERM
    assert "Finished server process" in log.read_text()
    assert "Cancel" not in log.read_text()  # nothing was cut at the graceful timeout
