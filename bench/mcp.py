"""MCP endpoint throughput and latency, side by side with the official `mcp` package's server.

    .venv/bin/python bench/mcp.py                   # SQLite, one uvicorn process per server
    .venv/bin/python bench/mcp.py --requests 4000 --concurrency 32
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/bench .venv/bin/python bench/mcp.py

Starts two servers on free 127.0.0.1 ports, one uvicorn worker each:
- osfoundry: osfoundry.asgi:application with a fresh database, seeded with the demo;
- reference: bench/mcp_reference_server.py, the `mcp` package's low-level server (stateless,
  JSON responses) publishing the same tools and running the same handlers (token check, argument
  validation, the same services in the same database threads).
Then sends the same JSON-RPC POSTs to both, `--concurrency` at a time: tools/list, read_room
(one short database read on osfoundry) and propose_room_snippet_app with the two-file standup
timer (a new proposal per call on osfoundry).
Prints requests/s, p50 and p95 for each, and the ratio osfoundry / reference (higher is better
for requests/s). The client runs on the same machine, so absolute figures are a floor.
"""

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.propose import manage  # noqa: E402
from tests.servers import start_uvicorn, stop_process  # noqa: E402

HEADERS = {
    "content-type": "application/json",
    "accept": "application/json, text/event-stream",
    "mcp-protocol-version": "2025-11-25",
}


def answers_mcp(path: str):
    """A readiness check for start_uvicorn: the MCP endpoint at `path` answers tools/list."""

    def is_ready(base_url: str) -> bool:
        message = {"jsonrpc": "2.0", "id": 0, "method": "tools/list"}
        try:
            httpx.post(base_url + path, json=message, headers=HEADERS, timeout=1)
        except httpx.HTTPError:
            return False
        return True

    return is_ready


def start(app: str, options: list[str], env: dict, path: str) -> tuple[subprocess.Popen, str]:
    server, base_url = start_uvicorn(
        env=env,
        app=app,
        options=[*options, "--no-access-log"],
        log_level="warning",
        cwd=ROOT,
        is_ready=answers_mcp(path),
    )
    return server, base_url + path


async def load(url: str, bodies, *, concurrency: int, token: str) -> dict:
    headers = {**HEADERS, "authorization": f"Bearer {token}"}
    latencies: list[float] = []
    queue = iter(bodies)
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)

    async def worker(client):
        for body in queue:
            started = time.perf_counter()
            response = await client.post(url, content=body, headers=headers)
            latencies.append(time.perf_counter() - started)
            data = response.json()
            if response.status_code != 200 or "error" in data or data["result"].get("isError"):
                raise SystemExit(f"{url}: unexpected answer {response.status_code} {data}")

    async with httpx.AsyncClient(limits=limits, timeout=60) as client:
        started = time.perf_counter()
        await asyncio.gather(*(worker(client) for _ in range(concurrency)))
        elapsed = time.perf_counter() - started
    latencies.sort()
    return {
        "per_s": len(latencies) / elapsed,
        "p50_ms": statistics.median(latencies) * 1000,
        "p95_ms": latencies[max(0, int(len(latencies) * 0.95) - 1)] * 1000,
    }


def list_bodies(total: int):
    message = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    return [json.dumps(message).encode()] * total


def read_bodies(total: int, room_id: str):
    message = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "read_room", "arguments": {"room_id": room_id}},
    }
    return [json.dumps(message).encode()] * total


def propose_bodies(total: int, room_id: str):
    from rooms.demo import standup_timer_files

    run = uuid.uuid4().hex[:8]
    files = standup_timer_files()
    return [
        json.dumps(
            {
                "jsonrpc": "2.0",
                "id": i,
                "method": "tools/call",
                "params": {
                    "name": "propose_room_snippet_app",
                    "arguments": {
                        "room_id": room_id,
                        "name": f"Standup timer {run}-{i}",
                        "files": files,
                        "idempotency_key": f"bench-{run}-{i}",
                    },
                },
            }
        ).encode()
        for i in range(total)
    ]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=2000, help="tools/list calls per server")
    parser.add_argument("--proposals", type=int, default=500, help="propose calls per server")
    parser.add_argument("--concurrency", type=int, default=16)
    args = parser.parse_args()

    env = {**os.environ, "STATIC_MANIFEST": "0", "RATE_LIMIT": "1000000"}
    folder = tempfile.mkdtemp(prefix="osfoundry-bench-")
    if not env.get("DATABASE_URL"):
        env["DATABASE_URL"] = f"sqlite:///{folder}/bench.sqlite3"
        env.setdefault("SECRET_KEY", "bench-only-secret-key-that-is-long-enough-0123456789")
    manage(env, "migrate", "--noinput", "-v0")
    seed = json.loads(manage(env, "seed_demo", "--json"))
    token, room_id = seed["agent_tokens"]["write"], seed["room_id"]

    ours, ours_url = start("osfoundry.asgi:application", [], env, "/api/v1/external-mcp")
    ref, ref_url = start("bench.mcp_reference_server:create_app", ["--factory"], env, "/mcp")
    rows = []
    try:
        for label, bodies in (
            ("tools/list", lambda: list_bodies(args.requests)),
            ("read_room", lambda: read_bodies(args.requests, room_id)),
            ("propose_room_snippet_app", lambda: propose_bodies(args.proposals, room_id)),
        ):
            # Warm both (imports, connections), then measure each in turn.
            for url in (ours_url, ref_url):
                asyncio.run(load(url, bodies()[:50], concurrency=4, token=token))
            mine = asyncio.run(load(ours_url, bodies(), concurrency=args.concurrency, token=token))
            theirs = asyncio.run(load(ref_url, bodies(), concurrency=args.concurrency, token=token))
            rows.append((label, mine, theirs))
    finally:
        for server in (ours, ref):
            stop_process(server)

    print(f"concurrency {args.concurrency}, one uvicorn worker per server, {os.cpu_count()} CPUs")
    print(f"{'call':26} {'server':10} {'req/s':>9} {'p50 ms':>8} {'p95 ms':>8}   ratio (req/s)")
    for label, mine, theirs in rows:
        for name, row in (("osfoundry", mine), ("reference", theirs)):
            ratio = f"{mine['per_s'] / theirs['per_s']:.2f}x" if name == "osfoundry" else ""
            print(
                f"{label:26} {name:10} {row['per_s']:9.0f} {row['p50_ms']:8.1f} "
                f"{row['p95_ms']:8.1f}   {ratio}"
            )


if __name__ == "__main__":
    main()
