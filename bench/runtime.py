"""Room page load to app mounted and drawn, cold and warm: the 2-file standup timer, a 21-file app
and a recharts app (tests/rooms/snippets/lib-recharts: two charts), with the frame's compile time
and, for an app that imports curated libraries, the time to load them.

    .venv/bin/python bench/runtime.py [--runs 10] [--finders]

Serves osfoundry.asgi:application with uvicorn on a free 127.0.0.1 port, against its own SQLite
database (var/bench-runtime.sqlite3, recreated each run) unless DATABASE_URL is set, with the
production static setup (collectstatic + whitenoise's manifest storage; --finders serves from
the finders as in tests). Headless Chromium (/usr/bin/chromium) opens the Room page, clicks the
launcher tab and waits until the sandboxed frame reports the app mounted.

  cold: a fresh browser context each run (empty HTTP cache, no compiled-code cache)
  warm: the same context reloads the page and opens the tab again (what a returning user gets)

Times are from the page's navigation start (performance.now() in the console page) to the
"mounted" status, and to "drawn": the moment what the app draws first exists in the frame (the
timer's speaker, the first part, recharts' line); "click→mounted" starts when the tab is
clicked. Goals (issue 33): the 2-file app <= 0.5 s warm, the recharts app's chart <= 0.8 s warm.
"""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "osfoundry.settings")
OWN_DATABASE = not os.environ.get("DATABASE_URL")
if OWN_DATABASE:
    os.environ["DATABASE_URL"] = "sqlite:///var/bench-runtime.sqlite3"
    for suffix in ("", "-wal", "-shm"):
        (ROOT / "var" / f"bench-runtime.sqlite3{suffix}").unlink(missing_ok=True)

import django  # noqa: E402

django.setup()

from django.conf import settings  # noqa: E402
from django.contrib.auth import get_user_model  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.test import Client  # noqa: E402

from rooms.demo import standup_timer_files  # noqa: E402
from rooms.models import Project, Room  # noqa: E402
from rooms.services import approve_proposal, propose_snippet  # noqa: E402
from tests.rooms.runtime_support import snippet_files  # noqa: E402
from tests.servers import CHROMIUM, CHROMIUM_ARGS, start_uvicorn, stop_process  # noqa: E402

PART = """import {{ useState }} from "react";

type Row = {{ id: number; label: string; done: boolean; owner?: string }};

const SEED: Row[] = [
  {{ id: 1, label: "Collect the standup notes", done: false }},
  {{ id: 2, label: "Share the sprint board", done: true, owner: "Ada" }},
  {{ id: 3, label: "Book the retro room", done: false, owner: "Linus" }},
];

export default function Part{index}({{ title = "Part {index}" }}: {{ title?: string }}) {{
  const [rows, setRows] = useState<Row[]>(SEED);
  const [filter, setFilter] = useState<"all" | "open" | "done">("all");
  const visible = rows.filter((row) =>
    filter === "all" ? true : filter === "open" ? !row.done : row.done,
  );
  function toggle(id: number) {{
    setRows((current) =>
      current.map((row) => (row.id === id ? {{ ...row, done: !row.done }} : row)),
    );
  }}
  return (
    <section className="part">
      <h2>{{title}}</h2>
      {{(["all", "open", "done"] as const).map((name) => (
        <button key={{name}} onClick={{() => setFilter(name)}} aria-pressed={{filter === name}}>
          {{name}}
        </button>
      ))}}
      <ul>
        {{visible.map((row) => (
          <li key={{row.id}} onClick={{() => toggle(row.id)}}>
            {{row.label}} {{row.owner ? <em>({{row.owner}})</em> : null}}
          </li>
        ))}}
      </ul>
    </section>
  );
}}
"""


def many_files(count: int) -> dict[str, str]:
    """The standup timer's styles plus an App.tsx that renders count - 2 component files."""
    parts = count - 2
    imports = "\n".join(f'import Part{i:02} from "./parts/Part{i:02}";' for i in range(parts))
    body = "\n".join(f"      <Part{i:02} />" for i in range(parts))
    files = {
        "src/App.tsx": f'import "./styles.css";\n{imports}\n\nexport default function App() {{\n'
        f'  return (\n    <main className="standup">\n{body}\n    </main>\n  );\n}}\n',
        "src/styles.css": standup_timer_files()["src/styles.css"],
    }
    for i in range(parts):
        files[f"src/parts/Part{i:02}.tsx"] = PART.format(index=f"{i:02}")
    return files


# Runs in the console page and in every frame (Playwright injects it without a script element,
# so the frame's CSP does not apply): the page records the runtime's statuses, a frame the
# moment (on the shared clock, performance.timeOrigin + now) that what the app draws appears.
DRAWN = ".speaker, .part, .recharts-line-curve"
RECORDER = """
window.__osfTimes = [];
document.addEventListener("osf:app-status", (e) => {
  window.__osfTimes.push({type: e.detail.type, t: performance.now(),
                          compile_ms: e.detail.compile_ms, load_ms: e.detail.load_ms,
                          mount_ms: e.detail.mount_ms});
}, true);
if (window !== window.top) {
  new MutationObserver((records, observer) => {
    if (document.querySelector(DRAWN)) {
      window.__osfDrawnAt = performance.timeOrigin + performance.now();
      observer.disconnect();
    }
  }).observe(document, {childList: true, subtree: true, attributes: true});
}
""".replace("DRAWN", repr(DRAWN))


