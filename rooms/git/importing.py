"""Pin a commit of a local git repository as a version (`manage.py import_repo_version`).

The commit is read with dulwich and pinned through the same service as a pushed branch tip
(rooms/git/repositories.py): the same limits, rules and runnability check. Its objects are copied
into the repository's database store too; no branch is moved, so a clone serves the commit once
a branch points at it (a push, or seed_demo's main for the demo's repository).
"""

from pathlib import Path

from dulwich.errors import NotGitRepository
from dulwich.object_store import MissingObjectFinder
from dulwich.objectspec import parse_commit
from dulwich.repo import Repo

from osfoundry.errors import Invalid

from ..models import Repository, RepositoryVersion
from ..runtime.verdicts import version_problems
from .repositories import pin_version, read_snapshot
from .store import DatabaseObjectStore


def import_repo_version(
    *, repository: Repository, path: str | Path, ref: str = "HEAD"
) -> tuple[RepositoryVersion, bool]:
    """Pin `ref` of the local git repository at `path` as a version; (version, created)."""
    try:
        local = Repo(str(path))
    except NotGitRepository:
        raise Invalid(f"path: {path} is not a git repository", field="path") from None
    with local:
        try:
            commit = parse_commit(local, ref.encode())
        except (KeyError, ValueError):
            raise Invalid(f"ref: {ref!r} names no commit in {path}", field="ref") from None
        snapshot = read_snapshot(local.object_store.__getitem__, commit.id)
        store = DatabaseObjectStore(repository.pk)
        finder = MissingObjectFinder(local.object_store, haves=[], wants=[commit.id])
        store.add_objects((local.object_store[sha], None) for sha, _ in finder)
    pinned = pin_version(repository=repository, snapshot=snapshot, ref=ref)
    version_problems(pinned.version)  # the operator waits: its verdict is found now, and stored
    return pinned.version, pinned.created
