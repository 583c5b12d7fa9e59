"""A package.json app's proposal, cold and warm, and its card: the numbers of issue 33.

    .venv/bin/python bench/packages.py --fetch      # once: real packages into var/npm-bench/
    .venv/bin/python bench/packages.py [--runs 5] [--frame]

The app (a small issue tracker) names 3 dependencies, axios, react-router-dom and
@tanstack/react-query, which come to 36 packages (React and React DOM are the Room's own). --fetch
asks npm (the machine's npm and its configured registry, once) for the exact versions npm
itself resolves, their tarballs (`npm pack`) and every version's packument entry (`npm view`),
into the git-ignored var/npm-bench/. The bench then serves those on 127.0.0.1
(tests/npmregistry.py): realistic packuments (every release of each package) and the real
tarballs, and proposes through rooms.services against its own SQLite database
(var/bench-packages.sqlite3) unless DATABASE_URL is set.

  cold      nothing stored: 36 packuments, 36 tarballs fetched and checked, every file the app's
            imports reach prepared with Sucrase in the embedded V8
  stored    another app of the same packages, in the same process: the packuments kept (the
            bench registry sends the public registry's Cache-Control, max-age=300), no tarball,
            the prepared files in the cache
  stored, new process   the packages stored, nothing else kept: the packuments fetched again,
            the stored files read from the database, every file prepared again
  card      the owner's card for the proposal, first render and cached (Django's test client)

--frame also opens the approved app in headless Chromium, as bench/runtime.py does: page → app
drawn, cold and warm. Goals (issue 33): proposal <= 5 s cold, <= 0.5 s stored; card <= 50 ms
cached.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CACHE = ROOT / "var" / "npm-bench"
sys.path.insert(0, str(ROOT))
DEPENDENCIES = {"axios": "^1.7.0", "react-router-dom": "^7.0.0", "@tanstack/react-query": "^5.0.0"}
PROVIDED = {"react", "react-dom", "scheduler"}
VIEW_FIELDS = [
    "version",
    "dependencies",
    "peerDependencies",
    "peerDependenciesMeta",
    "optionalDependencies",
    "dist",
    "deprecated",
    "license",
]


def fetch() -> None:
    """Ask npm for the packages once: the lock npm makes, each tarball, each packument."""
    CACHE.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp())
    (work / "package.json").write_text(
        json.dumps({"name": "bench", "version": "1.0.0", "dependencies": DEPENDENCIES})
    )
    subprocess.run(
        ["npm", "install", "--package-lock-only", "--ignore-scripts", "--no-audit", "--no-fund"],
        cwd=work,
        check=True,
        capture_output=True,
    )
    lock = json.loads((work / "package-lock.json").read_text())
    wanted = sorted(
        {
            (path.rpartition("node_modules/")[2], entry["version"])
            for path, entry in lock["packages"].items()
            if path and path.rpartition("node_modules/")[2] not in PROVIDED
        }
    )
    (CACHE / "lock.json").write_text(json.dumps(wanted, indent=1))
    tarballs = CACHE / "tarballs"
    tarballs.mkdir(exist_ok=True)

    def one(item):
        name, version = item
        folder = CACHE / "packuments" / name
        folder.mkdir(parents=True, exist_ok=True)
        view = ["npm", "view", f"{name}@>=0.0.0", *VIEW_FIELDS, "--json"]
        entries = json.loads(subprocess.run(view, check=True, capture_output=True).stdout)
        (folder / "versions.json").write_text(
            json.dumps(entries if isinstance(entries, list) else [entries])
        )
        tags = subprocess.run(
            ["npm", "view", name, "dist-tags", "--json"], check=True, capture_output=True
        ).stdout
        (folder / "dist-tags.json").write_bytes(tags)
        packed = subprocess.run(
            ["npm", "pack", f"{name}@{version}", "--pack-destination", str(tarballs), "--json"],
            check=True,
            capture_output=True,
            cwd=work,
        )
        filename = json.loads(packed.stdout)[0]["filename"]
        (tarballs / filename).rename(tarballs / f"{name.replace('/', '+')}-{version}.tgz")
        return name, version

    with ThreadPoolExecutor(max_workers=4) as pool:
        for name, version in pool.map(one, wanted):
            print(f"  {name}@{version}")
    print(f"{len(wanted)} packages in {CACHE}")


def registry():
    """The cached packages served on 127.0.0.1 as a registry serves them."""
    from tests.npmregistry import NpmRegistry

    served = NpmRegistry()
    locked = {tuple(item) for item in json.loads((CACHE / "lock.json").read_text())}
    for folder in sorted((CACHE / "packuments").rglob("versions.json")):
        name = folder.parent.relative_to(CACHE / "packuments").as_posix()
        tags = json.loads((folder.parent / "dist-tags.json").read_text())
        for entry in json.loads(folder.read_text()):
            version = entry["version"]
            manifest = {"name": name, **{k: v for k, v in entry.items() if v is not None}}
            manifest.get("dist", {}).pop("tarball", None)  # served from 127.0.0.1 instead
            tarball = CACHE / "tarballs" / f"{name.replace('/', '+')}-{version}.tgz"
            data = tarball.read_bytes() if (name, version) in locked else b""
            served.add(name, version, manifest, data, tag=False)
        served.tags[name] = tags
    return served


APP = {
    "src/App.tsx": """import axios from "axios";
