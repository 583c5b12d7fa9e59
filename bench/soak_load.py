"""The soak's clients (bench/soak.py): proposers, owners deciding in the console, websocket
viewers and messaging agents, each recording what it did in a shared Tally."""

import asyncio
import json
import re
import time
from collections import defaultdict
from dataclasses import dataclass, field

import httpx
from websockets.asyncio.client import connect as websocket_connect

WAIT_PATH = "/api/v1/agents/messages/wait"
SEND_PATH = "/api/v1/agents/messages"
HIDDEN = re.compile(r'name="(csrfmiddlewaretoken|content_hash)" value="([^"]+)"')


@dataclass
class Tally:
    latencies: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    errors: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))
    proposals: list[tuple[str, str]] = field(default_factory=list)  # (proposal id, room id)
    decided: set[str] = field(default_factory=set)
    sent: set[str] = field(default_factory=set)
    received: defaultdict[str, int] = field(default_factory=lambda: defaultdict(int))
    seen_events: dict[int, list[int]] = field(default_factory=dict)  # viewer -> sequences

    async def timed(self, operation: str, call, ok=(200, 201)) -> httpx.Response | None:
        started = time.monotonic()
        try:
            response = await call()
        except httpx.HTTPError as exc:
            self.errors[operation].append(repr(exc))
            return None
        self.latencies[operation].append((time.monotonic() - started) * 1000)
        if response.status_code not in ok:
            self.errors[operation].append(f"{response.status_code} {response.text[:200]}")
            return None
        return response


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def app_files(key: str) -> dict[str, str]:
    return {"src/App.tsx": f"export default function App() {{ return <p>{key}</p>; }}\n"}


async def proposers(client, url, world, tally: Tally, until: float) -> None:
    """The proposing agents together: one proposal a second, taking turns."""
    n = 0
    while time.monotonic() < until:
        agent = world["proposers"][n % len(world["proposers"])]
        room = world["rooms"][n % len(world["rooms"])]
        key = f"soak-{n:06d}"
        body = {"name": f"App {n}", "files": app_files(key), "idempotency_key": key}
        response = await tally.timed(
            "propose",
            lambda room=room, body=body, agent=agent: client.post(
                f"{url}/api/v1/rooms/{room['id']}/proposals/snippet",
                json=body,
                headers=bearer(agent),
            ),
        )
        if response is not None:
            tally.proposals.append((response.json()["proposal_id"], room["id"]))
        n += 1
        await asyncio.sleep(1)


async def owner(url, account: dict, tally: Tally, until: float) -> None:
    """An owner in the console: signs in, opens each new card of its Room, approves it."""
    async with httpx.AsyncClient(base_url=url, timeout=30, follow_redirects=False) as client:
        page = await client.get("/accounts/login/")
        token = dict(HIDDEN.findall(page.text))["csrfmiddlewaretoken"]
        signed_in = await client.post(
            "/accounts/login/",
            data={"login": account["username"], "password": account["password"]}
            | {"csrfmiddlewaretoken": token},
        )
        if signed_in.status_code != 302:
            tally.errors["console_login"].append(str(signed_in.status_code))
            return
        while time.monotonic() < until:
            mine = [
                p
                for p, room in tally.proposals
                if room == account["room_id"] and p not in tally.decided
            ]
            for proposal_id in mine:
                await decide(client, proposal_id, tally)
            await asyncio.sleep(0.5)


async def decide(client, proposal_id: str, tally: Tally) -> None:
    card = await tally.timed("console_card", lambda: client.get(f"/proposals/{proposal_id}/"))
    if card is None:
        return
    fields = dict(HIDDEN.findall(card.text))
    if "content_hash" not in fields:
        return  # decided already
    tally.decided.add(proposal_id)
    await tally.timed(
        "console_approve",
        lambda: client.post(f"/proposals/{proposal_id}/approve/", data=fields),
        ok=(302,),
    )


async def viewer(url, room_id: str, token: str, n: int, tally: Tally, until: float) -> None:
    """A websocket viewer of a Room's feed; reconnects after its last event, like feed.js."""
    seen = tally.seen_events.setdefault(n, [])
    ws_url = url.replace("http://", "ws://") + f"/ws/rooms/{room_id}/events/"
    while time.monotonic() < until:
        last = seen[-1] if seen else 0
        try:
            async with websocket_connect(
                f"{ws_url}?after_sequence={last}", additional_headers=bearer(token)
            ) as socket:
                while time.monotonic() < until:
                    try:
                        raw = await asyncio.wait_for(socket.recv(), 1)
                    except TimeoutError:
                        continue
                    event = json.loads(raw)
                    if event.get("sequence", 0) > (seen[-1] if seen else 0):
                        seen.append(event["sequence"])
        except Exception as exc:  # noqa: BLE001 - counted, then reconnect like the console
            tally.errors["websocket"].append(repr(exc))
            await asyncio.sleep(1)


async def messager(client, url, world, n: int, tally: Tally, until: float) -> None:
    """An agent that sends to the next one every few seconds and long-polls its own inbox."""
    agents = world["messagers"]
    me, to = agents[n], agents[(n + 1) % len(agents)]
    receiving = asyncio.ensure_future(inbox(client, url, me, tally, until + 10))
    sent = 0
    while time.monotonic() < until:
        body = f"{me['handle']}:{sent}"
        payload = {"to": to["handle"], "body": body, "idempotency_key": f"soak-{body}"}
        response = await tally.timed(
            "send",
            lambda payload=payload: client.post(
                url + SEND_PATH, json=payload, headers=bearer(me["token"])
            ),
        )
        if response is not None:
            tally.sent.add(body)
        sent += 1
        await asyncio.sleep(5)
    await receiving


async def inbox(client, url, me: dict, tally: Tally, until: float) -> None:
    after = 0
    while time.monotonic() < until:
        response = await tally.timed(
            "long_poll",
            lambda after=after: client.get(
                url + WAIT_PATH,
                params={"after_sequence": after, "timeout_s": 5},
                headers=bearer(me["token"]),
            ),
        )
        if response is None:
            await asyncio.sleep(0.5)
            continue
        page = response.json()
        for message in page["messages"]:
            tally.received[message["body"]] += 1
        after = page["next_after_sequence"]
