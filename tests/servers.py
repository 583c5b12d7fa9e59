"""Helpers for tests that need a real server: skip only when it is truly absent, never in CI.

bench/ starts its servers here too: one launcher, so a fix to it reaches every caller.
"""

import os
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import quote, urlsplit

import pytest

ROOT = Path(__file__).resolve().parents[1]

# Debian's Chromium, driven by Playwright (never `playwright install`). Without the
# background-networking flags it keeps trying hosts this machine's closed network refuses.
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
]


def require(host: str, port: int, what: str) -> None:
    try:
        socket.create_connection((host, port), timeout=1).close()
    except OSError:
        if os.environ.get("CI"):
            pytest.fail(f"{what} at {host}:{port} is required in CI but is not reachable")
        pytest.skip(f"{what} at {host}:{port} is not running")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def database_url(settings_dict: dict) -> str:
    """A DATABASE_URL for another process to reach the database described by `settings_dict`
    (e.g. the test database pytest-django set up)."""
    if settings_dict["ENGINE"].endswith("sqlite3"):
        return f"sqlite:///{Path(settings_dict['NAME']).resolve()}"  # sqlite:////abs/path
    auth = quote(settings_dict["USER"] or "")
    if settings_dict["PASSWORD"]:
        auth += ":" + quote(settings_dict["PASSWORD"])
    host = settings_dict["HOST"] or "127.0.0.1"
    port = f":{settings_dict['PORT']}" if settings_dict["PORT"] else ""
    return f"postgres://{auth}@{host}{port}/{quote(settings_dict['NAME'])}"


def worker_env(name: str, **more: str) -> dict[str, str]:
    """The environment of a uvicorn worker on pytest-django's test database: its DATABASE_URL,
    CI's SECRET_KEY or else a long one named after `name`, no static manifest, 127.0.0.1 as its
    host; `more` on top (REDIS_URL=..., say)."""
    from django.conf import settings

    return {
        "DATABASE_URL": database_url(settings.DATABASES["default"]),
        "SECRET_KEY": os.environ.get("SECRET_KEY") or f"{name}-" + "x" * 40,
        "STATIC_MANIFEST": "0",
        "ALLOWED_HOSTS": "127.0.0.1",
    } | more


@contextmanager
def uvicorn_workers(env: dict[str, str], log_dir, *, count: int = 2, lifespan: str = "off"):
    """`count` uvicorn processes of the project with `env`, as hosts behind a load balancer,
    each logging warnings to `log_dir`/worker-<n>.log (no access log): their (process, base
    URL) pairs. All are stopped on the way out, those started too should a later one fail."""
    started = []
    try:
        for n in range(count):
            started.append(
                start_uvicorn(
                    env=env,
                    log_path=Path(log_dir) / f"worker-{n}.log",
                    options=["--no-access-log", "--lifespan", lifespan],
                    log_level="warning",
                    cwd=ROOT,
                )
            )
        yield started
    finally:
        for process, _url in started:
            stop_process(process)


def accepts_connections(base_url: str) -> bool:
    """The default readiness check: the port takes a TCP connection. Uvicorn loads the app before
    it binds (with --workers, requests wait in the backlog until a worker is up)."""
    parts = urlsplit(base_url)
    try:
        socket.create_connection((parts.hostname, parts.port), timeout=0.5).close()
    except OSError:
        return False
    return True


def start_uvicorn(
    *,
    env: dict[str, str],
    log_path=None,
    unset=(),
    timeout: float = 30.0,
    app: str = "osfoundry.asgi:application",
    port: int | None = None,
    options: Sequence[str] = (),
    log_level: str = "info",
    cwd=None,
    is_ready: Callable[[str], bool] = accepts_connections,
):
    """Serve `app` with uvicorn on 127.0.0.1:`port` (a free one by default) in a subprocess.

    The server gets this process's environment without the names in `unset`, then `env` on top.
    `options` are further uvicorn arguments ("--factory", "--workers", "4", "--no-access-log").
    Its output goes to `log_path` (the access log too, unless turned off, so tests can check
    which requests reached the server), or to this process's own when None. Returns
    (process, base_url) once `is_ready(base_url)`; the caller stops it with stop_process().
    """
    port = port or free_port()
    log = open(log_path, "w") if log_path else None  # closed by stop_process()
    process = subprocess.Popen(
        [sys.executable, "-m", "uvicorn", app, "--host", "127.0.0.1", "--port", str(port)]
        + ["--log-level", log_level, *options],
        env={k: v for k, v in os.environ.items() if k not in unset} | env,
        cwd=cwd,
        stdout=log,
        stderr=subprocess.STDOUT if log else None,
    )
    process.log_file = log
    base_url = f"http://127.0.0.1:{port}"
    wait_until_ready(process, base_url, is_ready=is_ready, timeout=timeout, log_path=log_path)
    return process, base_url


def wait_until_ready(
    process,
    base_url: str,
    *,
    is_ready: Callable[[str], bool] = accepts_connections,
    timeout: float = 30.0,
    log_path=None,
) -> None:
    """Return once the server `process` started answers `is_ready(base_url)`; stop it and raise
    if it exits first or takes longer than `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            stop_process(process)
            tail = Path(log_path).read_text()[-2000:] if log_path else "(its output is above)"
            raise RuntimeError(f"the server for {base_url} exited early:\n{tail}")
        if is_ready(base_url):
            return
        time.sleep(0.1)
    stop_process(process)
    raise RuntimeError(f"the server for {base_url} was not ready within {timeout} s")


def stop_process(process) -> None:
    process.terminate()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=10)
    log = getattr(process, "log_file", None)
    if log:
        log.close()