def seed() -> tuple[Room, dict]:
    users = get_user_model().objects
    owner = users.create_user("bench-owner")
    agent = users.create_user("bench-agent")
    room = Room.objects.create(
        project=Project.objects.create(name="Bench runtime"), name="Bench", owner=owner
    )
    room.members.add(agent)
    apps = {}
    apps_files = (
        ("2 files", standup_timer_files()),
        ("21 files", many_files(21)),
        ("recharts", snippet_files("lib-recharts")),
    )
    for label, files in apps_files:
        proposal = propose_snippet(
            caller=agent,
            room_id=str(room.pk),
            name=label,
            files=files,
            idempotency_key=f"bench-runtime-{label.replace(' ', '-')}",
        ).proposal
        apps[label] = approve_proposal(owner=owner, proposal_id=proposal.pk)
    return room, apps


def session_cookie(user) -> dict:
    client = Client()
    client.force_login(user)
    cookie = client.cookies[settings.SESSION_COOKIE_NAME]
    return {"name": cookie.key, "value": cookie.value, "httpOnly": True}


def open_app(page, url: str, instance_id: str) -> dict:
    page.goto(url)
    page.locator(f'[data-launcher] [data-instance-id="{instance_id}"]').click()
    # Polled with evaluate(): wait_for_function evaluates its predicate with eval(), which the
    # console's Content-Security-Policy refuses. The times are taken in the page, not here.
    done_yet = "window.__osfTimes.some(s => s.type === 'osf:mounted' || s.type === 'osf:error')"
    deadline = time.monotonic() + 60
    while not page.evaluate(done_yet):
        if time.monotonic() > deadline:
            raise RuntimeError("the app neither mounted nor failed within 60 s")
        time.sleep(0.01)
    times = page.evaluate("window.__osfTimes")
    loading = next(s for s in times if s["type"] == "osf:loading")
    done = next(s for s in times if s["type"] in ("osf:mounted", "osf:error"))
    if done["type"] != "osf:mounted":
        raise RuntimeError(f"the app did not mount: {done}")
    return {
        "page_to_mounted": done["t"],
        "page_to_drawn": drawn_at(page) - page.evaluate("performance.timeOrigin"),
        "click_to_mounted": done["t"] - loading["t"],
        "compile_ms": done["compile_ms"],
        "load_ms": done["load_ms"],
        "mount_ms": done["mount_ms"],
    }


def drawn_at(page) -> float:
    """When what the running app draws appeared in its frame, on the shared clock."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        for frame in page.frames[1:]:
            if moment := frame.evaluate("window.__osfDrawnAt || 0"):
                return moment
        time.sleep(0.01)
    raise RuntimeError("what the app draws did not appear within 60 s")


def summary(rows: list[dict], key: str) -> str:
    values = [row[key] for row in rows]
    return f"{statistics.median(values):7.0f} (min {min(values):.0f}, max {max(values):.0f})"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--finders", action="store_true", help="serve static files by finders")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    call_command("migrate", verbosity=0)
    room, apps = seed()
    env = {
        "DATABASE_URL": os.environ["DATABASE_URL"],
        "SECRET_KEY": settings.SECRET_KEY,
        "STATIC_MANIFEST": "0" if args.finders else "1",
        "LOG_LEVEL": "WARNING",
    }
    if not args.finders:
        subprocess.run(
            [sys.executable, "manage.py", "collectstatic", "--noinput", "-v0"],
            cwd=ROOT,
            env={**os.environ, **env},
            check=True,
        )
    cookie = session_cookie(room.owner)
    log = Path(tempfile.mkdtemp()) / "uvicorn.log"
    process, base = start_uvicorn(env=env, log_path=log)
    url = f"{base}/rooms/{room.pk}/"
    static = "finders" if args.finders else "manifest (collectstatic)"
    print(
        f"static: {static}; database: {settings.DATABASES['default']['ENGINE']}; runs: {args.runs}"
    )
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            print(f"chromium {browser.version}")
            print(
                f"{'app':<9} {'cache':<5} {'page→mounted ms':>28} {'page→drawn ms':>28} "
                f"{'click→mounted ms':>28} {'compile ms':>24} {'libraries ms':>24} "
                f"{'render ms':>24}"
            )
            for label, app in apps.items():
                cold, warm = [], []
                for _ in range(args.runs):
                    context = browser.new_context()
                    context.add_cookies([{**cookie, "url": base}])
                    context.add_init_script(RECORDER)
                    page = context.new_page()
                    cold.append(open_app(page, url, str(app.pk)))
                    for _ in range(2):  # the second visit fills V8's code cache
                        warm.append(open_app(page, url, str(app.pk)))
                    context.close()
                warm = warm[1::2]
                for name, rows in (("cold", cold), ("warm", warm)):
                    print(
                        f"{label:<9} {name:<5} {summary(rows, 'page_to_mounted'):>28} "
                        f"{summary(rows, 'page_to_drawn'):>28} "
                        f"{summary(rows, 'click_to_mounted'):>28} "
                        f"{summary(rows, 'compile_ms'):>24} {summary(rows, 'load_ms'):>24} "
                        f"{summary(rows, 'mount_ms'):>24}"
                    )
            browser.close()
    finally:
        stop_process(process)


if __name__ == "__main__":
    main()
