"""From the owner's approval to the agent's notifications/tasks frame, with N listeners parked.

    .venv/bin/python bench/tasks.py                      # N = 1,000 and 5,000, 20 trials each
    .venv/bin/python bench/tasks.py --sizes 10000 --trials 30
    .venv/bin/python bench/tasks.py --sizes 10000 --workers 2 \
        --database postgres://postgres@127.0.0.1:5432/bench_tasks --redis redis://127.0.0.1:6379/0

One uvicorn process of the real server on SQLite (bench/longpoll.py's launcher and settings),
or with --workers 2 two of them on PostgreSQL and Redis, as behind a load balancer. N idle
agents each hold a subscriptions/listen stream open on a pending task of their own (raw HTTP
from this process, localhost only; spread over the workers); one target agent listens on T
pending tasks (on the last worker). Each trial the owner approves one of the target's proposals
through the console of the first worker (a logged-in POST, as the card sends it), so with two
workers the wake-up crosses Redis; the time is from that POST's answer to the target's
notifications/tasks frame for the task (negative: the frame came before the POST's answer).
Prints p50/p95, each server's RSS with N parked, and the frames every idle listener got (none
expected).
"""

import argparse
import asyncio
import json
import os
import re
import sys
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.longpoll import (  # noqa: E402
    NOT_INHERITED,
    PYTHON,
    new_database,
    percentile,
    raise_fd_limit,
    rss_mb,
    serve,
    server_env,
)

WORK = ROOT / "var" / "bench-tasks"
MODERN = "2026-07-28"
APP = "export default function App() {\n  return <p>Hello</p>;\n}\n"


