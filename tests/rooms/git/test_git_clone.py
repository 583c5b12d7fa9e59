"""Clones and fetches send the stored objects as their pack entries (rooms/git/server.py
CloneHandler, rooms/git/store.py DatabaseObjectStore.stored_entries), checked by Debian's `git`
against a live server."""

import importlib
import zlib

from django.apps import apps

from rooms.git.repositories import create_repository
from rooms.git.store import DatabaseObjectStore
from rooms.models import GitObject
from tests.rooms.gitclient import clone_url, git, write_files


def push_history(tmp_path, url, home, files) -> list[str]:
    """Two commits pushed to main; their hashes, oldest first."""
    work = tmp_path / "work"
    work.mkdir()
    git(work, "init", "-q", "-b", "main", home=home)
    commits = []
    for number, extra in enumerate(["", "export const more = 2;\n"]):
        write_files(work, {**files, "src/more.ts": extra} if extra else files)
        git(work, "add", "-A", home=home)
        git(work, "commit", "-q", "-m", f"commit {number}", home=home)
        commits.append(git(work, "rev-parse", "HEAD", home=home).stdout.strip())
    git(work, "push", "-q", url, "main", home=home)
    return commits


def test_a_clone_receives_every_object_as_stored_and_git_verifies_them(
    asgi_server, project, agent, token_factory, tmp_path, files
):
    project.members.add(agent)
    repository = create_repository(project=project, name="timer", created_by=agent)
    url = clone_url(asgi_server.url, project.name, "timer", token_factory(agent))
    home = tmp_path / "home"
    commits = push_history(tmp_path, url, home, files)

    cloned = tmp_path / "cloned"
    git(tmp_path, "clone", "-q", url, "cloned", home=home)
    git(cloned, "fsck", "--full", "--strict", home=home)
    history = git(cloned, "rev-list", "HEAD", home=home).stdout.split()
    assert history == commits[::-1]
    assert (cloned / "src" / "more.ts").read_text() == "export const more = 2;\n"
    # Every object the clone holds is one the database holds, the same bytes once inflated.
    listed = git(cloned, "rev-list", "--objects", "--all", home=home).stdout.split("\n")
    shas = {line.split(" ")[0] for line in listed if line}
    stored = GitObject.objects.filter(repository=repository)
    assert shas == set(stored.values_list("sha", flat=True))
    for obj in stored:
        body = git(cloned, "cat-file", "-p" if obj.type_num != 3 else "blob", obj.sha, home=home)
        assert obj.size == len(zlib.decompress(obj.data))
        if obj.type_num == 3:
            assert body.stdout.encode() == zlib.decompress(obj.data)


def test_a_shallow_clone_gets_the_tip_and_a_filtered_one_gets_everything(
    asgi_server, project, agent, token_factory, tmp_path, files
):
    project.members.add(agent)
    url = clone_url(asgi_server.url, project.name, "timer", token_factory(agent))
    home = tmp_path / "home"
    commits = push_history(tmp_path, url, home, files)

    git(tmp_path, "clone", "-q", "--depth", "1", url, "shallow", home=home)
    shallow = tmp_path / "shallow"
    assert git(shallow, "rev-list", "HEAD", home=home).stdout.split() == [commits[-1]]
    assert (shallow / ".git" / "shallow").read_text().split() == [commits[-1]]

    # A partial clone gets everything: nothing for its checkout to fetch by id later.
    git(tmp_path, "clone", "-q", "--filter=blob:none", url, "filtered", home=home)
    assert (tmp_path / "filtered" / "src" / "more.ts").read_text() == "export const more = 2;\n"
    missing = git(
        tmp_path / "filtered", "rev-list", "--objects", "--all", "--missing=print", home=home
    )
    assert [line for line in missing.stdout.split("\n") if line.startswith("?")] == []
    git(tmp_path / "filtered", "fsck", "--full", home=home)


def test_an_incremental_fetch_sends_only_what_the_client_lacks(
    asgi_server, project, agent, token_factory, tmp_path, files
):
    project.members.add(agent)
    url = clone_url(asgi_server.url, project.name, "timer", token_factory(agent))
    home = tmp_path / "home"
    work = tmp_path / "work"
    push_history(tmp_path, url, home, files)
    git(tmp_path, "clone", "-q", url, "other", home=home)
    (work / "src" / "third.ts").write_text("export const third = 3;\n")
    git(work, "add", "-A", home=home)
    git(work, "commit", "-q", "-m", "third", home=home)
    git(work, "push", "-q", url, "main", home=home)

    fetched = git(tmp_path / "other", "fetch", "--progress", "origin", home=home)
    # A commit, its tree, the src/ tree and one blob: four objects, not the whole repository.
    assert "counting objects: 4, done." in fetched.stderr
    git(tmp_path / "other", "fsck", "--full", home=home)


def test_sizes_of_objects_stored_before_sizes_were_are_measured(db, project):
    repository = create_repository(project=project, name="timer", created_by=None)
    store = DatabaseObjectStore(repository.pk)
    from dulwich.objects import Blob

    blobs = [Blob.from_string(f"body {n}\n".encode() * n) for n in range(1, 4)]
    store.add_objects((blob, None) for blob in blobs)
    GitObject.objects.update(size=0)
    migration = importlib.import_module("rooms.migrations.0006_git_object_size")

    migration.measure(apps, None)

    sizes = dict(GitObject.objects.values_list("sha", "size"))
    assert sizes == {blob.id.decode(): len(blob.as_raw_string()) for blob in blobs}
