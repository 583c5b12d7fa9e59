"""Read one pinned commit out of a local git repository (no network, no working tree)."""

import subprocess
from dataclasses import dataclass
from pathlib import Path

from osfoundry.errors import Invalid

from .models import Repository, RepositoryVersion

MAX_FILES = 2000
MAX_FILE_BYTES = 1_000_000


@dataclass(frozen=True)
class Snapshot:
    commit_hash: str
    message: str
    files: dict[str, str | None]  # None: binary or too large, listed but not stored


def git(path: Path, *args: str, input: bytes | None = None) -> bytes:
    result = subprocess.run(
        ["git", "-C", str(path), *args], input=input, capture_output=True, timeout=60
    )
    if result.returncode != 0:
        message = result.stderr.decode(errors="replace").strip().splitlines()
        raise Invalid(f"git {args[0]}: {message[-1] if message else 'failed'}", field="path")
    return result.stdout


def read_commit(path: Path, ref: str) -> Snapshot:
    if not (path / ".git").exists() and not (path / "HEAD").exists():
        raise Invalid(f"path: {path} is not a git repository", field="path")
    commit = git(path, "rev-parse", "--verify", f"{ref}^{{commit}}").decode().strip()
    message = git(path, "log", "-1", "--format=%B", commit).decode(errors="replace").strip()
    listing = git(path, "ls-tree", "-r", "-z", "--long", commit).split(b"\0")
    entries: list[tuple[str, str, int]] = []
    for line in filter(None, listing):
        meta, _, raw_name = line.partition(b"\t")
        _mode, kind, raw_sha, size = meta.split()
        if kind != b"blob":
            continue  # submodules are not part of a pinned version's files
        entries.append((raw_name.decode(errors="replace"), raw_sha.decode(), int(size)))
    if len(entries) > MAX_FILES:
        raise Invalid(f"path: {len(entries)} files at {ref}, at most {MAX_FILES}", field="path")
    wanted = [sha for _, sha, size in entries if size <= MAX_FILE_BYTES]
    blobs = read_blobs(path, wanted)
    files: dict[str, str | None] = {}
    for name, sha, _size in entries:
        files[name] = decode_text(blobs.get(sha))
    return Snapshot(commit_hash=commit, message=message[:2000], files=files)


def read_blobs(path: Path, shas: list[str]) -> dict[str, bytes]:
    if not shas:
        return {}
    out = git(path, "cat-file", "--batch", input=("\n".join(shas) + "\n").encode())
    blobs, offset = {}, 0
    while offset < len(out):
        header_end = out.index(b"\n", offset)
        sha, _kind, size = out[offset:header_end].split()
        start = header_end + 1
        blobs[sha.decode()] = out[start : start + int(size)]
        offset = start + int(size) + 1
    return blobs


def decode_text(data: bytes | None) -> str | None:
    if data is None or b"\0" in data:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def import_repo_version(
    *, repository: Repository, path: str | Path, ref: str = "HEAD"
) -> tuple[RepositoryVersion, bool]:
    """Pin `ref` of the local git repository at `path` as a version; (version, created)."""
    snapshot = read_commit(Path(path), ref)  # git I/O before any transaction
    version, created = RepositoryVersion.objects.get_or_create(
        repository=repository,
        commit_hash=snapshot.commit_hash,
        defaults={"ref": ref, "message": snapshot.message, "files": snapshot.files},
    )
    return version, created
