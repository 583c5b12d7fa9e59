"""What the fault tests' clients do, as an agent or the console would: propose, send, poll,
retrying with the same idempotency key until an answer comes."""

import json
import threading
import time

import httpx
from websockets.exceptions import WebSocketException
from websockets.sync.client import connect as websocket_connect

from agents.longpoll import PATH as WAIT_PATH
from osfoundry.mcp.protocol import MCP_PATH

SEND_PATH = "/api/v1/agents/messages"


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def proposal_body(key: str) -> dict:
    files = {"src/App.tsx": f"export default function App() {{ return <p>{key}</p>; }}\n"}
    return {"name": f"App {key}", "files": files, "idempotency_key": key}


def propose(client: httpx.Client, url: str, seed: dict, key: str) -> httpx.Response:
    return client.post(
        f"{url}/api/v1/rooms/{seed['room_id']}/proposals/snippet",
        json=proposal_body(key),
        headers=bearer(seed["proposer"]),
    )


def send(client: httpx.Client, url: str, token: str, to: str, body: str, key: str):
    return client.post(
        url + SEND_PATH,
        json={"to": to, "body": body, "idempotency_key": key},
        headers=bearer(token),
    )


def poll(client: httpx.Client, url: str, token: str, after: int, timeout_s: int = 50):
    return client.get(
        url + WAIT_PATH,
        params={"after_sequence": after, "timeout_s": timeout_s},
        headers=bearer(token),
    )


def mcp_request(client: httpx.Client, url: str, token: str, method: str, params: dict):
    return client.post(
        url + MCP_PATH,
        json={"jsonrpc": "2.0", "id": 1, "method": method, "params": params},
        headers={
            **bearer(token),
            "Accept": "application/json, text/event-stream",
            "MCP-Protocol-Version": "2025-06-18",
        },
    )


def health(url: str) -> dict:
    return httpx.get(url + "/healthz", timeout=5).json()


def is_ready(url: str) -> bool:
    try:
        return httpx.get(url + "/readyz", timeout=5).status_code == 200
    except httpx.HTTPError:
        return False


class Feed:
    """The console's websocket feed as static/rooms/feed.js runs it: on any close it reconnects
    after a pause, resuming after the last sequence it saw; it keeps events in order, once."""

    def __init__(self, url: str, room_id: str, token: str):
        self.url = url.replace("http://", "ws://") + f"/ws/rooms/{room_id}/events/"
        self.token = token
        self.events: list[dict] = []
        self.connects = 0
        self.is_stopped = False
        self.thread = threading.Thread(target=self.run, daemon=True)

    @property
    def last(self) -> int:
        return self.events[-1]["sequence"] if self.events else 0

    def start(self) -> "Feed":
        self.thread.start()
        return self

    def stop(self) -> None:
        self.is_stopped = True
        self.thread.join(10)

    def run(self) -> None:
        while not self.is_stopped:
            try:
                with websocket_connect(
                    f"{self.url}?after_sequence={self.last}",
                    additional_headers=bearer(self.token),
                    open_timeout=5,
                ) as socket:
                    self.connects += 1
                    self.receive(socket)
            except (OSError, WebSocketException):
                pass
            if not self.is_stopped:
                time.sleep(0.5)  # feed.js waits before it reconnects

    def receive(self, socket) -> None:
        while not self.is_stopped:
            try:
                event = json.loads(socket.recv(timeout=0.2))
            except TimeoutError:
                continue
            if event.get("sequence", 0) > self.last:
                self.events.append(event)


def proposals_and_cards(postgres, room_id: str) -> tuple[int, int]:
    """The Room's stored proposals, and the proposal.created events its cards come from."""
    [(proposals,)] = postgres.query(
        "SELECT count(*) FROM rooms_proposal WHERE room_id = %s", room_id
    )
    [(cards,)] = postgres.query(
        "SELECT count(*) FROM rooms_roomevent WHERE room_id = %s AND type = 'proposal.created'",
        room_id,
    )
    return proposals, cards


def parked_total(deployment) -> int:
    """Waits parked in all the deployment's workers now."""
    return sum(health(worker.url)["parked_waits"] for worker in deployment.workers)
