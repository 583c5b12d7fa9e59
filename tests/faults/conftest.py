"""The fault tests' own deployment: a PostgreSQL cluster and a redis-server of their own, on free
ports under a temporary folder, so that stopping them disturbs nothing else; two uvicorn
workers behind deploy/nginx.conf on top (tests/proxy.py).

They run on the PostgreSQL + Redis lane only (DATABASE_URL is PostgreSQL): there they must run
in CI, and a missing tool fails the run; on the SQLite lane they skip.
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import psycopg
import pytest
from django.conf import settings

from tests.proxy import ROOT, deploy, require_nginx
from tests.servers import free_port

PG_BIN = Path("/usr/lib/postgresql")
SECRET_KEY = "fault-tests-secret-key-" + "x" * 40


def pg_tool(name: str) -> str:
    found = sorted(PG_BIN.glob(f"*/bin/{name}"))
    return str(found[-1]) if found else ""


def require_tools() -> None:
    if settings.DATABASES["default"]["ENGINE"] != "django.db.backends.postgresql":
        pytest.skip("fault tests run on the PostgreSQL + Redis lane (DATABASE_URL=postgres://...)")
    missing = [t for t in ("initdb", "pg_ctl") if not pg_tool(t)]
    missing += [] if shutil.which("redis-server") else ["redis-server"]
    if missing:
        message = f"fault tests need {', '.join(missing)}"
        if os.environ.get("CI"):
            pytest.fail(message + " in CI")
        pytest.skip(message)
    require_nginx()


def as_postgres(*command: str) -> list[str]:
    """initdb refuses to run as root: run PostgreSQL's tools as the postgres user then."""
    return ["runuser", "-u", "postgres", "--", *command] if os.geteuid() == 0 else list(command)


class Postgres:
    """A cluster of our own: trust auth on 127.0.0.1:port, fsync off (it is thrown away)."""

    def __init__(self, folder: Path):
        self.folder = folder
        self.data = folder / "data"
        self.port = free_port()
        self.url = f"postgres://postgres@127.0.0.1:{self.port}/faults"

    def init(self) -> None:
        subprocess.run(
            as_postgres(pg_tool("initdb"), "-D", str(self.data), "-A", "trust", "-U", "postgres"),
            check=True,
            capture_output=True,
        )
        self.start()
        with psycopg.connect(self.admin_url(), autocommit=True) as conn:
            conn.execute("CREATE DATABASE faults")

    def admin_url(self) -> str:
        return f"postgres://postgres@127.0.0.1:{self.port}/postgres"

    def start(self) -> None:
        options = (
            f"-p {self.port} -c listen_addresses=127.0.0.1 -k {self.folder} -c fsync=off"
            " -c synchronous_commit=off -c full_page_writes=off -c max_connections=200"
        )
        subprocess.run(
            as_postgres(pg_tool("pg_ctl"), "-D", str(self.data), "-o", options, "-w", "-t", "20")
            + ["-l", str(self.folder / "postgres.log"), "start"],
            check=True,
            capture_output=True,
        )

    def stop(self) -> None:
        subprocess.run(
            as_postgres(pg_tool("pg_ctl"), "-D", str(self.data), "-m", "fast", "-w", "stop"),
            check=True,
            capture_output=True,
        )

    def connections(self) -> int:
        """Client sessions on the faults database now (this query's own excluded)."""
        with psycopg.connect(self.url, autocommit=True) as conn:
            row = conn.execute(
                "SELECT count(*) FROM pg_stat_activity"
                " WHERE datname = 'faults' AND pid <> pg_backend_pid()"
            ).fetchone()
        return row[0] if row else 0

    def query(self, sql: str, *params):
        with psycopg.connect(self.url, autocommit=True) as conn:
            return conn.execute(sql, params).fetchall()


class Redis:
    def __init__(self, folder: Path):
        self.folder = folder
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.process: subprocess.Popen | None = None

    def start(self) -> None:
        self.process = subprocess.Popen(
            ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", ""]
            + ["--appendonly", "no", "--dir", str(self.folder)],
            stdout=subprocess.DEVNULL,
        )
        import redis

        deadline = time.monotonic() + 10
        while True:
            try:
                redis.Redis(port=self.port, socket_timeout=1).ping()
                return
            except redis.ConnectionError:
                assert time.monotonic() < deadline, "redis-server did not start"
                time.sleep(0.05)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(10)


@pytest.fixture(scope="session")
def services():
    """(Postgres, Redis) of the fault tests, migrated once for the session."""
    require_tools()
    folder = Path(tempfile.mkdtemp(prefix="osf-faults-"))
    folder.chmod(0o755)
    if os.geteuid() == 0:
        shutil.chown(folder, "postgres")
    postgres, redis_server = Postgres(folder), Redis(folder)
    try:
        postgres.init()
        redis_server.start()
        subprocess.run(
            [sys.executable, "manage.py", "migrate", "--noinput", "-v0"],
            env=os.environ | worker_env(postgres, redis_server),
            cwd=ROOT,
            check=True,
        )
        yield postgres, redis_server
    finally:
        redis_server.stop()
        if (postgres.data / "postmaster.pid").exists():
            postgres.stop()
        shutil.rmtree(folder, ignore_errors=True)


def worker_env(postgres: Postgres, redis_server: Redis) -> dict[str, str]:
    return {
        "DATABASE_URL": postgres.url,
        "REDIS_URL": redis_server.url,
        "REDIS_PREFIX": f"faults-{uuid.uuid4().hex[:8]}",
        "SECRET_KEY": SECRET_KEY,
        "STATIC_MANIFEST": "0",
        "ALLOWED_HOSTS": "127.0.0.1",
        "DATABASE_THREADS": "4",
    }


@pytest.fixture
def deployment(services, tmp_path):
    """Two workers behind nginx on the fault tests' PostgreSQL and Redis."""
    postgres, redis_server = services
    if not (postgres.data / "postmaster.pid").exists():
        postgres.start()  # a test that stopped it and failed before starting it again
    if redis_server.process is None or redis_server.process.poll() is not None:
        redis_server.start()
    running = deploy(tmp_path, worker_env(postgres, redis_server))
    yield running
    running.stop()


class Seeding:
    """tests/faults/seed.py running in the background; wait() -> what it seeded."""

    def __init__(self, env: dict, receivers: int):
        self.process = subprocess.Popen(
            [sys.executable, "-m", "tests.faults.seed", "--receivers", str(receivers)]
            + ["--tag", uuid.uuid4().hex[:8]],
            env=os.environ | env,
            cwd=ROOT,
            stdout=subprocess.PIPE,
            text=True,
        )

    def wait(self) -> dict:
        out, _ = self.process.communicate(timeout=60)
        assert self.process.returncode == 0, "tests/faults/seed.py failed (its output is above)"
        return json.loads(out.strip().splitlines()[-1])


@pytest.fixture
def seed_later(services):
    """Starts seeding now (seed_later(receivers) -> Seeding), e.g. while the workers start."""
    postgres, redis_server = services
    started: list[Seeding] = []

    def start(receivers: int = 1) -> Seeding:
        started.append(Seeding(worker_env(postgres, redis_server), receivers))
        return started[-1]

    yield start
    for seeding in started:
        if seeding.process.poll() is None:
            seeding.process.kill()
            seeding.process.wait()


@pytest.fixture
def seed(seed_later):
    """Seeds agents in the fault tests' database: seed(receivers) -> dict (tests/faults/seed.py)."""
    return lambda receivers=1: seed_later(receivers).wait()