import {QueryClient, QueryClientProvider, useQuery} from "@tanstack/react-query";
import {MemoryRouter, Link, Route, Routes, useParams} from "react-router-dom";
import "./styles.css";

type Issue = {id: number; title: string; state: "open" | "closed"};
const ISSUES: Issue[] = [
  {id: 1, title: "Timer keeps running after the standup", state: "open"},
  {id: 2, title: "Speaker order is not shuffled", state: "closed"},
  {id: 3, title: "Export the notes as Markdown", state: "open"},
];
// The Room's frame reaches no network: the client is real, its adapter never called.
const api = axios.create({baseURL: "/api", timeout: 2000});
const client = new QueryClient({defaultOptions: {queries: {retry: false}}});

function useIssues() {
  return useQuery({queryKey: ["issues"], queryFn: async () => ISSUES, initialData: ISSUES});
}

function List() {
  const {data} = useIssues();
  return (
    <ul className="issues">
      {data.map((issue) => (
        <li key={issue.id} className={issue.state}>
          <Link to={`/issues/${issue.id}`}>#{issue.id} {issue.title}</Link>
        </li>
      ))}
    </ul>
  );
}

function Detail() {
  const {id} = useParams();
  const issue = useIssues().data.find((i) => String(i.id) === id);
  return <p className="detail">{issue ? `${issue.title} (${issue.state})` : "No such issue"}</p>;
}

export default function App() {
  return (
    <QueryClientProvider client={client}>
      <MemoryRouter>
        <h1 data-base={api.defaults.baseURL}>Issues</h1>
        <Routes>
          <Route path="/" element={<List />} />
          <Route path="/issues/:id" element={<Detail />} />
        </Routes>
      </MemoryRouter>
    </QueryClientProvider>
  );
}
""",
    "src/styles.css": ".issues { list-style: none; padding: 0; }\n.closed { opacity: .6; }\n",
    "package.json": json.dumps(
        {
            "name": "issues",
            "private": True,
            "dependencies": {"react": "^19.0.0", "react-dom": "^19.0.0", **DEPENDENCIES},
            "devDependencies": {"vite": "^7.0.0", "typescript": "^5.9.0"},
        },
        indent=2,
    ),
}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--fetch", action="store_true", help="fill var/npm-bench/ with npm")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--frame", action="store_true", help="also page → drawn in Chromium")
    args = parser.parse_args()
    if args.fetch:
        fetch()
        return
    if not (CACHE / "lock.json").exists():
        sys.exit("Run `bench/packages.py --fetch` once first (it asks npm for the packages).")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "osfoundry.settings")
    os.environ.setdefault("STATIC_MANIFEST", "0")
    if not os.environ.get("DATABASE_URL"):
        os.environ["DATABASE_URL"] = "sqlite:///var/bench-packages.sqlite3"
        for suffix in ("", "-wal", "-shm"):
            (ROOT / "var" / f"bench-packages.sqlite3{suffix}").unlink(missing_ok=True)
    import django

    django.setup()
    run(args)


def run(args) -> None:
    from django.conf import settings
    from django.contrib.auth import get_user_model
    from django.core.cache import cache
    from django.core.management import call_command
    from django.test import Client
    from django.urls import reverse

    from rooms.models import NpmPackage, PackageBundle, Project, Proposal, Room
    from rooms.registry import client as client_module
    from rooms.registry import lock as lock_module
    from rooms.runtime.jsengine import engine
    from rooms.services import approve_proposal, propose_snippet

    call_command("migrate", verbosity=0)
    served = Served()
    settings.NPM_REGISTRY_URL = served.url
    settings.ALLOWED_HOSTS = ["testserver", "127.0.0.1", "localhost"]
    users = get_user_model().objects
    owner = users.create_user("bench-owner")
    agent = users.create_user("bench-agent")
    room = Room.objects.create(
        project=Project.objects.create(name="Bench packages"), name="Bench", owner=owner
    )
    room.members.add(agent)
    engine.warm()
    counter = iter(range(10**6))

    def propose(label):
        n = next(counter)
        files = {**APP, "src/App.tsx": APP["src/App.tsx"] + f"\n// {label} {n}\n"}
        asked = len(served.requests())
        started = time.perf_counter()
        proposal = propose_snippet(
            caller=agent,
            room_id=str(room.pk),
            name=f"Issues {n}",
            files=files,
            idempotency_key=f"bench-packages-{n:06}",
        ).proposal
        seconds = time.perf_counter() - started
        requests = served.requests()[asked:]
        tarballs = sum(1 for _method, path in requests if "/-/" in path and "npm/v1" not in path)
        return proposal, seconds, len(requests) - tarballs, tarballs

    def forget() -> None:
        """What a new process has not: the cache of prepared files (in Redis it would stay),
        the packuments it keeps, the stored packages' files it read."""
        cache.clear()
        client_module.packuments.clear()
        lock_module.unpacked_files.__init__()

    rows: dict[str, list] = {"cold": [], "stored": [], "stored, new process": []}
    proposal = None
    for _ in range(args.runs):
        Proposal.objects.all().delete()
        NpmPackage.objects.all().delete()
        PackageBundle.objects.all().delete()
        forget()
        proposal, *numbers = propose("cold")
        rows["cold"].append(numbers)
        rows["stored"].append(propose("stored")[1:])
        forget()
        rows["stored, new process"].append(propose("stored-cold")[1:])
    assert proposal is not None
    lock = proposal.packages
    print(
        f"app: 3 dependencies -> {len(lock['packages'])} packages, "
        f"{sum(p['unpacked_bytes'] for p in lock['packages']) / 1e6:.1f} MB unpacked; "
        f"module table {lock['bundle_bytes'] / 1e3:.0f} KB "
        f"({len(json.loads(__import__('gzip').decompress(proposal.package_bundle.data))['modules'])}"
        f" modules), {len(bytes(proposal.package_bundle.data)) / 1e3:.0f} KB gzipped; "
        f"database: {settings.DATABASES['default']['ENGINE'].rsplit('.', 1)[-1]}; "
        f"runs: {args.runs}"
    )
    for label, values in rows.items():
        seconds = [row[0] for row in values]
        print(
            f"  proposal {label:<19} median {statistics.median(seconds) * 1000:6.0f} ms "
            f"(min {min(seconds) * 1000:.0f}, max {max(seconds) * 1000:.0f}); "
            f"registry requests: {values[0][1]} documents, {values[0][2]} tarballs"
        )
    client = Client()
    client.force_login(owner)
    url = reverse("rooms:proposal", args=[proposal.pk])
    cache.clear()
    first = timed(client, url)
    cached = [timed(client, url) for _ in range(30)]
    print(
        f"  card first {first:.0f} ms; cached median {statistics.median(cached):.1f} ms "
        f"(p95 {sorted(cached)[27]:.1f})"
    )
    if args.frame:
        app = approve_proposal(owner=owner, proposal_id=proposal.pk)
        frame_times(app, args.runs)
    served.stop()


