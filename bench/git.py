"""Push and clone of a 200-file, 2 MB app: our git server vs `git http-backend` (git's own).

    .venv/bin/python bench/git.py [--runs 5] [--files 200] [--bytes 2000000]

Both are served the same way, by uvicorn on 127.0.0.1 in a process of their own: ours is
osfoundry.asgi:application on its own SQLite database (var/bench-git.sqlite3, recreated) unless
DATABASE_URL is set; the anchor is `git http-backend` run as CGI per request behind a2wsgi (a
small bridge, bench_git_backend below) on a bare repository on disk. Each run pushes the app to a
new repository and clones it back, with Debian's `git`; the table shows the median and the
spread. Goal: ours within 2× the anchor. A push pins the version and is answered; the Room's
runnability check on its src/ (every code file compiled, as the frame would) runs after the
answer (rooms/git/version_checks.py). The "verdict" column is the time from the push's start until
that check has stored its verdict; each clone starts after it, so it competes with no check.
`--git-only` puts the files in lib/: nothing for the check to compile.
"""

import argparse
import os
import random
import shutil
import statistics
import string
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "osfoundry.settings")
os.environ.setdefault("DATABASE_URL", "sqlite:///var/bench-git.sqlite3")
os.environ.setdefault("STATIC_MANIFEST", "0")

from tests.rooms.gitclient import git, git_env, write_files  # noqa: E402
from tests.servers import start_uvicorn, stop_process  # noqa: E402


def make_app(count: int, total: int, root: str = "src") -> dict[str, str]:
    """`count` source files of about total/count bytes each: code-like lines, not repeats.
    Under another `root` than src/ the Room runs none of them: no runnability check."""
    rng = random.Random(13)
    words = ["".join(rng.choices(string.ascii_lowercase, k=rng.randint(3, 9))) for _ in range(400)]
    files = {}
    for index in range(count):
        lines, size = [], 0
        while size < total // count:
            line = f"export const {rng.choice(words)}{index}_{len(lines)} = " + " + ".join(
                f'"{rng.choice(words)}"' for _ in range(rng.randint(2, 8))
            )
            lines.append(line + ";")
            size += len(line) + 2
        folder = f"{root}/part{index // 20:02}" if index else root
        name = "App.tsx" if index == 0 else f"module{index:03}.ts"
        files[f"{folder}/{name}"] = "\n".join(lines) + "\n"
    files[f"{root}/App.tsx"] = "export default function App() { return <h1>Bench</h1>; }\n"
    return files


def prepare_ours() -> tuple[str, str]:
    """A fresh database with a member and a write token; (token, project name)."""
    url = os.environ["DATABASE_URL"]
    if url.startswith("sqlite:///"):
        Path(url.removeprefix("sqlite:///")).unlink(missing_ok=True)
    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.core.management import call_command

    from agents.tokens import create_access_token
    from rooms.models import Project

    call_command("migrate", verbosity=0)
    user, _ = get_user_model().objects.get_or_create(username="bench-agent")
    project, _ = Project.objects.get_or_create(name="Bench")
    project.members.add(user)
    _, token = create_access_token(user=user, scopes="osfoundry:read osfoundry:write")
    return token, project.name


def timed(cwd: Path, *args: str, home: Path) -> float:
    start = time.perf_counter()
    git(cwd, *args, home=home)
    return time.perf_counter() - start


def run(base: str, work: Path, scratch: Path, home: Path, runs: int, url_for, verdict=None) -> dict:
    pushes, clones, verdicts = [], [], []
    for n in range(runs):
        url = url_for(base, f"app{n}")
        start = time.perf_counter()
        pushes.append(timed(work, "push", "-q", url, "main", home=home))
        if verdict is not None:
            verdict(f"app{n}")
            verdicts.append(time.perf_counter() - start)
        target = scratch / f"clone-{n}"
        clones.append(timed(scratch, "clone", "-q", url, str(target), home=home))
        assert (target / ".git").exists() and any(target.iterdir())
        shutil.rmtree(target)
    return {"push": pushes, "clone": clones, "verdict": verdicts}


def wait_for_verdict(name: str) -> None:
    """Until the check after the push has stored the verdict of repository `name`'s version."""
    from rooms.models import RepositoryVersion
    from rooms.runtime import verdicts

    deadline = time.monotonic() + 60
    versions = RepositoryVersion.objects.filter(repository__name=name).only(
        "rule_problems", "run_verdict", "run_verdict_fingerprint"
    )
    while not any(verdicts.known(version) is not None for version in versions):
        if time.monotonic() > deadline:
            raise RuntimeError(f"the push to {name} was not checked within 60 s")
        time.sleep(0.005)


