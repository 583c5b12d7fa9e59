"""Long-poll delivery with many parked agents, against live servers.

    .venv/bin/python bench/longpoll.py                          # everything, bounded in time
    .venv/bin/python bench/longpoll.py --sizes 200,2000 --no-two-process
    .venv/bin/python bench/longpoll.py --sizes 200 --baseline-sizes "" --proxy

For each size N: park N agents in wait_for_messages (N-1 idle ones in helper client processes,
plus one target), then 20 times send one message to the target and time "committed -> client
has it" (from the moment after the send's commit, before any wake-up, to the moment the client
has read the whole response). The real server runs with bench/settings.py, which adds that
first moment to the send's response as X-Stored-At (bench/stored_at.py).
Prints p50/p95, the server's RSS and its idle CPU (N parked, no messages).

Side by side, in the same run, the seeds' design: one threading.Condition + notify_all and a
thread per waiter (ThreadingHTTPServer), parked and timed the same way; and the ratio.

Then the two-process mode: two uvicorn processes on PostgreSQL + Redis, N idle agents spread
over both, the target parked on one and every message sent through the other. With --proxy,
the same two processes behind deploy/nginx.conf (tests/proxy.py starts Debian's nginx): every
agent, the target and the sender go through nginx, which spreads them over both workers.

The file-descriptor limit is raised to its hard limit with resource.setrlimit; a process cannot
hold more connections than that, so a size above it is capped and the cap is printed.
"""

import argparse
import asyncio
import json
import os
import random
import resource
import secrets
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.proxy import start_nginx  # noqa: E402
from tests.servers import free_port, start_uvicorn, stop_process, wait_until_ready  # noqa: E402

WORK = ROOT / "var" / "bench-longpoll"
PYTHON = sys.executable
WAIT_PATH = "/api/v1/agents/messages/wait"
SEND_PATH = "/api/v1/agents/messages"
PER_CLIENT_PROCESS = 9_000  # parked connections per helper client process
CLK_TCK = os.sysconf("SC_CLK_TCK")


def raise_fd_limit() -> int:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    return hard


# ---------------------------------------------------------------------------------------------
# A minimal HTTP/1.1 client on raw asyncio streams: 10,000 parked requests must stay cheap on
# the client side too, or the client becomes what is measured.


async def request(reader, writer, method, path, headers, body=b""):
    lines = [f"{method} {path} HTTP/1.1", "Host: 127.0.0.1"]
    lines += [f"{name}: {value}" for name, value in headers.items()]
    if body:
        lines += ["Content-Type: application/json", f"Content-Length: {len(body)}"]
    writer.write(("\r\n".join(lines) + "\r\n\r\n").encode() + body)
    await writer.drain()
    return await read_response(reader)


async def read_response(reader):
    head = await reader.readuntil(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1])
    headers = {}
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        headers[name.strip().lower().decode()] = value.strip().decode()
    length = int(headers.get("content-length", 0))
    body = await reader.readexactly(length) if length else b""
    headers["x-read-at"] = time.time()  # the client has the whole response
    return status, headers, body


def wait_path(mode: str, agent: dict, after: int | None, timeout: int = 50) -> tuple[str, dict]:
    if mode == "ours":
        query = f"timeout_s={timeout}" + (f"&after_sequence={after}" if after is not None else "")
        return f"{WAIT_PATH}?{query}", {"Authorization": f"Bearer {agent['token']}"}
    return f"/wait?agent={agent['handle']}&after={after or 0}&timeout={timeout}", {}


async def park_forever(mode, host, port, agent, parked: list):
    """One idle agent: long-poll, and poll again whenever a call ends (timeout or message).

    The first call uses timeout_s=0, so its answer proves the server has authenticated the agent
    and read its inbox; only then does the agent count as parked. Its first park lasts a random
    5-50 s and every later one 50 s: agents that started at different times, so re-polls arrive
    at a steady rate from the start instead of in waves (the steady state being measured)."""
    while True:
        try:
            reader, writer = await asyncio.open_connection(host, port)
        except OSError:
            await asyncio.sleep(0.5)
            continue
        counted = False
        try:
            if mode == "ours":
                await request(reader, writer, "GET", *wait_path(mode, agent, None, 0))
            timeout = random.randint(5, 50)
            while True:
                path, headers = wait_path(mode, agent, None, timeout)
                timeout = 50
                writer.write(
                    (
                        f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                        + "".join(f"{k}: {v}\r\n" for k, v in headers.items())
                        + "\r\n"
                    ).encode()
                )
                if not counted:
                    parked[0] += 1
                    counted = True
                await read_response(reader)
        except (OSError, asyncio.IncompleteReadError):
            if counted:
                parked[0] -= 1
            writer.close()
            await asyncio.sleep(0.2)


