"""Repositories live in the database: a push to one worker is cloned from another (two uvicorn
processes on the test database, as two hosts behind a load balancer)."""

import pytest

from rooms.models import RepositoryVersion
from tests.rooms.gitclient import clone_url, git, write_files
from tests.servers import uvicorn_workers, worker_env


@pytest.fixture
def workers(transactional_db, tmp_path):
    with uvicorn_workers(worker_env("two-worker-git-test"), tmp_path) as started:
        yield [url for _process, url in started]


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
