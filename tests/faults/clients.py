"""What the fault tests' clients do, as an agent or the console would: propose, send, poll,
retrying with the same idempotency key until an answer comes."""

import time

import httpx

from agents.longpoll import PATH as WAIT_PATH
from osfoundry.mcp.protocol import MCP_PATH

SEND_PATH = "/api/v1/agents/messages"


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def until(condition, what: str, seconds: float = 20, step: float = 0.02):
    deadline = time.monotonic() + seconds
    while not (result := condition()):
        assert time.monotonic() < deadline, f"gave up waiting for {what}"
        time.sleep(step)
    return result


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
