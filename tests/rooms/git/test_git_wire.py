"""What the git server sends on the wire (rooms/git/server.py): answers larger than one 64 KiB
write arrive whole, a client of the dumb protocol reads the refs as text, and a client that
asked for no side-band gets a plain report-status, never a progress frame it cannot read."""

import hashlib
import os
import struct

import httpx

from rooms.git.repositories import create_repository
from rooms.models import GitRef, Repository, RepositoryVersion
from tests.rooms.gitclient import clone_url, git, write_files

ZERO = "0" * 40


def pushed(server, project, agent, token, tmp_path, files) -> tuple[Repository, str]:
    """A repository with `files` committed and pushed to main: it and the commit's hash."""
    project.members.add(agent)
    repository = create_repository(project=project, name="timer", created_by=agent)
    home, work = tmp_path / "home", tmp_path / "work"
    work.mkdir()
    git(work, "init", "-q", "-b", "main", home=home)
    write_files(work, files)
    git(work, "add", "-A", home=home)
    git(work, "commit", "-q", "-m", "first", home=home)
    git(work, "push", "-q", clone_url(server.url, project.name, "timer", token), "main", home=home)
    return repository, git(work, "rev-parse", "HEAD", home=home).stdout.strip()


def repository_url(server, project) -> str:
    return f"{server.url}/git/{project.name}/timer.git"


def pkt_line(text: bytes) -> bytes:
    return f"{len(text) + 4:04x}".encode() + text


def test_a_clone_larger_than_one_write_arrives_whole(
    asgi_server, project, agent, token_factory, tmp_path, files
):
    # Random bytes as hex do not compress below half: the pack is several 64 KiB writes.
    noise = "\n".join(os.urandom(32).hex() for _ in range(6000)) + "\n"
    token = token_factory(agent)
    pushed(asgi_server, project, agent, token, tmp_path, files | {"data/noise.txt": noise})
    home = tmp_path / "home"
    url = clone_url(asgi_server.url, project.name, "timer", token)
    git(tmp_path, "clone", "-q", url, "cloned", home=home)
    git(tmp_path / "cloned", "fsck", "--full", "--strict", home=home)
    assert (tmp_path / "cloned" / "data" / "noise.txt").read_text() == noise


def test_a_dumb_client_reads_every_ref_as_text(
    asgi_server, project, agent, token_factory, tmp_path, files
):
    token = token_factory(agent)
    repository, head = pushed(asgi_server, project, agent, token, tmp_path, files)
    # Enough branches for a listing over one 64 KiB write.
    names = [f"refs/heads/topic-{n:04}" for n in range(1500)]
    GitRef.objects.bulk_create(GitRef(repository=repository, name=n, value=head) for n in names)
    response = httpx.get(
        f"{repository_url(asgi_server, project)}/info/refs", auth=("agent", token), timeout=30
    )
    assert response.status_code == 200
    assert response.headers["content-type"] == "text/plain"
    assert len(response.content) > 64 * 1024
    lines = response.text.splitlines()
    assert sorted(lines) == sorted(f"{head}\t{name}" for name in [*names, "refs/heads/main"])


def test_a_push_without_side_band_gets_a_plain_report(
    asgi_server, project, agent, token_factory, tmp_path, files
):
    token = token_factory(agent)
    repository, head = pushed(asgi_server, project, agent, token, tmp_path, files)
    # A new branch at a commit the server has: an empty pack. Capabilities: report-status only,
    # so the version report (progress on side-band 2) has nowhere to go.
    header = b"PACK" + struct.pack(">II", 2, 0)
    empty_pack = header + hashlib.sha1(header).digest()  # noqa: S324 — git's own pack checksum
    command = f"{ZERO} {head} refs/heads/topic\0report-status".encode()
    response = httpx.post(
        f"{repository_url(asgi_server, project)}/git-receive-pack",
        content=pkt_line(command) + b"0000" + empty_pack,
        headers={"Content-Type": "application/x-git-receive-pack-request"},
        auth=("agent", token),
        timeout=30,
    )
    assert response.status_code == 200
    assert response.content == (
        pkt_line(b"unpack ok\n") + pkt_line(b"ok refs/heads/topic\n") + b"0000"
    )
    assert GitRef.objects.get(repository=repository, name="refs/heads/topic").value == head
    assert RepositoryVersion.objects.get(repository=repository).commit_hash == head
