"""Proposal throughput and the seeds' lost-response simulation, against a live server.

    .venv/bin/python bench/propose.py                      # SQLite, one uvicorn process
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/bench .venv/bin/python bench/propose.py

Starts uvicorn on a free 127.0.0.1 port with a fresh database, seeds the demo, then prints:
- what the runnable check (rooms/runtime/runnable.py: the Room's Sucrase in embedded V8) adds to a
  proposal, measured in this process: the engine's cold start, its memory, and p50/p95 for the
  2-file and the 21-file app (goal: p50 at most 20 ms for 21 files);
- proposals/s through the REST API for the 2-file standup timer and a 21-file app;
- 1,000 proposals with 5% of responses dropped after the server acted, retried by three client
  styles (content-derived key, same key on retry, fresh random key per attempt): owner cards,
  duplicates and pending apps in the launcher. Expected: 0 duplicates for all three.
"""

import argparse
import hashlib
import json
import logging
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.servers import start_uvicorn, stop_process  # noqa: E402


def answers_http(base_url: str) -> bool:
    # With --workers N the port takes connections before a worker can answer: wait for one.
    try:
        httpx.get(f"{base_url}/api/v1/openapi.json", timeout=1)
    except httpx.HTTPError:
        return False
    return True


def manage(env: dict, *args: str) -> str:
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=env,
        check=True,
        capture_output=True,
        text=True,
    ).stdout


def app_files(i: int, count: int) -> dict[str, str]:
    from rooms.demo import standup_timer_files

    files = standup_timer_files()
    parts = range(count - 2)
    # The entry loads every part, so the check walks the whole app, as the frame would.
    imports = "".join(f"import {{Part{n}}} from './components/Part{n}';\n" for n in parts)
    uses = ", ".join(f"Part{n}" for n in parts)
    files["src/App.tsx"] = imports + files["src/App.tsx"] + f"\n// variant {i}: {uses}\n"
    files["src/App.tsx"] += f"export const parts = [{uses}];\n" if uses else ""
    for n in parts:
        files[f"src/components/Part{n}.tsx"] = (
            f"export function Part{n}() {{\n  return <section>Part {n} of app {i}</section>;\n}}\n"
            + "".join(
                f"export function Part{n}x{k}() {{\n  return <p>Part {n}.{k} of app {i}</p>;\n}}\n"
                for k in range(7)
            )
        )
    return files


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def check_cost(total: int) -> None:
    """What rooms.runtime.runnable.check_app costs in this process: start, memory, per-app time."""
    from rooms.runtime import jsengine, runnable

    before = rss_mb()
    started = time.perf_counter()
    import py_mini_racer  # noqa: F401

    imported = time.perf_counter()
    jsengine.engine.warm()
    warmed = time.perf_counter()
    print(
        f"runnable check: engine start {(warmed - started) * 1000:.0f} ms (import "
        f"{(imported - started) * 1000:.0f} ms, context + bundles + first check "
        f"{(warmed - imported) * 1000:.0f} ms), RSS +{rss_mb() - before:.0f} MB"
    )
    print(f"{'app':>12} {'checks':>10} {'p50 ms':>8} {'p95 ms':>8} {'code KB':>8}")
    for count in (2, 21):
        apps = [app_files(i, count) for i in range(total)]
        times = []
        for files in apps:
            t = time.perf_counter()
            verdict = runnable.check_app(files)
            times.append(time.perf_counter() - t)
            assert verdict.runs and not verdict.unused, verdict
        times.sort()
        size = sum(len(text) for text in apps[0].values()) / 1024
        print(
            f"{str(count) + ' files':>12} {total:>10} {statistics.median(times) * 1000:>8.1f} "
            f"{times[int(len(times) * 0.95) - 1] * 1000:>8.1f} {size:>8.1f}"
        )
    print(f"RSS after {2 * total} checks: +{rss_mb() - before:.0f} MB")
    print()


def throughput(base, room_id, token, file_count, total, concurrency=8):
    headers = {"Authorization": f"Bearer {token}"}
    run = uuid.uuid4().hex[:8]
    bodies = [
        {
            "name": f"{file_count}-file app {i}",
            "files": app_files(i, file_count),
            "idempotency_key": f"bench-{run}-{file_count}-{i}",
        }
        for i in range(total)
    ]
    latencies = []

    def send(client, body):
        started = time.perf_counter()
        response = client.post(
            f"{base}/api/v1/rooms/{room_id}/proposals/snippet",
            json=body,
            headers=headers,
            timeout=30,
        )
        latencies.append(time.perf_counter() - started)
        assert response.status_code == 201, response.text

    with httpx.Client() as client, ThreadPoolExecutor(concurrency) as pool:
        started = time.perf_counter()
        list(pool.map(lambda b: send(client, b), bodies))
        elapsed = time.perf_counter() - started
    latencies.sort()
    return {
        "files": file_count,
        "proposals": total,
        "per_s": total / elapsed,
        "p50_ms": statistics.median(latencies) * 1000,
        "p95_ms": latencies[int(len(latencies) * 0.95) - 1] * 1000,
        "bytes": len(json.dumps(bodies[0])),
    }


