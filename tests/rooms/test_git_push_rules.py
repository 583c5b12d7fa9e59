"""What a pushed commit must be (rooms/repositories.py), and what the git server answers to
requests git would never send."""

import base64

import httpx
from dulwich.object_store import MemoryObjectStore
from dulwich.objects import Blob, Commit, Tree

from rooms.models import GitObject, Repository
from rooms.repositories import read_snapshot


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


def test_a_push_of_garbage_is_an_unpack_error_not_a_500(asgi_server, project, agent, token_factory):
    project.members.add(agent)
    Repository.objects.create(project=project, name="timer")
    auth = base64.b64encode(f"agent:{token_factory(agent)}".encode()).decode()
    line = b"0" * 40 + b" " + b"1" * 40 + b" refs/heads/main\0report-status side-band-64k"
    body = b"%04x" % (len(line) + 4) + line + b"0000" + b"PACK not really a pack"
    response = httpx.post(
        f"{asgi_server.url}/git/Demo/timer.git/git-receive-pack",
        content=body,
        headers={
            "Authorization": f"Basic {auth}",
            "Content-Type": "application/x-git-receive-pack-request",
        },
    )
    assert response.status_code == 200
    assert b"unpack " in response.content and b"unpack ok" not in response.content
    assert not GitObject.objects.exists()
