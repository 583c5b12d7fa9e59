"""Helpers for tests that need a real server: skip only when it is truly absent, never in CI."""

import os
import socket
import subprocess
import sys
import time
from urllib.parse import quote

import pytest

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
        return f"sqlite:///{settings_dict['NAME']}"  # an absolute path: sqlite:////abs/path
    auth = quote(settings_dict["USER"] or "")
    if settings_dict["PASSWORD"]:
        auth += ":" + quote(settings_dict["PASSWORD"])
    host = settings_dict["HOST"] or "127.0.0.1"
    port = f":{settings_dict['PORT']}" if settings_dict["PORT"] else ""
    return f"postgres://{auth}@{host}{port}/{quote(settings_dict['NAME'])}"


def start_uvicorn(*, env: dict[str, str], log_path, unset=(), timeout: float = 30.0):
    """Serve osfoundry.asgi:application with uvicorn on a free 127.0.0.1 port in a subprocess.

    Returns (process, base_url). The access log goes to `log_path`, so tests can check which
    requests reached the server. The caller stops it with stop_process().
    """
    port = free_port()
    log = open(log_path, "w")  # closed by stop_process()
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "uvicorn",
            "osfoundry.asgi:application",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--log-level",
            "info",
        ],
        env={k: v for k, v in {**os.environ, **env}.items() if k not in unset},
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    process.log_file = log
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            log.close()
            raise RuntimeError(f"uvicorn exited early:\n{open(log_path).read()[-2000:]}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return process, f"http://127.0.0.1:{port}"
        except OSError:
            time.sleep(0.1)
    stop_process(process)
    raise RuntimeError(f"uvicorn did not listen on 127.0.0.1:{port} within {timeout} s")


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
