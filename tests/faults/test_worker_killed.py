"""kill -9 one of two workers while 200 agents are parked and 20 proposals are in flight.
Clients do what an agent does: retry a failed call with the same idempotency key, poll again
with after_sequence. Nothing is lost or doubled: 20 proposals, 20 cards; every agent re-parks
on the surviving worker, and each of the 50 sent a message meanwhile gets it, once."""

import asyncio

import httpx
import pytest

from agents.longpoll import PATH as WAIT_PATH
from tests.faults.clients import (
    SEND_PATH,
    bearer,
    health,
    parked_total,
    proposal_body,
    proposals_and_cards,
)
from tests.polling import until_async

AGENTS = 200
PROPOSALS = 20
MESSAGED = 50  # the first 50 agents are sent a message each


@pytest.fixture
def crowd(seed_later):
    return seed_later(AGENTS)  # seeded while the workers start


async def retried(call) -> httpx.Response:
    """An agent's retry loop: the same request (same idempotency key) until it is answered."""
    while True:
        try:
            response = await call()
        except httpx.TransportError:
            response = None
        if response is not None and response.status_code < 500:
            return response
        await asyncio.sleep(0.1)


async def agent(client, url: str, token: str, expected: int | None) -> list[dict]:
    """Polls until `expected` messages came (None: for ever), acknowledging with
    after_sequence."""
    after = 0
    received: list[dict] = []
    while expected is None or len(received) < expected:
        page = await retried(
            lambda after=after: client.get(
                url + WAIT_PATH,
                params={"after_sequence": after, "timeout_s": 20},
                headers=bearer(token),
            )
        )
        received += page.json()["messages"]
        after = page.json()["next_after_sequence"]
    return received


async def test_a_worker_killed_mid_traffic_loses_and_doubles_nothing(crowd, deployment, services):
    postgres, _redis = services
    data = crowd.wait()
    url, room, receivers = deployment.url, data["room_id"], data["receivers"]
    limits = httpx.Limits(max_connections=AGENTS + 50, max_keepalive_connections=AGENTS + 50)
    # The parked agents' connections apart: waiting for one of theirs would stall the senders.
    async with (
        httpx.AsyncClient(timeout=30, limits=limits) as parked,
        httpx.AsyncClient(timeout=30) as client,
    ):
        agents = [
            asyncio.ensure_future(agent(parked, url, r["token"], 1 if n < MESSAGED else None))
            for n, r in enumerate(receivers)
        ]
        await until_async(
            lambda: asyncio.to_thread(lambda: parked_total(deployment) == AGENTS),
            f"all {AGENTS} agents to park",
        )

        def propose(n: int):
            return client.post(
                f"{url}/api/v1/rooms/{room}/proposals/snippet",
                json=proposal_body(f"killed-{n:04d}"),
                headers=bearer(data["proposer"]),
            )

        def post(path: str, body: dict, key: str):
            return client.post(
                url + path, json={**body, "idempotency_key": key}, headers=bearer(data["sender"])
            )

        calls = [lambda n=n: propose(n) for n in range(PROPOSALS)]
        calls += [
            lambda r=r: post(
                SEND_PATH, {"to": r["handle"], "body": f"for {r['handle']}"}, f"m-{r['handle']}"
            )
            for r in receivers[:MESSAGED]
        ]
        answers = [asyncio.ensure_future(retried(call)) for call in calls]
        await asyncio.sleep(0.05)  # the first calls are on their way to both workers
        deployment.workers[0].kill()
        answered = await asyncio.wait_for(asyncio.gather(*answers), 25)
        received = await asyncio.wait_for(asyncio.gather(*agents[:MESSAGED]), 25)
        # The others polled on: every one of them is parked on the surviving worker now.
        survivor = deployment.workers[1].url
        await until_async(
            lambda: asyncio.to_thread(
                lambda: health(survivor)["parked_waits"] == AGENTS - MESSAGED
            ),
            "the other agents to park on the surviving worker",
        )
        for waiting in agents[MESSAGED:]:
            waiting.cancel()

    assert [
        response.status_code for response in answered if response.status_code not in (200, 201)
    ] == []
    proposal_ids = {response.json()["proposal_id"] for response in answered[:PROPOSALS]}
    assert len(proposal_ids) == PROPOSALS
    assert proposals_and_cards(postgres, room) == (PROPOSALS, PROPOSALS)
    for receiver, messages in zip(receivers[:MESSAGED], received, strict=True):
        assert [m["body"] for m in messages] == [f"for {receiver['handle']}"]