def lost_responses(base, room_id, token, style, total=1000, drop=0.05, seed=1):
    """Every attempt really reaches the server; a dropped response is one the client never sees."""
    rng = random.Random(seed)
    headers = {"Authorization": f"Bearer {token}"}
    calls = 0
    run = uuid.uuid4().hex[:8]
    with httpx.Client() as client:
        for i in range(total):
            files = {"src/App.tsx": f"export default () => <p>{run} app {i}</p>;\n"}
            name = f"App {i}"
            if style == "content":
                digest = hashlib.sha256(json.dumps([room_id, name, files]).encode()).hexdigest()
                key = "snip-" + digest[:32]
            else:
                key = f"{style}-{run}-{i}"
            while True:
                if style == "random":
                    key = uuid.uuid4().hex
                calls += 1
                response = client.post(
                    f"{base}/api/v1/rooms/{room_id}/proposals/snippet",
                    json={"name": name, "files": files, "idempotency_key": key},
                    headers=headers,
                    timeout=30,
                )
                assert response.status_code in (200, 201), response.text
                if rng.random() >= drop:
                    break  # the client saw the response
    return calls


def count_cards(room_id):
    from rooms.models import LauncherApp, Proposal

    cards = Proposal.objects.filter(room_id=room_id).count()
    pending_in_launcher = LauncherApp.objects.filter(
        room_id=room_id, proposal__status=Proposal.Status.PENDING
    ).count()
    return cards, pending_in_launcher


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--small", type=int, default=300, help="2-file proposals to time")
    parser.add_argument("--large", type=int, default=100, help="21-file proposals to time")
    parser.add_argument("--lost", type=int, default=1000, help="proposals in the lost-response run")
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--checks", type=int, default=200, help="runnable checks to time")
    args = parser.parse_args()

    tmp = tempfile.mkdtemp(prefix="osf-bench-")
    env = {**os.environ, "STATIC_MANIFEST": "0", "ALLOWED_HOSTS": "127.0.0.1,localhost"}
    env["RATE_LIMIT"] = "1000000"  # one token makes every call: time the API, not the limit
    if not env.get("DATABASE_URL"):
        env["DATABASE_URL"] = f"sqlite:///{tmp}/bench.sqlite3"
    env.setdefault("SECRET_KEY", "bench-only-secret-key-0123456789abcdefghij")
    os.environ.update({k: env[k] for k in ("DATABASE_URL", "SECRET_KEY", "STATIC_MANIFEST")})
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "osfoundry.settings")
    manage(env, "flush", "--noinput") if "postgres" in env["DATABASE_URL"] else None
    manage(env, "migrate", "--noinput", "-v0")
    seed = json.loads(manage(env, "seed_demo", "--json"))
    import django

    django.setup()
    logging.getLogger("httpx").setLevel(logging.WARNING)
    from django.contrib.auth import get_user_model

    from rooms.models import Room

    token = seed["agent_tokens"]["write"]
    check_cost(args.checks)  # before the server starts: nothing else competes for the CPU
    server, base = start_uvicorn(
        env=env,
        cwd=ROOT,
        options=["--workers", str(args.workers), "--no-access-log"],
        log_level="warning",
        is_ready=answers_http,
    )
    try:
        db = "PostgreSQL" if "postgres" in env["DATABASE_URL"] else "SQLite"
        print(f"osFoundry propose benchmark — {db}, {args.workers} uvicorn worker(s), {base}")
        print(
            f"{'app':>12} {'proposals':>10} {'per s':>8} {'p50 ms':>8} {'p95 ms':>8} {'body B':>8}"
        )
        for count, total in ((2, args.small), (21, args.large)):
            row = throughput(base, seed["room_id"], token, count, total)
            print(
                f"{str(count) + ' files':>12} {row['proposals']:>10} {row['per_s']:>8.1f} "
                f"{row['p50_ms']:>8.1f} {row['p95_ms']:>8.1f} {row['bytes']:>8}"
            )
        print()
        print(
            f"lost responses: {args.lost} proposals, 5% of responses dropped after the server acted"
        )
        print(
            f"{'client style':>24} {'calls':>6} {'owner cards':>12} {'duplicates':>11} "
            f"{'pending in launcher':>20}"
        )
        # The seed's write token is the owner's (their falcon-builder agent): it proposes to
        # the owner's own Rooms.
        owner = get_user_model().objects.get(username="owner")
        for style, label in (
            ("content", "content-derived key"),
            ("same", "same key on retry"),
            ("random", "fresh random key"),
        ):
            room = Room.objects.create(
                project_id=seed["project_id"],
                name=f"bench {style} {uuid.uuid4().hex[:6]}",
                owner=owner,
            )
            calls = lost_responses(base, str(room.pk), token, style, total=args.lost)
            cards, pending = count_cards(room.pk)
            print(f"{label:>24} {calls:>6} {cards:>12} {cards - args.lost:>11} {pending:>20}")
    finally:
        stop_process(server)


if __name__ == "__main__":
    main()