def populate(count: int, trials: int, out: Path) -> None:
    """Child process: the owner, a Room, one agent token and count + trials pending proposals
    with their tasks, written as rows (a real proposal's checks are not what is timed)."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "osfoundry.settings")
    import django

    django.setup()
    from django.contrib.auth import get_user_model

    from agents.tokens import create_access_token
    from osfoundry.auth import authenticate_bearer
    from rooms.models import Project, Proposal, ProposalTask, Room

    users = get_user_model().objects
    owner = users.create_user("bench-owner", "o@example.com", "bench-password-1")
    agent = users.create_user("bench-agent", "a@example.com", "bench-password-2")
    project = Project.objects.create(name="Bench")
    room = Room.objects.create(project=project, name="Bench", owner=owner)
    room.members.add(agent)
    project.members.add(agent)
    token = create_access_token(user=agent, scopes="osfoundry:read osfoundry:write")[1]
    key = authenticate_bearer(token).token_key
    proposals = Proposal.objects.bulk_create(
        [
            Proposal(
                room=room,
                kind=Proposal.Kind.SNIPPET,
                name=f"App {n}",
                files={"src/App.tsx": APP},
                content_hash=f"{n:064x}",
                file_count=1,
                total_bytes=len(APP),
                proposed_by=agent,
                proposed_via=key,
            )
            for n in range(count + trials)
        ],
        batch_size=2000,
    )
    tasks = ProposalTask.objects.bulk_create(
        [ProposalTask(proposal=p, caller=agent, connection=key) for p in proposals],
        batch_size=2000,
    )
    rows = [
        {"task": t.pk, "proposal": str(p.pk), "hash": p.content_hash}
        for t, p in zip(tasks, proposals, strict=True)
    ]
    out.write_text(json.dumps({"token": token, "idle": rows[:count], "targets": rows[count:]}))


def listen_request(port: int, token: str, task_ids: list[str], request_id: str) -> bytes:
    meta = {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {
            "extensions": {"io.modelcontextprotocol/tasks": {}}
        },
    }
    params = {"_meta": meta, "notifications": {"taskIds": task_ids}}
    body = json.dumps(
        {"jsonrpc": "2.0", "id": request_id, "method": "subscriptions/listen", "params": params}
    ).encode()
    head = (
        f"POST /api/v1/mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer {token}\r\n"
        f"Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"
        f"MCP-Protocol-Version: {MODERN}\r\nMcp-Method: subscriptions/listen\r\n"
        f"Content-Length: {len(body)}\r\n\r\n"
    )
    return head.encode() + body


async def open_listen(port, token, task_ids, request_id):
    reader, writer = await asyncio.open_connection("127.0.0.1", port, limit=1 << 20)
    writer.write(listen_request(port, token, task_ids, request_id))
    await writer.drain()
    while (await reader.readline()) not in (b"\r\n", b""):
        pass  # status line and headers
    return reader, writer


async def frames(reader):
    """The JSON-RPC messages of a chunked SSE response."""
    buffer = b""
    while True:
        size = await reader.readline()
        if not size or int(size.strip() or b"0", 16) == 0:
            return
        buffer += await reader.readexactly(int(size.strip(), 16))
        await reader.readline()
        while b"\n\n" in buffer:
            event, buffer = buffer.split(b"\n\n", 1)
            data = [line[6:] for line in event.split(b"\n") if line.startswith(b"data: ")]
            if data:
                yield json.loads(b"\n".join(data)), time.perf_counter()


async def idle_listener(port, token, task_id, n, counts):
    reader, _writer = await open_listen(port, token, [task_id], f"idle-{n}")
    async for message, _at in frames(reader):
        counts[message.get("method", "result")] = counts.get(message.get("method", "result"), 0) + 1


def console(port: int) -> httpx.Client:
    """The owner, logged in to the console."""
    client = httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=30)
    page = client.get("/accounts/login/").text
    csrf = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page).group(1)
    form = {"csrfmiddlewaretoken": csrf, "login": "bench-owner", "password": "bench-password-1"}
    response = client.post("/accounts/login/", data=form, headers={"Referer": str(client.base_url)})
    assert response.status_code in (200, 302), response.status_code
    return client


async def run_size(ports, pids, data, count, trials):
    """Park `count` idle listeners over the workers at `ports`, then time `trials` approvals
    made through the first worker as seen by a listener on the last."""
    counts: dict = {}
    idle = [
        asyncio.ensure_future(
            idle_listener(ports[n % len(ports)], data["token"], row["task"], n, counts)
        )
        for n, row in enumerate(data["idle"][:count])
    ]
    while counts.get("notifications/subscriptions/acknowledged", 0) < count:
        await asyncio.sleep(0.2)
    targets = data["targets"][:trials]
    port = ports[0]
    task_ids = [t["task"] for t in targets]
    reader, _writer = await open_listen(ports[-1], data["token"], task_ids, "target")
    arrived: dict[str, float] = {}
    stream = frames(reader)
    await anext(stream)  # the acknowledgment

    async def collect():
        async for message, at in stream:
            if message.get("method") == "notifications/tasks":
                arrived[message["params"]["taskId"]] = at

    collecting = asyncio.ensure_future(collect())
    rss = [rss_mb(pid) for pid in pids]
    owner = await asyncio.to_thread(console, port)
    timings = []
    for target in targets:
        csrf = owner.cookies.get("csrftoken")
        form = {"csrfmiddlewaretoken": csrf, "content_hash": target["hash"]}
        url = f"/proposals/{target['proposal']}/approve/"
        response = await asyncio.to_thread(
            owner.post, url, data=form, headers={"Referer": str(owner.base_url)}
        )
        answered = time.perf_counter()
        assert response.status_code in (200, 302), response.status_code
        while target["task"] not in arrived:
            await asyncio.sleep(0.0005)
        timings.append((arrived[target["task"]] - answered) * 1000)
    collecting.cancel()
    for task in idle:
        task.cancel()
    noise = counts.get("notifications/tasks", 0)
    return timings, rss, noise


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="1000,5000")
    parser.add_argument("--trials", type=int, default=20)
    parser.add_argument("--workers", type=int, default=1, choices=[1, 2])
    parser.add_argument("--database", help="postgres://… (default: a SQLite file under var/)")
    parser.add_argument("--redis", help="redis://…, which two workers need to wake each other")
    parser.add_argument("--populate", type=int)
    parser.add_argument("--out")
    args = parser.parse_args()
    if args.populate is not None:
        populate(args.populate, args.trials, Path(args.out))
        return
    limit = raise_fd_limit()
    WORK.mkdir(parents=True, exist_ok=True)
    (ROOT / "var" / "bench-longpoll").mkdir(parents=True, exist_ok=True)  # serve() logs there
    if args.workers > 1 and not (args.redis and args.database):
        parser.error("--workers 2 needs --database (PostgreSQL) and --redis")
    print(f"{'N':>7} {'p50 ms':>8} {'p95 ms':>8} {'RSS MB':>12} {'idle frames':>12}")
    for size in [min(int(s), limit - 200) for s in args.sizes.split(",")]:
        database_url = args.database or f"sqlite:///{WORK / 'bench.sqlite3'}"
        new_database(database_url)
        settings = server_env(database_url, args.redis or "")
        env = {k: v for k, v in os.environ.items() if k not in NOT_INHERITED} | settings
        import subprocess

        run = {"cwd": ROOT, "env": env, "check": True}
        subprocess.run([PYTHON, "manage.py", "migrate", "-v0"], **run)
        out = WORK / "rows.json"
        subprocess.run(
            [
                PYTHON,
                __file__,
                "--populate",
                str(size),
                "--trials",
                str(args.trials),
                "--out",
                str(out),
            ],
            **run,
        )
        data = json.loads(out.read_text())
        servers = [serve(settings) for _ in range(args.workers)]
        try:
            ports, pids = [port for _s, port in servers], [server.pid for server, _p in servers]
            timings, rss, noise = asyncio.run(run_size(ports, pids, data, size, args.trials))
        finally:
            for server, _port in servers:
                server.terminate()
                server.wait(30)
        p50, p95 = percentile(timings, 0.5), percentile(timings, 0.95)
        memory = " + ".join(f"{mb:.0f}" for mb in rss)
        print(f"{size:>7} {p50:>8.2f} {p95:>8.2f} {memory:>12} {noise:>12}")


if __name__ == "__main__":
    main()
