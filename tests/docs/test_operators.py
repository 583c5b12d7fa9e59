"""docs/operators.md's commands, run as written: the production start (the environment file,
migrate, collectstatic, two workers) serving behind deploy/nginx.conf, and the PostgreSQL backup
restored into a new database with every row. TLS is the one thing left out, as in
tests/proxy.py: nginx listens on plain HTTP on 127.0.0.1."""

import os
import re
import secrets
import signal
import subprocess
import uuid
from io import StringIO
from urllib.parse import urlsplit

import httpx
import psycopg
import pytest
from django.conf import settings
from django.core.management import call_command
from django.db import connection

from tests.docs import blocks
from tests.proxy import require_nginx, start_nginx
from tests.servers import database_url, free_port, require, stop_process, wait_until_ready

REDIS_URL = os.environ.get("REDIS_URL") or "redis://127.0.0.1:6379/0"


def documented_environment() -> dict[str, str]:
    """The variables of the environment file docs/operators.md shows (/etc/osfoundry.env)."""
    text = (blocks.ROOT / "docs" / "operators.md").read_text()
    (body,) = re.findall(r"^```ini\n# /etc/osfoundry.env\n(.*?)^```$", text, re.M | re.S)
    return dict(line.split("=", 1) for line in body.splitlines() if line)


def settings_names() -> set[str]:
    example = (blocks.ROOT / ".env.example").read_text()
    return set(re.findall(r"^([A-Z][A-Z0-9_]*)=", example, re.M))


def test_the_production_start_serves_behind_deploy_nginx(transactional_db, tmp_path):
    require_nginx()
    redis = urlsplit(REDIS_URL)
    require(redis.hostname or "127.0.0.1", redis.port or 6379, "Redis")
    documented = documented_environment()
    assert set(documented) == {
        "DATABASE_URL",
        "REDIS_URL",
        "SECRET_KEY",
        "PUBLIC_ORIGIN",
        "BEHIND_TLS_PROXY",
    }
    values = {
        "DATABASE_URL": database_url(settings.DATABASES["default"]),  # this lane's test database
        "REDIS_URL": REDIS_URL,
        "SECRET_KEY": secrets.token_urlsafe(40),
        "PUBLIC_ORIGIN": documented["PUBLIC_ORIGIN"],
        "BEHIND_TLS_PROXY": documented["BEHIND_TLS_PROXY"],
        # The test's own, beside another test run: its Redis keys, its collected files.
        "REDIS_PREFIX": f"test-{uuid.uuid4().hex[:12]}",
        "STATIC_ROOT": str(tmp_path / "staticfiles"),
    }
    env_file = tmp_path / "osfoundry.env"
    env_file.write_text("".join(f"{name}={value}\n" for name, value in values.items()))
    ports = [free_port(), free_port()]
    text = blocks.named("production").text
    assert "/etc/osfoundry.env" in text and "8001 8002" in text
    text = text.replace("/etc/osfoundry.env", str(env_file))
    text = text.replace("8001 8002", " ".join(map(str, ports)))
    # Only what the file sets: no setting of this test process (STATIC_MANIFEST=0 among them).
    env = {k: v for k, v in os.environ.items() if k not in settings_names()}
    log = tmp_path / "workers.log"
    with open(log, "w") as out:
        shell = subprocess.Popen(  # bash, then the workers it starts: one session to end
            ["bash", "-c", "set -euo pipefail\n" + text + "wait\n"],
            cwd=blocks.ROOT,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    nginx = None
    try:
        for port in ports:
            wait_until_ready(shell, f"http://127.0.0.1:{port}", timeout=180, log_path=log)
        nginx, proxy = start_nginx(tmp_path / "nginx", ports)
        for url in [proxy, *(f"http://127.0.0.1:{port}" for port in ports)]:
            ready = httpx.get(url + "/readyz", timeout=30)
            assert ready.status_code == 200, ready.text
            assert ready.json()["status"] == "ready"
        # The console answers for the public origin's host, through the proxy.
        login = httpx.get(
            proxy + "/accounts/login/",
            headers={"Host": "rooms.example.com"},
            timeout=30,
        )
        assert login.status_code == 200, login.text[:500]
        # The collected files, by their hashed names (STATIC_MANIFEST is on).
        assert re.search(r"/static/[\w/.-]+\.[0-9a-f]{12}\.css", login.text), login.text[:2000]
    finally:
        if nginx is not None:
            stop_process(nginx)
        if shell.poll() is None:
            os.killpg(shell.pid, signal.SIGTERM)
        shell.wait(timeout=90)
    assert "Application startup complete." in log.read_text()


@pytest.mark.skipif(
    connection.vendor != "postgresql", reason="pg_dump and pg_restore: the PostgreSQL lane"
)
def test_the_postgresql_backup_restores_every_row(transactional_db, tmp_path, monkeypatch):
    monkeypatch.setattr(
        "agents.management.commands.seed_demo.CREDENTIALS", tmp_path / "demo-credentials.json"
    )
    call_command("seed_demo", "--json", stdout=StringIO())
    source = database_url(settings.DATABASES["default"])
    restored_name = f"{settings.DATABASES['default']['NAME']}_restored_{uuid.uuid4().hex[:8]}"
    restored = source.rsplit("/", 1)[0] + "/" + restored_name
    admin = source.rsplit("/", 1)[0] + "/postgres"
    with psycopg.connect(admin, autocommit=True) as db:
        db.execute(f'CREATE DATABASE "{restored_name}"')
    try:
        done = subprocess.run(
            ["bash", "-c", "set -euo pipefail\n" + blocks.named("backup-postgresql").text],
            cwd=tmp_path,
            env=os.environ | {"DATABASE_URL": source, "RESTORE_URL": restored},
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.returncode == 0, done.stdout + done.stderr
        assert (tmp_path / "osfoundry.dump").stat().st_size > 0

        def rows(url: str) -> dict[str, int]:
            with psycopg.connect(url) as db:
                tables = [
                    name
                    for (name,) in db.execute(
                        "SELECT tablename FROM pg_tables WHERE schemaname = 'public'"
                    )
                ]
                return {
                    t: db.execute(f'SELECT count(*) FROM "{t}"').fetchone()[0]  # type: ignore[index]
                    for t in tables
                }

        copied = rows(restored)
        assert copied == rows(source)
        assert copied["rooms_proposal"] >= 3 and copied["rooms_gitobject"] > 0
        assert copied["agents_message"] > 0 and copied["agents_accesstoken"] >= 3
    finally:
        with psycopg.connect(admin, autocommit=True) as db:
            db.execute(f'DROP DATABASE IF EXISTS "{restored_name}" WITH (FORCE)')