async def park_worker(args):
    """Helper client process: park its share of agents, report, run until killed."""
    agents = json.loads(Path(args.agents_file).read_text())[args.start : args.start + args.count]
    targets = [(host, int(port)) for host, port in (a.split(":") for a in args.servers)]
    parked = [0]
    tasks = []
    for n, agent in enumerate(agents):
        host, port = targets[n % len(targets)]
        tasks.append(asyncio.ensure_future(park_forever(args.mode, host, port, agent, parked)))
        if n % 200 == 199:
            await asyncio.sleep(0.05)  # open connections in waves: the backlog is finite
    while True:
        print(f"parked {parked[0]}", flush=True)
        await asyncio.sleep(0.5)


# ---------------------------------------------------------------------------------------------
# The seeds' design, as the baseline: one Condition, notify_all, a thread per waiter.


def serve_baseline(port: int):
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
    from urllib.parse import parse_qs, urlsplit

    log: list[tuple[int, str, str, float]] = []
    cond = threading.Condition()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):
            pass

        def answer(self, data):
            body = json.dumps(data).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self):
            query = {k: v[0] for k, v in parse_qs(urlsplit(self.path).query).items()}
            agent, after = query["agent"], int(query.get("after", 0))
            deadline = time.monotonic() + float(query.get("timeout", 50))
            with cond:
                while True:
                    # Every waiter rescans the log after every notify_all: that is the cost.
                    mine = [m for m in log if m[1] == agent and m[0] > after]
                    remaining = deadline - time.monotonic()
                    if mine or remaining <= 0:
                        break
                    cond.wait(remaining)
            self.answer(
                {"messages": [{"sequence": s, "body": b, "stored_at": t} for s, _a, b, t in mine]}
            )

        def do_POST(self):
            data = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            with cond:
                sequence = len(log) + 1
                log.append((sequence, data["to"], data["body"], time.time()))
                cond.notify_all()
            self.answer({"sequence": sequence})

    class Server(ThreadingHTTPServer):
        daemon_threads = True
        request_queue_size = 4096

        def handle_error(self, request, client_address):
            if not isinstance(sys.exc_info()[1], ConnectionError):
                super().handle_error(request, client_address)  # parkers leaving are expected

    Server(("127.0.0.1", port), Handler).serve_forever()


# ---------------------------------------------------------------------------------------------
# Set-up of the real server's database


def populate(args):
    """Child process: N agent profiles with tokens in the database of DATABASE_URL."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "osfoundry.settings")
    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.utils import timezone

    from agents.models import AccessToken, AgentProfile
    from agents.tokens import PAT_PREFIX, hash_token

    owner, _ = get_user_model().objects.get_or_create(username="bench")
    AccessToken.objects.filter(user=owner).delete()
    AgentProfile.objects.filter(owner=owner).delete()
    raws = [PAT_PREFIX + secrets.token_urlsafe(24) for _ in range(args.count + 1)]
    now = timezone.now()
    tokens = AccessToken.objects.bulk_create(
        [
            AccessToken(
                user=owner,
                prefix=raw[:10],
                token_hash=hash_token(raw),
                scopes="osfoundry:read osfoundry:write",
                last_used_at=now,
            )
            for raw in raws
        ],
        batch_size=2000,
    )
    handles = ["bench-sender"] + [f"agent-{n}" for n in range(args.count)]
    AgentProfile.objects.bulk_create(
        [
            AgentProfile(handle=h, owner=owner, connection_key=f"pat:{t.pk}")
            for h, t in zip(handles, tokens, strict=True)
        ],
        batch_size=2000,
    )
    agents = [{"handle": h, "token": r} for h, r in zip(handles, raws, strict=True)]
    Path(args.agents_file).write_text(json.dumps(agents))


# The servers and their set-up commands use Redis only when server_env is given a redis_url.
NOT_INHERITED = ("REDIS_URL",)


def server_env(database_url: str, redis_url: str = "") -> dict:
    """What the servers and their set-up commands set over this process's environment."""
    env = {
        "DATABASE_URL": database_url,
        "SECRET_KEY": "bench-only-secret-key-" + "x" * 40,
        "STATIC_MANIFEST": "0",
        "ALLOWED_HOSTS": "127.0.0.1",
        "LOG_LEVEL": "WARNING",
        "REDIS_PREFIX": f"bench-{secrets.token_hex(4)}",
        "RATE_LIMIT": "1000000",  # time the long-poll, not the request budget
        # glibc gives each thread its own malloc arena; two keep RSS close to what is used.
        "MALLOC_ARENA_MAX": "2",
    }
    if redis_url:
        env["REDIS_URL"] = redis_url
    return env


