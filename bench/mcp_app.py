"""The MCP endpoint's own cost per call, without HTTP: µs per call of osfoundry's ASGI app in
this process, the figure a cache in the lean routes has to move.

    .venv/bin/python bench/mcp_app.py
    .venv/bin/python bench/mcp_app.py --calls 5000 --rounds 7

bench/mcp.py measures what a client sees through uvicorn and a socket, where the server's
HTTP work and the machine's noise are most of each call; this one drives the same JSON-RPC
POSTs (tools/list, read_room) straight into osfoundry.asgi:application with an in-memory ASGI
scope, on a fresh SQLite database seeded with the demo. It warms up, then times `--rounds`
rounds of `--calls` calls each and prints the best round per call (the least disturbed by
anything else the machine did). Every answer must be a 200, or the bench stops.

To weigh a change, run it in two checkouts one after the other, a few times each, and compare
(2026-12-07, with and without osfoundry/hot_settings.py, two runs each: tools/list 15.0 and
14.7 against 17.1 and 16.9 µs, read_room 32.3 and 32.4 against 36.1 and 36.5 µs).
"""

import argparse
import asyncio
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.mcp import HEADERS, PATH  # noqa: E402
from bench.propose import manage  # noqa: E402


def scope_for(body: bytes, token: str) -> dict:
    """The ASGI scope of bench/mcp.py's POST of `body` (its headers) to the endpoint."""
    headers = {
        "host": "127.0.0.1:8000",
        **HEADERS,
        "authorization": f"Bearer {token}",
        "content-length": str(len(body)),
    }
    return {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": PATH,
        "raw_path": PATH.encode(),
        "query_string": b"",
        "root_path": "",
        "headers": [(name.encode(), value.encode()) for name, value in headers.items()],
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 8000),
    }


async def call(application, body: bytes, token: str) -> None:
    delivered = False

    async def receive():
        nonlocal delivered
        if not delivered:
            delivered = True
            return {"type": "http.request", "body": body, "more_body": False}
        await asyncio.Event().wait()  # the client never hangs up while a call runs

    statuses = []

    async def send(message):
        if message["type"] == "http.response.start":
            statuses.append(message["status"])

    await application(scope_for(body, token), receive, send)
    if statuses != [200]:
        raise SystemExit(f"osfoundry answered {statuses} to {body[:80]!r}")


async def per_call_us(application, body: bytes, token: str, *, calls: int, rounds: int) -> float:
    for _ in range(300):  # warm: imports, the token's memory, the database connection
        await call(application, body, token)
    best = float("inf")
    for _ in range(rounds):
        started = time.perf_counter()
        for _ in range(calls):
            await call(application, body, token)
        best = min(best, (time.perf_counter() - started) / calls * 1e6)
    return best


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=3000, help="calls per round")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()

    folder = tempfile.mkdtemp(prefix="osfoundry-bench-")
    os.environ.update(
        {
            "DATABASE_URL": f"sqlite:///{folder}/bench.sqlite3",
            "SECRET_KEY": "bench-only-secret-key-that-is-long-enough-0123456789",
            "STATIC_MANIFEST": "0",
            "RATE_LIMIT": "100000000",
        }
    )
    os.environ.pop("REDIS_URL", None)
    manage(dict(os.environ), "migrate", "--noinput", "-v0")
    seed = json.loads(manage(dict(os.environ), "seed_demo", "--json"))
    token, room_id = seed["agent_tokens"]["write"], seed["room_id"]
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "osfoundry.settings")
    from osfoundry.asgi import application

    read_room = {"name": "read_room", "arguments": {"room_id": room_id}}
    bodies = {
        "tools/list": {"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        "read_room": {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": read_room},
    }
    print(f"osfoundry.asgi:application in process, best of {args.rounds} x {args.calls} calls")
    print(f"{'call':12} {'µs per call':>12}")
    for label, message in bodies.items():
        body = json.dumps(message).encode()
        us = asyncio.run(
            per_call_us(application, body, token, calls=args.calls, rounds=args.rounds)
        )
        print(f"{label:12} {us:12.1f}")


if __name__ == "__main__":
    main()