class Served:
    """The registry in a process of its own, as a real one is: its work is not this one's."""

    def __init__(self):
        import multiprocessing

        context = multiprocessing.get_context("fork")
        answer = context.Queue()
        self.process = context.Process(target=serve, args=(answer,), daemon=True)
        self.process.start()
        self.url = answer.get(timeout=60)

    def requests(self) -> list:
        import urllib.request

        with urllib.request.urlopen(f"{self.url}/-/requests") as response:
            return json.loads(response.read())

    def stop(self) -> None:
        self.process.terminate()
        self.process.join(10)


def serve(answer) -> None:
    served = registry()
    served.cache_control = "public, max-age=300"  # what the public registry sends
    served.start()
    for name in served.versions:
        served.document(name)
    answer.put(served.url)
    served.thread.join()


def timed(client, url) -> float:
    started = time.perf_counter()
    response = client.get(url)
    assert response.status_code == 200, response.status_code
    return (time.perf_counter() - started) * 1000


def frame_times(app, runs: int) -> None:
    """Page → the app drawn in Chromium, cold and warm, as bench/runtime.py measures it."""
    from django.conf import settings
    from playwright.sync_api import sync_playwright

    import bench.runtime as runtime
    from tests.servers import CHROMIUM, CHROMIUM_ARGS, start_uvicorn, stop_process

    runtime.RECORDER = runtime.RECORDER.replace(repr(runtime.DRAWN), repr("ul.issues li"))
    env = {
        "DATABASE_URL": os.environ["DATABASE_URL"],
        "SECRET_KEY": settings.SECRET_KEY,
        "STATIC_MANIFEST": "0",
        "LOG_LEVEL": "WARNING",
    }
    cookie = runtime.session_cookie(app.room.owner)
    process, base = start_uvicorn(env=env, log_path=Path(tempfile.mkdtemp()) / "uvicorn.log")
    url = f"{base}/rooms/{app.room_id}/"
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            cold, warm = [], []
            for _ in range(runs):
                context = browser.new_context()
                context.add_cookies([{**cookie, "url": base}])
                context.add_init_script(runtime.RECORDER)
                page = context.new_page()
                cold.append(runtime.open_app(page, url, str(app.pk)))
                for _ in range(2):
                    warm.append(runtime.open_app(page, url, str(app.pk)))
                context.close()
            browser.close()
        for label, values in (("cold", cold), ("warm", warm[1::2])):
            print(
                f"  frame {label}: page→mounted {runtime.summary(values, 'page_to_mounted')} ms, "
                f"page→drawn {runtime.summary(values, 'page_to_drawn')} ms, "
                f"render {runtime.summary(values, 'mount_ms')} ms"
            )
    finally:
        stop_process(process)


if __name__ == "__main__":
    main()
