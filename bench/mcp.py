"""MCP endpoint throughput and latency, side by side with the official `mcp` package's server
and a bare ASGI floor, driven by `wrk` (Debian's `wrk`: apt-get install wrk).

    .venv/bin/python bench/mcp.py                   # SQLite, one uvicorn process per server
    .venv/bin/python bench/mcp.py --seconds 20 --concurrency 32
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/bench .venv/bin/python bench/mcp.py

Starts three servers on free 127.0.0.1 ports, one uvicorn worker each:
- osfoundry: osfoundry.asgi:application with a fresh database, seeded with the demo;
- reference: bench/mcp_reference_server.py, the `mcp` package's low-level server (stateless,
  JSON responses) publishing the same tools and running the same handlers (token check, argument
  validation, the same services in the same database threads);
- floor: a bare ASGI app answering every POST with a fixed small JSON body, what uvicorn and the
  client can do at all on this machine.
Each server first answers one call of each kind checked with httpx (a wrong answer stops the
bench); then `wrk` sends the same JSON-RPC POSTs for --seconds, --concurrency connections:
tools/list, read_room (a token check and one Room read on osfoundry) and
propose_room_snippet_app with the two-file standup timer (a new idempotency key per call, made
in wrk's Lua). wrk is not the bottleneck: it drives the floor at tens of thousands per second,
where an httpx client tops out near 500. Prints requests/s, p50 and p95 per call and server,
non-2xx answers, and osfoundry's ratio to the reference and to the floor.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import uuid
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.propose import manage  # noqa: E402
from tests.servers import start_uvicorn, stop_process  # noqa: E402

PATH = "/api/v1/external-mcp"
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


WRK = "/usr/bin/wrk"

# wrk's Lua: POST the body; with a key template, a new idempotency key (and name) per request,
# unique per wrk thread; at the end one RESULT line with what the bench prints.
LUA = """
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Accept"] = "application/json, text/event-stream"
wrk.headers["MCP-Protocol-Version"] = "2025-11-25"
wrk.headers["Authorization"] = "Bearer %(token)s"
local parts = {%(parts)s}
local threads = 0
function setup(thread)
  threads = threads + 1
  thread:set("tid", threads)
end
function init(args)
  counter = 0
  if #parts == 1 then wrk.body = parts[1] end
end
if #parts > 1 then
  request = function()
    counter = counter + 1
    local key = "%(run)s-" .. tid .. "-" .. counter
    return wrk.format(nil, nil, nil, parts[1] .. key .. parts[2] .. key .. parts[3])
  end
end
function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format("RESULT %%d %%d %%d %%d %%d\\n", summary.requests, summary.duration,
    latency:percentile(50), latency:percentile(95),
    e.status + e.connect + e.read + e.write + e.timeout))
