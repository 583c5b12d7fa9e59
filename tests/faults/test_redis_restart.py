"""Redis stopped for 10 s under traffic, then started again. PostgreSQL is the truth, so sends
and proposals keep succeeding (the rate limit counts in each process meanwhile); a waiter parked
on one worker gets a message sent through the other within the bridge's retry interval
(wakeups.bridge.MAX_BACKOFF_S, 2 s); once Redis is back the wake-up crosses workers by pub/sub
again; the console's feed reconnects and resumes from its last event without missing one."""

import threading
import time

import httpx
import redis

from tests.faults.clients import Feed, poll, propose, send
from tests.polling import until

OUTAGE_S = 10


def subscribers(redis_url: str, channel: str) -> int:
    client = redis.Redis.from_url(redis_url, socket_timeout=2)
    try:
        return dict(client.pubsub_numsub(channel)).get(channel.encode(), 0)
    finally:
        client.close()


def parked_on(worker_url: str, token: str, after: int, answers: list) -> threading.Thread:
    def wait():
        with httpx.Client(timeout=30) as client:
            answers.append((poll(client, worker_url, token, after), time.monotonic()))

    thread = threading.Thread(target=wait)
    thread.start()
    until(lambda: httpx.get(worker_url + "/healthz").json()["parked_waits"] == 1, "the park")
    return thread


def test_a_redis_outage_loses_nothing_and_wake_ups_cross_workers_again_after_it(
    deployment, services, seed
):
    _postgres, redis_server = services
    data = seed(receivers=1)
    bob = data["receivers"][0]
    waiting_on, sending_on = (worker.url for worker in deployment.workers)
    channel = f"{deployment.env['REDIS_PREFIX']}:wakeups:0"
    feed = Feed(deployment.url, data["room_id"], data["proposer"]).start()
    client = httpx.Client(timeout=20)
    assert propose(client, deployment.url, data, "before-1").status_code == 201
    answers: list = []
    waiter = parked_on(waiting_on, bob["token"], 0, answers)
    # Every worker subscribes as it starts (osfoundry.asgi's lifespan): it trusts what it
    # remembers (osfoundry.trust) only while it hears the others.
    workers = len(deployment.workers)
    until(lambda: subscribers(redis_server.url, channel) == workers, "the workers to subscribe")

    redis_server.stop()
    outage_ends = time.monotonic() + OUTAGE_S
    sent_at = time.monotonic()
    sent = send(client, sending_on, data["sender"], bob["handle"], "during", "during-0001")
    assert sent.status_code == 201
    # Charged in the sending process's own memory while Redis is down, not refused.
    assert int(sent.headers["x-ratelimit-remaining"]) > 0
    waiter.join(OUTAGE_S)
    assert answers, "the message sent during the outage did not reach the other worker's waiter"
    ((during, answered_at),) = answers
    assert [m["body"] for m in during.json()["messages"]] == ["during"]
    n = 0
    while time.monotonic() < outage_ends:
        n += 1
        assert propose(client, deployment.url, data, f"during-{n}").status_code == 201
        time.sleep(1)  # paces the agent: a proposal a second
    redis_server.start()

    until(
        lambda: subscribers(redis_server.url, channel) == workers, "the workers to subscribe again"
    )
    answers.clear()
    waiter = parked_on(waiting_on, bob["token"], during.json()["next_after_sequence"], answers)
    after_at = time.monotonic()
    after = send(client, sending_on, data["sender"], bob["handle"], "after", "after-0001")
    assert after.status_code == 201
    # Subscribed again, the worker no longer re-reads on its own: only the pub/sub wake-up can
    # answer the wait before its 50 s (the client gives up after 30).
    waiter.join(30)
    ((later, later_at),) = answers
    assert [m["body"] for m in later.json()["messages"]] == ["after"]
    assert propose(client, deployment.url, data, "after-001").status_code == 201
    client.close()

    total = n + 2
    until(lambda: feed.last == total, "the feed to catch up", seconds=15)
    feed.stop()
    assert [event["sequence"] for event in feed.events] == list(range(1, total + 1))
    print(
        f"\nsend -> delivery on the other worker: Redis down {answered_at - sent_at:.2f} s,"
        f" after restart {(later_at - after_at) * 1000:.0f} ms; feed connections {feed.connects}"
    )
