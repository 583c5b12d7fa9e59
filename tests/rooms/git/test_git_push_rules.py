"""What a pushed commit must be (rooms/git/repositories.py), and what the git server answers to
requests git would never send."""

import base64
import io

import httpx
import pytest
from dulwich.object_format import DEFAULT_OBJECT_FORMAT
from dulwich.object_store import MemoryObjectStore
from dulwich.objects import Blob, Commit, Tree
from dulwich.pack import write_pack_objects

from osfoundry.errors import Invalid
from rooms.git.repositories import read_snapshot
from rooms.models import GitObject, GitRef, Repository


def commit_with(message: bytes, files: dict[bytes, bytes]):
    store = MemoryObjectStore()
    tree = Tree()
    for name, data in files.items():
        blob = Blob.from_string(data)
        store.add_object(blob)
        tree.add(name, 0o100644, blob.id)
    store.add_object(tree)
    commit = Commit()
    commit.tree, commit.message = tree.id, message
    commit.author = commit.committer = b"A \0 <a@e>"
    commit.author_time = commit.commit_time = 0
    commit.author_timezone = commit.commit_timezone = 0
    store.add_object(commit)
    return store, commit.id


def test_a_snapshot_keeps_text_and_lists_binary_files_without_nul_anywhere():
    store, sha = commit_with(b"Fix\0 it\n", {b"a.txt": b"hello\n", b"b.bin": b"\0\1\2"})
    snapshot = read_snapshot(store.__getitem__, sha)
    assert snapshot.files == {"a.txt": "hello\n", "b.bin": None}
    assert "\0" not in snapshot.message + snapshot.author
    assert snapshot.message == "Fix\ufffd it"


def test_a_snapshot_leaves_submodules_out():
    store, sha = commit_with(b"m", {b"a.txt": b"hello\n"})
    tree = store[store[sha].tree]
    tree.add(b"vendor", 0o160000, b"1" * 40)  # a gitlink: a commit of another repository
    store.add_object(tree)
    commit = store[sha]
    commit.tree = tree.id
    store.add_object(commit)
    assert read_snapshot(store.__getitem__, commit.id).files == {"a.txt": "hello\n"}


def test_a_ref_to_anything_but_a_commit_is_no_snapshot():
    store, sha = commit_with(b"m", {b"a.txt": b"hello\n"})
    tree_sha = store[sha].tree
    with pytest.raises(Invalid) as refused:
        read_snapshot(store.__getitem__, tree_sha)
    assert refused.value.message == f"{tree_sha.decode()} is not a commit"
    assert refused.value.field == "ref"


def snapshot_refusal(store, sha) -> str:
    with pytest.raises(Invalid) as refused:
        read_snapshot(store.__getitem__, sha)
    assert refused.value.field == "files"
    return refused.value.message


def with_entry(store, sha, name: bytes, mode: int, target: bytes) -> bytes:
    """The commit `sha` again, its tree given one more entry (`name`, `mode`) naming `target`."""
    tree = store[store[sha].tree]
    tree.add(name, mode, target)
    store.add_object(tree)
    commit = store[sha]
    commit.tree = tree.id
    store.add_object(commit)
    return commit.id


def test_a_tree_entry_naming_a_blob_as_a_folder_is_no_snapshot():
    store, sha = commit_with(b"m", {b"a.txt": b"hello\n"})
    blob_sha = store[store[sha].tree][b"a.txt"][1]
    bad = with_entry(store, sha, b"src", 0o040000, blob_sha)  # a folder entry that names a file
    assert snapshot_refusal(store, bad) == f"src/: {blob_sha.decode()} is not a tree"


def test_a_tree_entry_naming_a_tree_as_a_file_is_no_snapshot():
    store, sha = commit_with(b"m", {b"a.txt": b"hello\n"})
    old_tree = store[sha].tree
    # A file entry that names a tree (the commit's own tree, before the entry).
    bad = with_entry(store, sha, b"b.txt", 0o100644, old_tree)
    assert snapshot_refusal(store, bad) == f"b.txt: {old_tree.decode()} is not a file"


def test_a_file_over_the_per_file_limit_is_no_snapshot():
    store, sha = commit_with(b"m", {b"big.bin": b"x" * 1_000_001})
    assert snapshot_refusal(store, sha) == (
        "big.bin: 1000001 bytes, at most 1000000 per file; keep large files out of the repository"
    )


def test_a_file_that_is_not_utf8_is_listed_as_binary():
    store, sha = commit_with(b"m", {b"a.txt": b"ok\n", b"latin1.txt": b"caf\xe9\n"})
    assert read_snapshot(store.__getitem__, sha).files == {"a.txt": "ok\n", "latin1.txt": None}


def receive_pack(server, token, new: bytes, pack: bytes) -> httpx.Response:
    auth = base64.b64encode(f"agent:{token}".encode()).decode()
    line = b"0" * 40 + b" " + new + b" refs/heads/main\0report-status side-band-64k"
    return httpx.post(
        f"{server.url}/git/Demo/timer.git/git-receive-pack",
        content=b"%04x" % (len(line) + 4) + line + b"0000" + pack,
        headers={
            "Authorization": f"Basic {auth}",
            "Content-Type": "application/x-git-receive-pack-request",
        },
    )


def test_a_branch_pushed_at_a_tree_is_refused_and_nothing_is_stored(
    asgi_server, project, agent, token_factory
):
    project.members.add(agent)
    Repository.objects.create(project=project, name="timer")
    store, sha = commit_with(b"m", {b"a.txt": b"hello\n"})
    tree = store[store[sha].tree]
    pack = io.BytesIO()
    write_pack_objects(pack.write, [store[tree[b"a.txt"][1]], tree], DEFAULT_OBJECT_FORMAT)
    response = receive_pack(asgi_server, token_factory(agent), tree.id, pack.getvalue())
    assert response.status_code == 200
    assert f"error: {tree.id.decode()} is not a commit".encode() in response.content
    assert b"ng refs/heads/main rejected by policy" in response.content
    assert not GitObject.objects.exists() and not GitRef.objects.exists()


def test_a_push_of_garbage_is_an_unpack_error_not_a_500(asgi_server, project, agent, token_factory):
    project.members.add(agent)
    Repository.objects.create(project=project, name="timer")
    response = receive_pack(asgi_server, token_factory(agent), b"1" * 40, b"PACK not really a pack")
    assert response.status_code == 200
    assert b"unpack " in response.content and b"unpack ok" not in response.content
    assert not GitObject.objects.exists()