end
"""
KEY = "@@KEY@@"


def lua_string(text: str) -> str:
    level = "=" * 4
    assert f"]{level}]" not in text
    return f"[{level}[{text}]{level}]"


def run_wrk(url: str, body: str, *, token: str, seconds: float, concurrency: int) -> dict:
    """`body` with KEY twice (a name and a key) gets a new key per request."""
    parts = body.split(KEY)
    script = LUA % {
        "token": token,
        "parts": ", ".join(lua_string(part) for part in parts),
        "run": uuid.uuid4().hex[:8],
    }
    with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as handle:
        handle.write(script)
    threads = min(2, concurrency)
    # wrk reads whole seconds only ("5.0s" is refused)
    duration = f"-d{max(1, round(seconds))}s"
    # A slow answer is a latency, not an error: wrk would give up on it after 2 s.
    command = [WRK, f"-t{threads}", f"-c{concurrency}", duration, "--timeout", "10s"]
    command += ["-s", handle.name, url]
    run = subprocess.run(command, capture_output=True, text=True)
    os.unlink(handle.name)
    if run.returncode:
        sys.exit(f"wrk failed ({run.returncode}): {run.stderr or run.stdout}")
    output = run.stdout
    line = next(line for line in output.splitlines() if line.startswith("RESULT "))
    requests, duration_us, p50_us, p95_us, errors = map(int, line.split()[1:])
    return {
        "per_s": requests / (duration_us / 1e6),
        "p50_ms": p50_us / 1000,
        "p95_ms": p95_us / 1000,
        "errors": errors,
    }


def check_answer(url: str, body: str, token: str) -> None:
    """One call, checked: the bench times right answers only."""
    key = uuid.uuid4().hex
    headers = {**HEADERS, "authorization": f"Bearer {token}"}
    response = httpx.post(url, content=body.replace(KEY, key).encode(), headers=headers)
    data = response.json()
    if response.status_code != 200 or "error" in data or data.get("result", {}).get("isError"):
        raise SystemExit(f"{url}: unexpected answer {response.status_code} {data}")


def list_body() -> str:
    return json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})


def read_body(room_id: str) -> str:
    params = {"name": "read_room", "arguments": {"room_id": room_id}}
    return json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params})


def propose_body(room_id: str) -> str:
    from rooms.demo import standup_timer_files

    arguments = {
        "room_id": room_id,
        "name": f"Standup timer {KEY}",
        "files": standup_timer_files(),
        "idempotency_key": f"bench-{KEY}",
    }
    params = {"name": "propose_room_snippet_app", "arguments": arguments}
    return json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params})


FLOOR_ANSWER = b'{"jsonrpc":"2.0","id":1,"result":{}}'


async def floor_app(scope, receive, send):
    """The bare ASGI floor: reads the body, answers a fixed small JSON."""
    if scope["type"] != "http":
        return
    more = True
    while more:
        more = (await receive()).get("more_body", False)
    headers = [(b"content-type", b"application/json")]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": FLOOR_ANSWER})


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=10, help="wrk's run per call and server")
    parser.add_argument("--concurrency", type=int, default=16)
    args = parser.parse_args()
    if not os.access(WRK, os.X_OK):
        raise SystemExit(f"{WRK} is needed: apt-get install wrk")

    env = {**os.environ, "STATIC_MANIFEST": "0", "RATE_LIMIT": "100000000"}
    folder = tempfile.mkdtemp(prefix="osfoundry-bench-")
    if not env.get("DATABASE_URL"):
        env["DATABASE_URL"] = f"sqlite:///{folder}/bench.sqlite3"
        env.setdefault("SECRET_KEY", "bench-only-secret-key-that-is-long-enough-0123456789")
    manage(env, "migrate", "--noinput", "-v0")
    seed = json.loads(manage(env, "seed_demo", "--json"))
    token, room_id = seed["agent_tokens"]["write"], seed["room_id"]

    servers = {
        "osfoundry": start("osfoundry.asgi:application", [], env, PATH),
        "reference": start("bench.mcp_reference_server:create_app", ["--factory"], env, "/mcp"),
        "floor": start("bench.mcp:floor_app", ["--lifespan", "off"], env, "/"),
    }
    calls = [
        ("tools/list", list_body()),
        ("read_room", read_body(room_id)),
        ("propose_room_snippet_app", propose_body(room_id)),
    ]
    rows = []
    try:
        for name in ("osfoundry", "reference"):
            for _label, body in calls:
                for _ in range(20):  # warm: imports, connections, the engine
                    check_answer(servers[name][1], body, token)
        floor = run_wrk(
            servers["floor"][1],
            list_body(),
            token=token,
            seconds=args.seconds,
            concurrency=args.concurrency,
        )
        for label, body in calls:
            mine, theirs = (
                run_wrk(
                    servers[name][1],
                    body,
                    token=token,
                    seconds=args.seconds,
                    concurrency=args.concurrency,
                )
                for name in ("osfoundry", "reference")
            )
            rows.append((label, mine, theirs))
    finally:
        for process, _url in servers.values():
            stop_process(process)

    print(f"wrk, {args.concurrency} connections, {args.seconds:.0f} s per row, ", end="")
    print(f"one uvicorn worker per server, {os.cpu_count()} CPUs")
    print(f"{'call':26} {'server':10} {'req/s':>9} {'p50 ms':>8} {'p95 ms':>8} {'errors':>7}")
    print_row("any POST", "floor", floor)
    for label, mine, theirs in rows:
        print_row(label, "osfoundry", mine)
        print_row("", "reference", theirs)
        print(
            f"{'':26} {'':10} {mine['per_s'] / theirs['per_s']:8.2f}x the reference, "
            f"{mine['per_s'] / floor['per_s']:.2f}x the floor"
        )
    if any(mine["errors"] for _label, mine, _theirs in rows):
        raise SystemExit("some of osfoundry's answers were not 2xx: see the errors column")


def print_row(label: str, server: str, row: dict) -> None:
    print(
        f"{label:26} {server:10} {row['per_s']:9.0f} {row['p50_ms']:8.2f} "
        f"{row['p95_ms']:8.2f} {row['errors']:7}"
    )


if __name__ == "__main__":
    main()
