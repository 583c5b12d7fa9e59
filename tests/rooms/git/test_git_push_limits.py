"""A push is judged by what its objects declare before they are inflated (rooms/git/pack.py):
compression bombs, objects that lie about their size and deltas that make huge files are
refused before memory is spent on them, and nothing of such a push is stored."""

import os
from pathlib import Path

import pytest
from dulwich.objects import Blob, Tree

from rooms.models import GitObject, GitRef, Repository, RepositoryVersion
from tests.rooms.gitclient import clone_url, git, write_files
from tests.rooms.gitpacks import (
    BLOB,
    ZERO,
    commit_of,
    commit_on,
    delta,
    entries_of,
    entry,
    ofs_delta_entry,
    pack,
    receive_pack,
    ref_delta_entry,
    report,
    tree_of,
    zeros_entry,
    zeros_id,
)
from tests.servers import uvicorn_workers, worker_env

MAIN = b"refs/heads/main"
MIB = 2**20


@pytest.fixture
def member_token(project, agent, token_factory):
    project.members.add(agent)
    return token_factory(agent)


def push(base_url, token, commands, data):
    return report(receive_pack(base_url, token, "Demo/timer.git", commands, data))


def nothing_stored() -> bool:
    return not (
        GitObject.objects.exists()
        or GitRef.objects.exists()
        or RepositoryVersion.objects.exists()
        or Repository.objects.exists()
    )


