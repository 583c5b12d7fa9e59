"""Repositories live in the database: a push to one worker is cloned from another (two uvicorn
processes on the test database, as two hosts behind a load balancer)."""

import os
from pathlib import Path

import pytest
from django.conf import settings

from rooms.models import RepositoryVersion
from tests.rooms.gitclient import clone_url, git, write_files
from tests.servers import database_url, start_uvicorn, stop_process

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture
def workers(transactional_db, tmp_path):
    env = {
        "DATABASE_URL": database_url(settings.DATABASES["default"]),
        "SECRET_KEY": os.environ.get("SECRET_KEY") or "two-worker-git-test-" + "x" * 40,
        "STATIC_MANIFEST": "0",
        "ALLOWED_HOSTS": "127.0.0.1",
    }
    started = []
    try:
        for n in range(2):
            started.append(
                start_uvicorn(
                    env=env,
                    log_path=tmp_path / f"worker-{n}.log",
                    options=["--no-access-log", "--lifespan", "off"],
                    log_level="warning",
                    cwd=ROOT,
                )
            )
        yield [url for _process, url in started]
    finally:
        for process, _url in started:
            stop_process(process)


def test_a_push_to_one_worker_is_cloned_from_the_other(
    workers, tmp_path, project, agent, token_factory, files
):
    project.members.add(agent)
    token = token_factory(agent)
    home = tmp_path / "home"
    worker_a, worker_b = workers
    work = tmp_path / "work"
    work.mkdir()
    git(work, "init", "-q", "-b", "main", home=home)
    write_files(work, files)
    git(work, "add", "-A", home=home)
    git(work, "commit", "-q", "-m", "on A", home=home)
    head = git(work, "rev-parse", "HEAD", home=home).stdout.strip()
    git(work, "push", clone_url(worker_a, project.name, "timer", token), "main", home=home)
    git(tmp_path, "clone", clone_url(worker_b, project.name, "timer", token), "b", home=home)
    assert git(tmp_path / "b", "rev-parse", "HEAD", home=home).stdout.strip() == head
    assert (tmp_path / "b" / "src" / "App.tsx").read_text() == files["src/App.tsx"]
    assert RepositoryVersion.objects.get().commit_hash == head
