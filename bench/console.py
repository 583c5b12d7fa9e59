"""Server time and queries of the owner's console pages with a full Room.

    .venv/bin/python bench/console.py                    # 1,000 and 10,000 proposals
    .venv/bin/python bench/console.py --sizes 10000 --apps 1000 --runs 40

One Room holds N pending proposals and A approved apps (rows written in bulk, as years of use
would leave them; the card that is timed is proposed and checked through the real service).
Each page is rendered through Django's test client (middleware, session, templates) against
the bench's own SQLite database (var/bench-console.sqlite3) unless DATABASE_URL is set, RUNS
times: the inbox's first page, the Room page (the launcher with its A tabs), a card cold (its
highlighting and verdict not cached) and cached. Prints p50/p95 in ms and the queries each page
makes; goals (issue 35): every page <= 100 ms p95, the cached card <= 50 ms, and the same query
count at every N.
"""

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "osfoundry.settings")
os.environ.setdefault("DATABASE_URL", "sqlite:///var/bench-console.sqlite3")
os.environ.setdefault("STATIC_MANIFEST", "0")

import django  # noqa: E402

django.setup()

from django.contrib.auth import get_user_model  # noqa: E402
from django.core.cache import cache  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.db import connection  # noqa: E402
from django.test import Client  # noqa: E402
from django.test.utils import CaptureQueriesContext  # noqa: E402
from django.urls import reverse  # noqa: E402
from django.utils import timezone  # noqa: E402

from rooms.demo import standup_timer_files  # noqa: E402
from rooms.models import AppRevision, LauncherApp, Project, Proposal, Room  # noqa: E402
from rooms.services import propose_snippet  # noqa: E402

APP = "export default function App() {\n  return <p>Hello</p>;\n}\n"
BATCH = 2000


def populate(room: Room, owner, agent, proposals: int, apps: int) -> None:
    """`proposals` pending proposals and `apps` approved apps in `room`, written in bulk."""
    now = timezone.now()

    def proposal(n: int, status: str) -> Proposal:
        return Proposal(
            room=room,
            kind=Proposal.Kind.SNIPPET,
            name=f"App {n}",
            files={"src/App.tsx": APP.replace("Hello", f"Hello {n}")},
            content_hash=f"{n:064x}",
            file_count=1,
            total_bytes=len(APP),
            proposed_by=agent,
            status=status,
            decided_by=owner if status == Proposal.Status.APPROVED else None,
            decided_at=now if status == Proposal.Status.APPROVED else None,
        )

    Proposal.objects.bulk_create(
        [proposal(n, Proposal.Status.PENDING) for n in range(proposals)], batch_size=BATCH
    )
    approved = Proposal.objects.bulk_create(
        [proposal(proposals + n, Proposal.Status.APPROVED) for n in range(apps)],
        batch_size=BATCH,
    )
    made = LauncherApp.objects.bulk_create(
        [
            LauncherApp(
                room=room,
                proposal=p,
                name=p.name,
                position=n,
                build_state=LauncherApp.BuildState.READY,
                build_updated_at=now,
            )
            for n, p in enumerate(approved)
        ],
        batch_size=BATCH,
    )
    AppRevision.objects.bulk_create(
        [
            AppRevision(
                app=app,
                number=1,
                proposal=app.proposal,
                name=app.name,
                content_hash=app.proposal.content_hash,
                approved_by=owner,
            )
            for app in made
        ],
        batch_size=BATCH,
    )


def timed(client: Client, url: str, *, before=None) -> tuple[float, int]:
    if before:
        before()
    with CaptureQueriesContext(connection) as queries:
        start = time.perf_counter()
        response = client.get(url)
        elapsed = (time.perf_counter() - start) * 1000
    assert response.status_code == 200, (url, response.status_code)
    return elapsed, len(queries)


def measure(client: Client, url: str, runs: int, *, before=None) -> tuple[float, float, int]:
    timed(client, url)  # a first render warms the templates and the process
    samples = [timed(client, url, before=before) for _ in range(runs)]
    times = sorted(ms for ms, _q in samples)
    counts = {q for _ms, q in samples}
    p95 = times[min(len(times) - 1, round(0.95 * (len(times) - 1)))]
    return statistics.median(times), p95, max(counts)


def run_size(proposals: int, apps: int, runs: int) -> list[tuple[str, float, float, int]]:
    call_command("flush", interactive=False, verbosity=0)
    users = get_user_model().objects
    owner = users.create_user("bench-owner", "o@example.com", "bench-password-1")
    agent = users.create_user("bench-agent", "a@example.com", "bench-password-2")
    project = Project.objects.create(name="Bench")
    room = Room.objects.create(project=project, name="Bench", owner=owner)
    room.members.add(agent)
    populate(room, owner, agent, proposals, apps)
    card = propose_snippet(
        caller=agent,
        room_id=str(room.pk),
        name="Standup timer",
        files=standup_timer_files(),
        idempotency_key="bench-console-card",
    ).proposal
    client = Client(HTTP_HOST="127.0.0.1")
    client.force_login(owner)
    pages = [
        ("inbox, first page", reverse("rooms:inbox"), None),
        ("Room page", reverse("rooms:room", args=[room.pk]), None),
        ("card, cold", reverse("rooms:proposal", args=[card.pk]), cache.clear),
        ("card, cached", reverse("rooms:proposal", args=[card.pk]), None),
    ]
    return [(name, *measure(client, url, runs, before=before)) for name, url, before in pages]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="1000,10000")
    parser.add_argument("--apps", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=30)
    args = parser.parse_args()
    (ROOT / "var").mkdir(exist_ok=True)
    call_command("migrate", verbosity=0)
    print(f"{'proposals':>9} {'apps':>5}  {'page':<18} {'p50 ms':>7} {'p95 ms':>7} {'queries':>7}")
    for size in (int(s) for s in args.sizes.split(",")):
        for name, p50, p95, queries in run_size(size, args.apps, args.runs):
            print(f"{size:>9} {args.apps:>5}  {name:<18} {p50:>7.1f} {p95:>7.1f} {queries:>7}")


if __name__ == "__main__":
    main()
