"""Server time to render the review card, cold (nothing highlighted yet) and cached.

    .venv/bin/python bench/card.py [--runs 30]

Runs the real view through Django's test client (middleware, session, template, highlighting)
against its own SQLite database (var/bench.sqlite3) unless DATABASE_URL is set; everything it
creates is rolled back. Goal: <= 50 ms median for 21 files once cached.

Then an update card through the same view: the 21-file app approved, an update with 3 of its
files changed, its diff computed once per pair of content hashes (cold: nothing cached).
Goal: <= 50 ms cached. `--diff-only` times rooms/content/diffs.py + templates/rooms/_diff.html
alone.

`--hostile` renders, once each and cold, the revision cards of issue 31: a file of repeated
lines revised with one line changed (difflib's matching was quadratic there), the first and last
lines changed (nothing in common at the ends), every other line changed (more changes than the
diff's budget compares), every line rewritten (the diff's HTML cap), and 90 lines of 490
repeated words, each with its last word changed (the word marks' own matching).
"""

import argparse
import gzip
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "osfoundry.settings")
os.environ.setdefault("DATABASE_URL", "sqlite:///var/bench.sqlite3")
os.environ.setdefault("STATIC_MANIFEST", "0")

import django  # noqa: E402

django.setup()

from django.conf import settings  # noqa: E402
from django.contrib.auth import get_user_model  # noqa: E402
from django.core.cache import cache  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.db import transaction  # noqa: E402
from django.template.loader import render_to_string  # noqa: E402
from django.test import Client  # noqa: E402
from django.urls import reverse  # noqa: E402

from rooms.content import diffs  # noqa: E402
from rooms.demo import standup_timer_files  # noqa: E402
from rooms.models import Project, Room  # noqa: E402
from rooms.review.revisions import propose_update, revise_proposal  # noqa: E402
from rooms.services import approve_proposal, propose_snippet  # noqa: E402

COMPONENT = """import {{ useEffect, useState }} from "react";
import "./part{index:02}.css";

type Row{index} = {{ id: number; label: string; done: boolean; owner?: string }};

const SEED{index}: Row{index}[] = [
  {{ id: 1, label: "Collect the standup notes", done: false }},
  {{ id: 2, label: "Share the sprint board", done: true, owner: "Ada" }},
  {{ id: 3, label: "Book the retro room", done: false, owner: "Linus" }},
];

export function Part{index}({{ title = "Part {index}" }}: {{ title?: string }}) {{
  const [rows, setRows] = useState<Row{index}[]>(SEED{index});
  const [filter, setFilter] = useState<"all" | "open" | "done">("all");

  useEffect(() => {{
    document.title = `${{title}} (${{rows.filter((r) => !r.done).length}} open)`;
  }}, [rows, title]);

  const visible = rows.filter((row) =>
    filter === "all" ? true : filter === "open" ? !row.done : row.done,
  );

  function toggle(id: number) {{
    setRows((current) =>
      current.map((row) => (row.id === id ? {{ ...row, done: !row.done }} : row)),
    );
  }}

  return (
    <section className="part-{index}">
      <h2>{{title}}</h2>
      <div className="filters">
        {{(["all", "open", "done"] as const).map((name) => (
          <button key={{name}} onClick={{() => setFilter(name)}} aria-pressed={{filter === name}}>
            {{name}}
          </button>
        ))}}
      </div>
      <ul>
        {{visible.map((row) => (
          <li key={{row.id}} className={{row.done ? "done" : ""}} onClick={{() => toggle(row.id)}}>
            {{row.label}} {{row.owner ? <em>({{row.owner}})</em> : null}}
          </li>
        ))}}
      </ul>
    </section>
  );
}}
"""


def snippet(count: int) -> dict[str, str]:
    files = standup_timer_files()
    index = 0
    while len(files) < count:
        files[f"src/parts/Part{index:02}.tsx"] = COMPONENT.format(index=index)
        index += 1
    return files