def peak_rss_bytes(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    raise AssertionError(f"/proc/{pid}/status has no VmHWM line")


@pytest.fixture
def worker(transactional_db, tmp_path):
    """One uvicorn process of its own: its peak memory is the server's alone."""
    with uvicorn_workers(worker_env("git-memory-test"), tmp_path, count=1) as [(process, url)]:
        yield process.pid, url


def test_a_small_pack_of_200_mib_of_zeros_is_refused_without_the_worker_growing(
    worker, member_token, tmp_path
):
    pid, url = worker
    # A first push of a real app runs everything a push runs once (the compiler included), so
    # what the second push adds to the worker's peak is that push's alone.
    home, work = tmp_path / "home", tmp_path / "work"
    work.mkdir()
    git(work, "init", "-q", "-b", "main", home=home)
    write_files(work, {"src/App.tsx": "export default function App() { return null; }\n"})
    git(work, "add", "-A", home=home)
    git(work, "commit", "-q", "-m", "first", home=home)
    git(work, "push", clone_url(url, "Demo", "timer", member_token), "main", home=home)
    head = GitRef.objects.get(name="refs/heads/main").value.encode()
    stored = set(GitObject.objects.values_list("sha", flat=True))
    before = peak_rss_bytes(pid)

    tree = tree_of({b"zeros.bin": zeros_id(200 * MIB)})
    commit = commit_on(tree, parents=[head])
    data = pack([zeros_entry(200 * MIB), *entries_of([tree, commit])])
    assert len(data) < 300_000  # a small push
    text = push(url, member_token, [(head, commit.id, MAIN)], data)

    assert "error: zeros.bin: 209715200 bytes, at most 1000000 per file" in text
    assert "ng refs/heads/main rejected by policy" in text
    assert set(GitObject.objects.values_list("sha", flat=True)) == stored
    assert GitRef.objects.get(name="refs/heads/main").value.encode() == head
    # Inflated whole, the blob alone would have grown the worker by 200 MiB (~420 MiB was
    # measured before): it is read through in pieces of at most 1 MiB.
    assert peak_rss_bytes(pid) - before < 40 * MIB


def test_a_file_over_the_limit_in_the_history_alone_is_refused_with_its_path(
    asgi_server, member_token
):
    first = commit_of({b"a.txt": b"a\n", b"big.bin": os.urandom(1_500_000)})
    second = commit_of({b"a.txt": b"a\n"}, parents=[first[-1].id])
    text = push(
        asgi_server.url,
        member_token,
        [(ZERO, second[-1].id, MAIN)],
        pack(entries_of(first + second[1:])),
    )
    assert "error: big.bin: 1500000 bytes, at most 1000000 per file" in text
    assert "ng refs/heads/main rejected by policy" in text
    assert nothing_stored()


def test_an_object_that_inflates_past_its_declared_size_is_an_unpack_error(
    asgi_server, member_token
):
    blob, tree, commit = commit_of({b"a.txt": b"x" * 1000})
    lying = entry(BLOB, blob.as_raw_string(), declared=10)
    text = push(
        asgi_server.url,
        member_token,
        [(ZERO, commit.id, MAIN)],
        pack([lying, *entries_of([tree, commit])]),
    )
    assert "unpack object at offset 12 is larger than its header says" in text
    assert "unpack ok" not in text
    assert nothing_stored()


def test_a_delta_that_makes_a_huge_file_is_refused_before_it_is_applied(asgi_server, member_token):
    base = b"0123456789abcdef" * 64  # 1 KiB
    copy_all = bytes([0x80 | 0x20, 0x04])  # copy 0x400 bytes from offset 0
    copies = 200 * MIB // len(base)
    huge = delta(len(base), copies * len(base), copy_all * copies)  # 400 KB making 200 MiB
    blob, tree, commit = commit_of({b"a.txt": base})
    first = entry(BLOB, base)
    data = pack([first, ofs_delta_entry(len(first), huge), *entries_of([tree, commit])])
    text = push(asgi_server.url, member_token, [(ZERO, commit.id, MAIN)], data)
    assert (
        "error: a file of 209715200 bytes (stored as a change to another), at most 1000000 per "
        "file; keep large files out of the repository" in text
    )
    assert "ng refs/heads/main rejected by policy" in text
    assert nothing_stored()


def test_a_push_past_its_inflated_budget_is_refused(asgi_server, member_token, monkeypatch):
    monkeypatch.setattr("rooms.git.pack.MAX_INFLATED_BYTES", 100_000)
    objects = commit_of({b"%d.txt" % n: bytes([n]) * 40_000 for n in range(3)})
    text = push(
        asgi_server.url, member_token, [(ZERO, objects[-1].id, MAIN)], pack(entries_of(objects))
    )
    assert (
        "error: the push inflates to more than 100000 bytes (0 MiB); push fewer commits at "
        "once, and keep large files out of the repository" in text
    )
    assert nothing_stored()


def test_a_delta_on_an_object_the_repository_holds_is_resolved_and_stored(
    asgi_server, member_token
):
    base = b"line\n" * 2000
    first = commit_of({b"a.txt": base})
    push(asgi_server.url, member_token, [(ZERO, first[-1].id, MAIN)], pack(entries_of(first)))
    changed = base + b"one more\n"
    blob, tree, commit = commit_of({b"a.txt": changed}, parents=[first[-1].id])
    insert = bytes([len(b"one more\n")]) + b"one more\n"
    copy = bytes([0x80 | 0x10 | 0x20, len(base) & 0xFF, len(base) >> 8])  # all of the base
    thin = ref_delta_entry(first[0].id, delta(len(base), len(changed), copy + insert))
    text = push(
        asgi_server.url,
        member_token,
        [(first[-1].id, commit.id, MAIN)],
        pack([thin, *entries_of([tree, commit])]),
    )
    assert "ok refs/heads/main" in text
    assert RepositoryVersion.objects.get(commit_hash=commit.id.decode()).files == {
        "a.txt": changed.decode()
    }
    assert GitObject.objects.filter(sha=blob.id.decode()).exists()


def test_objects_no_ref_reaches_are_not_stored(asgi_server, member_token):
    objects = commit_of({b"a.txt": b"a\n"})
    stray_small, stray_large = (
        entry(BLOB, b"nobody names me\n"),
        entry(BLOB, os.urandom(2_500_000)),
    )
    text = push(
        asgi_server.url,
        member_token,
        [(ZERO, objects[-1].id, MAIN)],
        pack([*entries_of(objects), stray_small, stray_large]),
    )
    assert "ok refs/heads/main" in text
    assert set(GitObject.objects.values_list("sha", flat=True)) == {
        obj.id.decode() for obj in objects
    }


def test_a_push_whose_refs_reach_objects_it_lacks_is_refused(asgi_server, member_token):
    blob, tree, commit = commit_of({b"a.txt": b"a\n"})
    text = push(
        asgi_server.url, member_token, [(ZERO, commit.id, MAIN)], pack(entries_of([tree, commit]))
    )
    assert (
        f"error: the push lacks 1 object(s) its refs need, such as {blob.id.decode()}; fetch "
        "and push again" in text
    )
    assert nothing_stored()


def nested(depth: int) -> list:
    """A commit of one file in `depth` folders, each named d: its blob, trees and commit."""
    blob = Blob.from_string(b"deep\n")
    objects: list = [blob]
    child = tree_of({b"deep.txt": blob.id})
    objects.append(child)
    for _ in range(depth):
        parent = Tree()
        parent.add(b"d", 0o040000, child.id)
        objects.append(parent)
        child = parent
    return [*objects, commit_on(child)]


def test_a_tree_nested_past_the_depth_limit_is_refused_at_push(asgi_server, member_token):
    too_deep = nested(51)
    text = push(
        asgi_server.url, member_token, [(ZERO, too_deep[-1].id, MAIN)], pack(entries_of(too_deep))
    )
    assert "error: " + "d/" * 51 + ": folders nested 51 deep, at most 50; flatten the tree" in text
    assert "ng refs/heads/main rejected by policy" in text
    assert nothing_stored()
    deep_enough = nested(50)
    text = push(
        asgi_server.url,
        member_token,
        [(ZERO, deep_enough[-1].id, MAIN)],
        pack(entries_of(deep_enough)),
    )
    assert "ok refs/heads/main" in text
    assert list(RepositoryVersion.objects.get().files) == ["d/" * 50 + "deep.txt"]


def test_the_files_of_a_commit_past_the_total_limit_are_refused(
    asgi_server, member_token, monkeypatch
):
    monkeypatch.setattr("rooms.git.repositories.MAX_TREE_BYTES", 10 * MIB)
    objects = commit_of({b"%d.txt" % n: bytes([65 + n]) * 900_000 for n in range(12)})
    text = push(
        asgi_server.url, member_token, [(ZERO, objects[-1].id, MAIN)], pack(entries_of(objects))
    )
    assert (
        f"error: the files of {objects[-1].id.decode()[:12]} come to more than 10 MiB, the most "
        "one version holds; keep large files out of the repository" in text
    )
    assert nothing_stored()
