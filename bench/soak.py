"""A mixed-load soak through nginx to two workers on PostgreSQL + Redis.

    .venv/bin/python bench/soak.py                    # 5 minutes
    .venv/bin/python bench/soak.py --duration 60 --parked 500

For --duration seconds: --parked agents parked in wait_for_messages and re-polling every 50 s
(bench/longpoll.py's helper processes), 20 agents proposing one app a second between them, 5
owners approving each new card in the console (signed in, card page, approve form), 100
websocket viewers of the 5 Rooms, 50 agents messaging each other and long-polling with
after_sequence. Prints per operation p50 / p95 / errors, events written against events every
viewer received, messages sent against received, RSS per worker at minute 1 and at the end,
and the most database connections seen. Exits 1 on any error, lost or doubled event or message.
"""

import argparse
import asyncio
import json
import os
import secrets
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.longpoll import (  # noqa: E402
    percentile,
    prepare_database,
    raise_fd_limit,
    rss_mb,
    server_env,
    start_parkers,
)
from bench.soak_load import Tally, messager, owner, proposers, viewer  # noqa: E402
from tests.proxy import deploy  # noqa: E402
from tests.servers import stop_process  # noqa: E402

WORK = ROOT / "var" / "bench-soak"
PYTHON = sys.executable


def populate_world(path: Path) -> None:
    """Child process: 5 owners with a Room each, 20 proposers and 50 messagers (agents with
    tokens and handles, members of every Room), written to `path`."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "osfoundry.settings")
    import django

    django.setup()
    from django.contrib.auth import get_user_model

    from agents.services import claim_connected_profile
    from agents.tokens import create_access_token
    from osfoundry.auth import authenticate_bearer
    from rooms.models import Project, Room

    users = get_user_model()
    project = Project.objects.create(name="Soak")
    agents = []

    def agent(handle: str) -> dict:
        user = users.objects.create_user(handle, password=None)
        project.members.add(user)
        raw = create_access_token(user=user, scopes="osfoundry:read osfoundry:write")[1]
        principal = authenticate_bearer(raw)
        claim_connected_profile(user=user, connection_key=principal.token_key, handle=handle)
        agents.append(user)
        return {"handle": handle, "token": raw}

    proposer_agents = [agent(f"proposer-{n}") for n in range(20)]
    world = {
        "proposers": [a["token"] for a in proposer_agents],
        "messagers": [agent(f"messager-{n}") for n in range(50)],
        "rooms": [],
        "owners": [],
    }
    for n in range(5):
        password = secrets.token_urlsafe(12)
        person = users.objects.create_user(f"owner-{n}", password=password)
        room = Room.objects.create(
            project=project, name=f"Soak {n}", kind=Room.Kind.CLOUD, owner=person
        )
        room.members.add(*agents)
        world["rooms"].append({"id": str(room.pk)})
        world["owners"].append({"username": person.username, "password": password})
        world["owners"][-1]["room_id"] = str(room.pk)
    path.write_text(json.dumps(world))


def database_counts(database_url: str) -> dict:
    import psycopg

    with psycopg.connect(database_url, autocommit=True) as conn:
        name = database_url.rsplit("/", 1)[1]
        (connections,) = conn.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = %s AND pid <> pg_backend_pid()",
            (name,),
        ).fetchone()
        events = dict(
            conn.execute("SELECT room_id::text, max(sequence) FROM rooms_roomevent GROUP BY 1")
        )
    return {"connections": connections, "events": events}


async def run_load(url: str, world: dict, seconds: float, database_url: str, pids) -> tuple:
    import httpx

    tally = Tally()
    until = time.monotonic() + seconds
    samples = {"connections": 0, "rss_start": None}

    async def sample():
        while time.monotonic() < until:
            await asyncio.sleep(min(60, seconds / 5))
            if samples["rss_start"] is None:
                samples["rss_start"] = [rss_mb(pid) for pid in pids]  # minute 1
            counts = await asyncio.to_thread(database_counts, database_url)
            samples["connections"] = max(samples["connections"], counts["connections"])

    limits = httpx.Limits(max_connections=200, max_keepalive_connections=200)
    async with httpx.AsyncClient(timeout=60, limits=limits) as client:
        rooms = world["rooms"]
        await asyncio.gather(
            sample(),
            proposers(client, url, world, tally, until),
            *(owner(url, account, tally, until) for account in world["owners"]),
            *(
                viewer(url, rooms[n % 5]["id"], world["proposers"][n % 20], n, tally, until + 5)
                for n in range(100)
            ),
            *(messager(client, url, world, n, tally, until) for n in range(50)),
        )
    return tally, samples


def report(tally: Tally, world: dict, counts: dict, samples: dict, rss_end: list) -> bool:
    """Prints the table; True when nothing failed, was lost or came twice."""
    print(f"\n{'operation':<18} {'count':>7} {'p50 ms':>9} {'p95 ms':>9} {'errors':>7}")
    failed = False
    for operation in sorted(set(tally.latencies) | set(tally.errors)):
        values = tally.latencies.get(operation) or [0.0]
        errors = tally.errors.get(operation, [])
        failed |= bool(errors)
        print(
            f"{operation:<18} {len(tally.latencies.get(operation, [])):>7} "
            f"{statistics.median(values):>9.1f} {percentile(values, 0.95):>9.1f} {len(errors):>7}"
        )
        for error in errors[:3]:
            print(f"    {error}")
    written = {room["id"]: counts["events"].get(room["id"], 0) for room in world["rooms"]}
    short = 0
    for n, seen in tally.seen_events.items():
        room_id = world["rooms"][n % 5]["id"]
        if seen != list(range(1, written[room_id] + 1)):
            if not short:
                print(
                    f"viewer {n}: saw {seen[:3]}...{seen[-3:]} ({len(seen)}) of {written[room_id]}"
                )
            short += 1
    lost = len(tally.sent - set(tally.received))
    doubled = sum(1 for count in tally.received.values() if count > 1)
    print(
        f"\nevents written {sum(written.values())} in {len(written)} Rooms; "
        f"viewers with every event once, in order: {len(tally.seen_events) - short} of "
        f"{len(tally.seen_events)}"
    )
    print(
        f"messages sent {len(tally.sent)}, received {len(tally.received)}, lost {lost}, "
        f"doubled {doubled}; proposals {len(tally.proposals)}, approved {len(tally.decided)}"
    )
    for n, (start, end) in enumerate(zip(samples["rss_start"] or rss_end, rss_end, strict=True)):
        print(
            f"worker {n}: RSS {start:.0f} MB at minute 1, {end:.0f} MB at the end "
            f"({(end - start) / start * 100:+.1f}%)"
        )
    print(f"database connections, most seen: {samples['connections']}")
    return not (failed or short or lost or doubled)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--duration", type=float, default=300)
    parser.add_argument("--parked", type=int, default=2000)
    parser.add_argument(
        "--database-url", default="postgres://postgres@127.0.0.1:5432/osfoundry_soak"
    )
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/3")
    parser.add_argument("--populate-world")
    args = parser.parse_args()
    if args.populate_world:
        return populate_world(Path(args.populate_world)) or 0
    raise_fd_limit()
    WORK.mkdir(parents=True, exist_ok=True)
    agents_file, world_file = WORK / "agents.json", WORK / "world.json"
    prepare_database(args.database_url, args.parked, agents_file)
    env = server_env(args.database_url, args.redis_url)
    subprocess.run(
        [PYTHON, __file__, "--populate-world", str(world_file)],
        env=os.environ | env,
        cwd=ROOT,
        check=True,
    )
    world = json.loads(world_file.read_text())
    deployment = deploy(WORK, {**env, "DATABASE_THREADS": "8"})
    port = deployment.url.rsplit(":", 1)[1]
    helpers = start_parkers("ours", [f"127.0.0.1:{port}"], agents_file, 1, args.parked)
    try:
        pids = [worker.process.pid for worker in deployment.workers]
        print(f"{args.parked} agents parked; load for {args.duration:.0f} s", flush=True)
        tally, samples = asyncio.run(
            run_load(deployment.url, world, args.duration, args.database_url, pids)
        )
        rss_end = [rss_mb(pid) for pid in pids]
        counts = database_counts(args.database_url)
    finally:
        for helper in helpers:
            stop_process(helper)
        deployment.stop()
    return 0 if report(tally, world, counts, samples, rss_end) else 1


if __name__ == "__main__":
    sys.exit(main())