def timed_get(client, url) -> tuple[float, bytes]:
    start = time.perf_counter()
    response = client.get(url)
    elapsed = (time.perf_counter() - start) * 1000
    assert response.status_code == 200, response.status_code
    return elapsed, response.content


def measure(client, url, runs: int) -> dict:
    cold = []
    for _ in range(max(3, runs // 6)):
        cache.clear()
        cold.append(timed_get(client, url)[0])
    timed_get(client, url)
    cached = [timed_get(client, url)[0] for _ in range(runs)]
    _, body = timed_get(client, url)
    return {
        "cold_median": statistics.median(cold),
        "cached_median": statistics.median(cached),
        "cached_p95": sorted(cached)[int(len(cached) * 0.95) - 1],
        "bytes": len(body),
        "gzip": len(gzip.compress(body, 6)),
    }


def updated(files: dict[str, str], changed: int) -> dict[str, str]:
    """`files` with `changed` components edited: a renamed state, a new line, a changed label."""
    out = dict(files)
    for path in sorted(p for p in files if p.startswith("src/parts/"))[:changed]:
        text = out[path].replace("const [filter, setFilter]", "const [view, setView]")
        text = text.replace("Book the retro room", "Book the retrospective room")
        out[path] = text.replace("  return (\n", "  const total = rows.length;\n\n  return (\n")
    return out


def render_update_diff(old: dict[str, str], new: dict[str, str]) -> tuple[float, str]:
    start = time.perf_counter()
    diff = diffs.diff_files(dict(old), dict(new), old_hash="bench-old", new_hash="bench-new")
    html = render_to_string(
        "rooms/_diff.html", {"diff": diff, "diff_title": "Changes since the approved version"}
    )
    return (time.perf_counter() - start) * 1000, html


def measure_update_diff(runs: int) -> None:
    old = snippet(21)
    new = updated(old, 3)
    cold = []
    for _ in range(max(3, runs // 6)):
        cache.clear()
        cold.append(render_update_diff(old, new)[0])
    render_update_diff(old, new)
    cached = [render_update_diff(old, new)[0] for _ in range(runs)]
    _, html = render_update_diff(old, new)
    body = html.encode()
    p95 = sorted(cached)[int(runs * 0.95) - 1]
    print(
        f"update diff: 21 files, 3 changed: cold {statistics.median(cold):.1f} ms,"
        f" cached {statistics.median(cached):.1f} ms (p95 {p95:.1f}),"
        f" {len(body) / 1024:.1f} KB ({len(gzip.compress(body, 6)) / 1024:.1f} KB gzip)"
    )


def hostile_inputs() -> list[tuple[str, str, str]]:
    """(label, old text, new text) of notes.txt, each an owner's card an agent can stall."""
    words = "a " * 490
    return [
        ("'a' x 10,000, last changed", "a\n" * 10_000, "a\n" * 9_999 + "b\n"),
        ("'a' x 12,000, last changed", "a\n" * 12_000, "a\n" * 11_999 + "b\n"),
        ("'a' x 10,000, first+last", "a\n" * 10_000, "b\n" + "a\n" * 9_998 + "b\n"),
        ("'a' x 10,000 to 'a', 'b' x 5,000", "a\n" * 10_000, "a\nb\n" * 5_000),
        (
            "10,000 lines rewritten",
            "".join(f"line {n}\n" for n in range(10_000)),
            "".join(f"line {n}!\n" for n in range(10_000)),
        ),
        ("90 long lines, last word", f"{words}a\n" * 90, f"{words}b\n" * 90),
    ]


def measure_hostile(client, room, agent) -> None:
    # Warm up once (lexers, templates, the run check's engine): the figures are the diff's.
    warm = propose_snippet(
        caller=agent,
        room_id=str(room.pk),
        name="Warm up",
        files=standup_timer_files(),
        idempotency_key="bench-hostile-warm",
    ).proposal
    timed_get(client, reverse("rooms:proposal", args=[warm.pk]))
    print(f"{'hostile revision card (cold, once)':<34} {'ms':>8} {'page KB':>8} {'diff KB':>8}")
    for index, (label, old, new) in enumerate(hostile_inputs()):
        first = propose_snippet(
            caller=agent,
            room_id=str(room.pk),
            name=f"Hostile {index}",
            files={**standup_timer_files(), "notes.txt": old},
            idempotency_key=f"bench-hostile-{index:04}",
        ).proposal
        revision = revise_proposal(
            caller=agent,
            proposal_id=str(first.pk),
            files={**first.files, "notes.txt": new},
            idempotency_key=f"bench-hostile-revision-{index:04}",
        ).proposal
        cache.clear()
        elapsed, body = timed_get(client, reverse("rooms:proposal", args=[revision.pk]))
        html = body.decode()
        start = html.index('<section class="diff"')
        # The diff ends where the revision's files begin: "All files of revision 2".
        diff_html = html[start : html.index("<h2>", start)]
        print(
            f"{label:<34} {elapsed:>8.0f} {len(body) / 1024:>8.0f}"
            f" {len(diff_html.encode()) / 1024:>8.0f}"
        )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--diff-only", action="store_true", help="only the update card's diff")
    parser.add_argument("--hostile", action="store_true", help="only issue 31's revision cards")
    args = parser.parse_args()
    if not args.hostile:
        measure_update_diff(args.runs)
    if args.diff_only:
        return
    call_command("migrate", verbosity=0)
    settings.ALLOWED_HOSTS = [*settings.ALLOWED_HOSTS, "testserver"]
    cache_backend = settings.CACHES["default"]["BACKEND"].rsplit(".", 1)[-1]
    print(f"cache: {cache_backend}; database: {settings.DATABASES['default']['ENGINE']}")
    if not args.hostile:
        print(
            f"{'files':>5} {'source':>9} {'cold ms':>8} {'cached ms':>10} {'p95 ms':>7}"
            f" {'page KB':>8} {'gzip KB':>8}"
        )
    with transaction.atomic():
        users = get_user_model().objects
        owner = users.create_user("bench-owner")
        agent = users.create_user("bench-agent")
        room = Room.objects.create(
            project=Project.objects.create(name="Bench"), name="Bench", owner=owner
        )
        room.members.add(agent)
        client = Client()
        client.force_login(owner)
        if args.hostile:
            measure_hostile(client, room, agent)
            transaction.set_rollback(True)
            return
        by_count = {}
        for count in (2, 21, 64):
            files = snippet(count)
            proposal = propose_snippet(
                caller=agent,
                room_id=str(room.pk),
                name=f"Bench {count}",
                files=files,
                idempotency_key=f"bench-{count:04}",
            ).proposal
            by_count[count] = proposal
            url = reverse("rooms:proposal", args=[proposal.pk])
            result = measure(client, url, args.runs)
            print(
                f"{count:>5} {proposal.total_bytes / 1024:>7.1f}KB"
                f" {result['cold_median']:>8.1f} {result['cached_median']:>10.1f}"
                f" {result['cached_p95']:>7.1f} {result['bytes'] / 1024:>8.1f}"
                f" {result['gzip'] / 1024:>8.1f}"
            )
        app = approve_proposal(owner=owner, proposal_id=by_count[21].pk)
        update = propose_update(
            caller=agent,
            room_id=str(room.pk),
            instance_id=str(app.pk),
            files=updated(by_count[21].files, 3),
            idempotency_key="bench-update-0001",
        ).proposal
        result = measure(client, reverse("rooms:proposal", args=[update.pk]), args.runs)
        print(
            f"update card, 21 files, 3 changed: cold {result['cold_median']:.1f} ms,"
            f" cached {result['cached_median']:.1f} ms (p95 {result['cached_p95']:.1f}),"
            f" {result['bytes'] / 1024:.1f} KB ({result['gzip'] / 1024:.1f} KB gzip)"
        )
        transaction.set_rollback(True)


if __name__ == "__main__":
    main()