def cell(times: list[float]) -> str:
    return f"{statistics.median(times):6.3f} s ({min(times):.3f}–{max(times):.3f})"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--files", type=int, default=200)
    parser.add_argument("--bytes", type=int, default=2_000_000)
    parser.add_argument(
        "--git-only",
        action="store_true",
        help="the files outside src/: the push pins a version the Room cannot run, unchecked",
    )
    options = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="bench-git-"))
    home, work, bare = scratch / "home", scratch / "work", scratch / "repos"
    work.mkdir()
    bare.mkdir()
    app = make_app(options.files, options.bytes, "lib" if options.git_only else "src")
    write_files(work, app)
    git(work, "init", "-q", "-b", "main", home=home)
    git(work, "add", "-A", home=home)
    git(work, "commit", "-q", "-m", "bench", home=home)
    size = sum(len(text.encode()) for text in app.values())
    token, project = prepare_ours()
    env = {"STATIC_MANIFEST": "0", "LOG_LEVEL": "WARNING"}
    ours, ours_url = start_uvicorn(
        env=env, options=["--no-access-log", "--log-level", "warning"], cwd=ROOT
    )
    anchor, anchor_url = start_uvicorn(
        env={"GIT_PROJECT_ROOT": str(bare), **git_env(home)},
        app="bench.git:backend_app",
        options=["--no-access-log", "--log-level", "warning"],
        cwd=ROOT,
    )
    try:

        def ours_for(base, name):
            return f"{base.replace('://', f'://bench:{token}@')}/git/{project}/{name}.git"

        def anchor_for(base, name):
            subprocess.run(
                ["git", "init", "-q", "--bare", "-b", "main", str(bare / f"{name}.git")], check=True
            )
            return f"{base}/{name}.git"

        results = {
            "git http-backend": run(anchor_url, work, scratch, home, options.runs, anchor_for),
            "osFoundry (dulwich, database)": run(
                ours_url, work, scratch, home, options.runs, ours_for, wait_for_verdict
            ),
        }
    finally:
        stop_process(ours)
        stop_process(anchor)
        shutil.rmtree(scratch, ignore_errors=True)
    print_table(results, files=len(app), size=size, runs=options.runs)


def print_table(results: dict, *, files: int, size: int, runs: int) -> None:
    print(f"{files} files, {size / 1e6:.2f} MB, {runs} runs; median (min–max)")
    print(f"{'server':32} {'push':>26} {'clone':>26} {'verdict (after push start)':>28}")
    for name, times in results.items():
        verdict = cell(times["verdict"]) if times["verdict"] else "—"
        print(f"{name:32} {cell(times['push']):>26} {cell(times['clone']):>26} {verdict:>28}")
    base = results["git http-backend"]
    mine = results["osFoundry (dulwich, database)"]
    ratio = {
        key: statistics.median(mine[key]) / statistics.median(base[key])
        for key in base
        if base[key]
    }
    print(f"{'ratio':32} {ratio['push']:25.2f}× {ratio['clone']:25.2f}×")


def bench_git_backend(environ, start_response):
    """`git http-backend` as CGI, one process per request (as a web server runs it)."""
    body = environ["wsgi.input"].read()
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("HTTP_")},
        "GIT_HTTP_EXPORT_ALL": "1",
        "REMOTE_USER": "bench",
        "REQUEST_METHOD": environ["REQUEST_METHOD"],
        "PATH_INFO": environ["PATH_INFO"],
        "QUERY_STRING": environ.get("QUERY_STRING", ""),
        "CONTENT_TYPE": environ.get("CONTENT_TYPE", ""),
        "CONTENT_LENGTH": str(len(body)),
        "GATEWAY_INTERFACE": "CGI/1.1",
    }
    if environ.get("HTTP_GIT_PROTOCOL"):
        env["GIT_PROTOCOL"] = environ["HTTP_GIT_PROTOCOL"]
    output = subprocess.run(
        ["git", "http-backend"], input=body, env=env, capture_output=True, check=True
    ).stdout
    head, _, payload = output.partition(b"\r\n\r\n")
    status, headers = "200 OK", []
    for line in head.decode().split("\r\n"):
        name, _, value = line.partition(": ")
        if name.lower() == "status":
            status = value
        elif name:
            headers.append((name, value))
    start_response(status, headers)
    return [payload]


def make_backend_app():
    from a2wsgi import WSGIMiddleware

    return WSGIMiddleware(bench_git_backend)


if __name__ == "__main__":
    main()
else:
    backend_app = make_backend_app()