def new_database(database_url: str) -> None:
    """An empty database at `database_url` (PostgreSQL: dropped and created; SQLite: removed)."""
    if database_url.startswith("postgres"):
        import psycopg

        base, _, name = database_url.rpartition("/")
        with psycopg.connect(base + "/postgres", autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
            conn.execute(f'CREATE DATABASE "{name}"')
    else:
        Path(database_url.removeprefix("sqlite:///")).unlink(missing_ok=True)


def prepare_database(database_url: str, count: int, agents_file: Path) -> None:
    inherited = {k: v for k, v in os.environ.items() if k not in NOT_INHERITED}
    env = inherited | server_env(database_url)
    new_database(database_url)
    run = {"cwd": ROOT, "env": env, "check": True}
    subprocess.run([PYTHON, "manage.py", "migrate", "-v0"], **run)
    subprocess.run(
        [PYTHON, __file__, "--populate", str(count), "--agents-file", str(agents_file)], **run
    )


def serve(env: dict) -> tuple[subprocess.Popen, int]:
    """One uvicorn process of the real server, sized for thousands of parked connections.
    Returns it and its port; its output goes to var/bench-longpoll/server-<port>.log."""
    port = free_port()
    process, _url = start_uvicorn(
        # bench/settings.py: the product's settings, plus the X-Stored-At header timed from.
        env={**env, "DJANGO_SETTINGS_MODULE": "bench.settings"},
        unset=NOT_INHERITED,
        port=port,
        options=["--no-access-log", "--lifespan", "off"]
        + ["--backlog", "8192", "--timeout-keep-alive", "75"],
        log_level="warning",
        log_path=WORK / f"server-{port}.log",
        cwd=ROOT,
    )
    return process, port


# ---------------------------------------------------------------------------------------------
# Measuring


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


def idle_cpu_percent(pids: list[int], seconds: float = 5.0) -> float:
    before = sum(cpu_seconds(pid) for pid in pids)
    time.sleep(seconds)
    return 100 * (sum(cpu_seconds(pid) for pid in pids) - before) / seconds


def start_parkers(mode, servers, agents_file, start, count):
    """Helper client processes parking `count` agents from index `start`; returns them once
    all are parked (or raises after a bounded wait)."""
    helpers = []
    for offset in range(0, count, PER_CLIENT_PROCESS):
        share = min(PER_CLIENT_PROCESS, count - offset)
        helpers.append(
            subprocess.Popen(
                [PYTHON, __file__, "--park-worker", "--mode", mode]
                + ["--agents-file", str(agents_file), "--start", str(start + offset)]
                + ["--count", str(share), "--servers", *servers],
                stdout=subprocess.PIPE,
                text=True,
            )
        )
    counts = [0] * len(helpers)

    def follow(i, helper):
        for line in helper.stdout:
            counts[i] = int(line.split()[1])

    for i, helper in enumerate(helpers):
        threading.Thread(target=follow, args=(i, helper), daemon=True).start()
    deadline = time.monotonic() + max(60, count / 50)
    while sum(counts) < count:
        if time.monotonic() > deadline:
            for helper in helpers:
                stop_process(helper)
            raise RuntimeError(f"only {sum(counts)} of {count} agents parked")
        time.sleep(0.25)
    time.sleep(2.0)  # the last agents' parking calls arrive right after their first answers
    return helpers


async def time_deliveries(mode, wait_server, send_server, target, sender, trials):
    """Park the target, send it one message, time store -> client has it; `trials` times."""
    wait_reader, wait_writer = await asyncio.open_connection(*wait_server)
    send_reader, send_writer = await asyncio.open_connection(*send_server)
    latencies, after = [], None
    if mode == "ours":
        path, headers = f"{WAIT_PATH}?timeout_s=0", {"Authorization": f"Bearer {target['token']}"}
        _status, _headers, body = await request(wait_reader, wait_writer, "GET", path, headers)
        after = json.loads(body)["next_after_sequence"]
    for n in range(trials):
        path, headers = wait_path(mode, target, after)
        parked = asyncio.ensure_future(request(wait_reader, wait_writer, "GET", path, headers))
        await asyncio.sleep(0.05)  # parked: its first read is long done
        message = {"to": target["handle"], "body": f"trial {n}"}
        send_headers = {}
        if mode == "ours":
            message["idempotency_key"] = f"bench-{secrets.token_hex(8)}"
            send_headers = {"Authorization": f"Bearer {sender['token']}"}
        sending = asyncio.ensure_future(
            request(
                send_reader,
                send_writer,
                "POST",
                SEND_PATH if mode == "ours" else "/send",
                send_headers,
                json.dumps(message).encode(),
            )
        )
        status, headers, body = await asyncio.wait_for(parked, 30)
        received = headers["x-read-at"]
        _sent_status, sent_headers, _sent = await asyncio.wait_for(sending, 30)
        data = json.loads(body)
        if status != 200 or not data["messages"]:
            raise RuntimeError(f"trial {n}: no message ({status} {body[:200]!r})")
        last = data["messages"][-1]
        if mode == "ours":
            # Committed -> client has it: bench/stored_at.py stamps the send right after its
            # commit, before any wake-up. (created_at is set before the insert, and the
            # transaction's own queries are the sender's cost, not delivery.)
            stored = float(sent_headers["x-stored-at"])
            after = data["next_after_sequence"]
        else:
            stored = last["stored_at"]
            after = last["sequence"]
        latencies.append((received - stored) * 1000)
        await asyncio.sleep(0.05)
    wait_writer.close()
    send_writer.close()
    return latencies


def percentile(values, q):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * len(ordered) + 0.5) - 1))]


def run_case(label, mode, count, trials, servers, server_pids, agents_file, wait_on, send_on):
    """`servers` are host:port strings; the idle agents spread over all of them."""
    agents = json.loads(Path(agents_file).read_text())
    sender, target = agents[0], agents[1]
    started = time.monotonic()
    helpers = start_parkers(mode, servers, agents_file, 2, count - 1) if count > 1 else []
    park_s = time.monotonic() - started
    try:
        idle = idle_cpu_percent(server_pids)
        latencies = asyncio.run(time_deliveries(mode, wait_on, send_on, target, sender, trials))
        rss = sum(rss_mb(pid) for pid in server_pids)
    finally:
        for helper in helpers:
            stop_process(helper)
    row = {
        "case": label,
        "parked": count,
        "p50_ms": statistics.median(latencies),
        "p95_ms": percentile(latencies, 0.95),
        "rss_mb": rss,
        "idle_cpu_pct": idle,
        "park_s": park_s,
    }
    print_row(row)
    return row


def run_behind_nginx(count, trials, ports, servers, agents_file):
    """The two processes behind deploy/nginx.conf: everything goes through the proxy."""
    nginx, url = start_nginx(WORK / "nginx", ports)
    try:
        proxy = ("127.0.0.1", int(url.rsplit(":", 1)[1]))
        return run_case(
            "osfoundry, 2 processes behind nginx",
            "ours",
            count,
            trials,
            [f"127.0.0.1:{proxy[1]}"],
            [s.pid for s in servers],
            agents_file,
            proxy,
            proxy,
        )
    finally:
        stop_process(nginx)


HEADER = f"{'case':<34} {'parked':>7} {'p50 ms':>9} {'p95 ms':>9} {'RSS MB':>8} {'idle CPU':>9}"


def print_row(row):
    print(
        f"{row['case']:<34} {row['parked']:>7} {row['p50_ms']:>9.2f} {row['p95_ms']:>9.2f} "
        f"{row['rss_mb']:>8.0f} {row['idle_cpu_pct']:>8.1f}%",
        flush=True,
    )


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="200,2000,20000")
    parser.add_argument("--baseline-sizes", default="200,2000")
    parser.add_argument("--trials", type=int, default=20)
    parser.add_argument("--two-process-size", type=int, default=10_000)
    parser.add_argument("--no-two-process", action="store_true")
    parser.add_argument("--proxy", action="store_true", help="also: 2 processes behind nginx")
    parser.add_argument(
        "--pg-url", default="postgres://postgres@127.0.0.1:5432/osfoundry_bench_longpoll"
    )
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/2")
    # Internal roles of this script's child processes.
    parser.add_argument("--populate", type=int)
    parser.add_argument("--park-worker", action="store_true")
    parser.add_argument("--serve-baseline", type=int)
    parser.add_argument("--mode", default="ours")
    parser.add_argument("--agents-file")
    parser.add_argument("--start", type=int, default=0)
    parser.add_argument("--count", type=int, default=0)
    parser.add_argument("--servers", nargs="*", default=[])
    args = parser.parse_args()

    limit = raise_fd_limit()
    if args.populate is not None:
        args.count = args.populate
        return populate(args)
    if args.park_worker:
        try:
            import uvloop

            uvloop.install()
        except ImportError:
            pass
        return asyncio.run(park_worker(args))
    if args.serve_baseline:
        threading.stack_size(256 * 1024)
        return serve_baseline(args.serve_baseline)

    cap = limit - 100  # one process holds at most `limit` descriptors, sockets included
    sizes = [min(int(s), cap) for s in args.sizes.split(",")]
    if any(int(s) > cap for s in args.sizes.split(",")):
        print(f"note: RLIMIT_NOFILE hard limit is {limit}; sizes above {cap} run at {cap}")
    WORK.mkdir(parents=True, exist_ok=True)
    agents_file = WORK / "agents.json"
    rows = []
    print(f"{os.cpu_count()} CPUs, {args.trials} trials per case\n")
    print(HEADER)

    # One process, SQLite: the embedded default.
    sqlite_url = f"sqlite:///{WORK / 'bench.sqlite3'}"
    prepare_database(sqlite_url, max(sizes), agents_file)
    server, port = serve(server_env(sqlite_url))
    try:
        for count in sizes:
            rows.append(
                run_case(
                    "osfoundry, 1 process (SQLite)",
                    "ours",
                    count,
                    args.trials,
                    [f"127.0.0.1:{port}"],
                    [server.pid],
                    agents_file,
                    ("127.0.0.1", port),
                    ("127.0.0.1", port),
                )
            )
    finally:
        stop_process(server)

    # The seeds' design.
    for count in [int(s) for s in args.baseline_sizes.split(",") if s]:
        port = free_port()
        baseline = subprocess.Popen([PYTHON, __file__, "--serve-baseline", str(port)])
        try:
            wait_until_ready(baseline, f"http://127.0.0.1:{port}")
            rows.append(
                run_case(
                    "seeds: Condition+notify_all",
                    "baseline",
                    count,
                    args.trials,
                    [f"127.0.0.1:{port}"],
                    [baseline.pid],
                    agents_file,
                    ("127.0.0.1", port),
                    ("127.0.0.1", port),
                )
            )
        finally:
            stop_process(baseline)

    # Two processes, PostgreSQL + Redis: waiter on one, sender on the other.
    if not args.no_two_process:
        count = min(args.two_process_size, cap)
        prepare_database(args.pg_url, count, agents_file)
        env = server_env(args.pg_url, args.redis_url)
        servers, ports = [], []
        try:
            for _ in range(2):
                server, port = serve(env)
                servers.append(server)
                ports.append(port)
            rows.append(
                run_case(
                    "osfoundry, 2 processes (PG+Redis)",
                    "ours",
                    count,
                    args.trials,
                    [f"127.0.0.1:{p}" for p in ports],
                    [s.pid for s in servers],
                    agents_file,
                    ("127.0.0.1", ports[0]),
                    ("127.0.0.1", ports[1]),
                )
            )
            if args.proxy:
                rows.append(run_behind_nginx(count, args.trials, ports, servers, agents_file))
        finally:
            for s in servers:
                stop_process(s)

    print()
    ours = {r["parked"]: r for r in rows if r["case"].startswith("osfoundry, 1")}
    for row in rows:
        if row["case"].startswith("seeds") and row["parked"] in ours:
            ratio = row["p50_ms"] / ours[row["parked"]]["p50_ms"]
            print(f"at {row['parked']} parked: the seeds' design is {ratio:.0f}x slower (p50)")
    (WORK / "results.json").write_text(json.dumps(rows, indent=2))


if __name__ == "__main__":
    sys.exit(main())
