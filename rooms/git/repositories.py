"""Repositories of a project: who reaches them over git, what a pushed commit must be, and the
versions pinned from branch tips. The git server (rooms/git/server.py) and the operator's
`import_repo_version` (rooms/git/importing.py) both pin versions through `pin_version`.
"""

import re
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import quote

from django.db import IntegrityError, transaction
from dulwich.objects import Blob, Commit, ShaFile, Tree

from osfoundry.auth import READ, WRITE, AnyUser, Principal, User
from osfoundry.errors import Invalid, NotFound
from osfoundry.schemas import MAX_PAGE
from osfoundry.text import one_line_problems

from ..access import get_room_for_user
from ..models import Project, Proposal, Repository, RepositoryVersion, Room
from ..runtime import rules, verdicts
from .pack import MAX_FILE_BYTES, SUBMODULE, file_too_large
from .store import DatabaseRefs

# Limits of a pushed commit (those of the pack as a whole are rooms/git/pack.py's): large apps,
# not large binaries. Every file of a version is stored, and read, as one row.
MAX_TREE_FILES = 5_000
MAX_TREE_BYTES = 64 * 1024 * 1024
# Folders within folders: apps nest a handful; past this a tree is an attack on whoever walks it.
MAX_TREE_DEPTH = 50
MAX_MESSAGE_CHARS = 2_000
# The refs a push may update, and the only ones served: branches (each tip a pinned version) and
# tags (each pinned too). Anything else (refs/x/y, refs/notes/…, HEAD) is refused.
REF_NAMESPACES = (b"refs/heads/", b"refs/tags/")
MAX_REF_BYTES = 255  # GitRef.name
# A pushed app with at most this much code is checked within its push (is_quick_to_check).
CHECKED_WITHIN_PUSH_BYTES = 256 * 1024
REPOSITORY_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")
# git check-ref-format's characters a ref name may not hold (controls are refused before).
REF_FORBIDDEN = re.compile(r"[ ~^:?*\[\\]")


# ---------------------------------------------------------------------------------------------
# Who reaches a repository over git


def open_git_repository(
    *, principal: Principal, project_name: str, repository_name: str, push: bool
) -> Repository:
    """The repository a fetch (`push=False`) or push reaches. Members of the project fetch and
    push; owners of its Rooms fetch (they review its versions). Everyone else gets NotFound,
    as for a repository that does not exist. A push to a missing name gets a repository not
    stored yet (push-to-create, for members with the write scope only): the push stores it with
    create_repository once it stores anything, so a refused push leaves none behind."""
    user = principal.user
    project = Project.objects.readable_by(user).filter(name=project_name).first()
    is_member = project is not None and project.members.filter(pk=user.pk).exists()
    repository = project.repositories.filter(name=repository_name).first() if project else None
    if project is None or (repository is None and not (push and is_member)):
        raise NotFound(f"Repository {project_name}/{repository_name} not found", field="repository")
    principal.require(WRITE if push else READ)
    if push and not is_member:
        raise NotFound(f"Repository {project_name}/{repository_name} not found", field="repository")
    assert project is not None
    if repository is not None:
        return repository
    check_repository_name(repository_name)
    return Repository(project=project, name=repository_name, created_by=user)


def check_repository_name(name: str) -> None:
    if not REPOSITORY_NAME.fullmatch(name) or name.endswith(".git"):
        raise Invalid(
            f"repository: {name!r} is not a valid name; use letters, digits, '.', '_' and '-' "
            "(at most 100, starting with a letter or digit)",
            field="repository",
        )


def create_repository(*, project: Project, name: str, created_by: User | None) -> Repository:
    check_repository_name(name)
    try:
        with transaction.atomic():
            repository = Repository.objects.create(
                project=project, name=name, created_by=created_by
            )
            DatabaseRefs(repository.pk).set_symbolic_ref(b"HEAD", b"refs/heads/main")
    except IntegrityError:  # two first pushes at once: both use the one created
        return Repository.objects.get(project=project, name=name)
    return repository


# ---------------------------------------------------------------------------------------------
# What a push may update


def ref_problem(ref: bytes) -> str | None:
    """Why a push may not update `ref`, or None: outside the namespaces served, or not a name
    git itself would make (git check-ref-format's rules, each named)."""
    if not ref.startswith(REF_NAMESPACES):
        return "only branches (refs/heads/…) and tags (refs/tags/…) can be pushed"
    if len(ref) > MAX_REF_BYTES:
        return f"a ref name of {len(ref)} bytes, at most {MAX_REF_BYTES}"
    try:
        name = ref.decode()
    except UnicodeDecodeError:
        return "a ref name must be UTF-8"
    if problems := one_line_problems(name, field="ref name", what="ref name"):
        return problems[0]
    rule = next(
        (
            rule
            for broken, rule in [
                (".." in name, "may not contain '..'"),
                ("@{" in name, "may not contain '@{'"),
                (bool(REF_FORBIDDEN.search(name)), "may not contain a space or ~ ^ : ? * [ \\"),
                (name.endswith(("/", ".")), "may not end with '/' or '.'"),
                ("//" in name, "may not contain an empty part ('//')"),
                (
                    any(part.startswith(".") for part in name.split("/")),
                    "may not have a part that starts with '.'",
                ),
                (
                    any(part.endswith(".lock") for part in name.split("/")),
                    "may not have a part that ends with '.lock'",
                ),
            ]
            if broken
        ),
        None,
    )
    return f"invalid ref name: {rule} (git check-ref-format)" if rule else None


# ---------------------------------------------------------------------------------------------
# What a commit must be


@dataclass(frozen=True)
class Snapshot:
    commit_hash: str
    message: str
    author: str
    files: dict[str, str | None]  # None: binary, listed but not stored as text


def read_snapshot(lookup: Callable[[bytes], ShaFile], commit_sha: bytes) -> Snapshot:
    """The files of a commit, read with `lookup` (sha -> object); Invalid past the limits."""
    commit = lookup(commit_sha)
    if not isinstance(commit, Commit):
        raise Invalid(f"{commit_sha.decode()} is not a commit", field="ref")
    files: dict[str, str | None] = {}
    total = 0
    pending: list[tuple[str, int, bytes]] = [("", 0, commit.tree)]
    while pending:
        prefix, depth, tree_sha = pending.pop()
        tree = lookup(tree_sha)
        if not isinstance(tree, Tree):
            raise Invalid(f"{prefix or '/'}: {tree_sha.decode()} is not a tree", field="files")
        for entry in tree.iteritems():
            path = prefix + stored_text(entry.path)
            if entry.mode == SUBMODULE:
                continue  # submodules are not part of a pinned version's files
            if entry.mode & 0o040000:
                if depth + 1 > MAX_TREE_DEPTH:
                    raise Invalid(
                        f"{path}/: folders nested {depth + 1} deep, at most {MAX_TREE_DEPTH}; "
                        "flatten the tree",
                        field="files",
                    )
                pending.append((path + "/", depth + 1, entry.sha))
                continue
            blob = lookup(entry.sha)
            if not isinstance(blob, Blob):
                raise Invalid(f"{path}: {entry.sha.decode()} is not a file", field="files")
            if (size := len(blob.data)) > MAX_FILE_BYTES:
                raise file_too_large(path, size, MAX_FILE_BYTES)
            total += size
            if total > MAX_TREE_BYTES:
                raise Invalid(
                    f"the files of {commit_sha.decode()[:12]} come to more than "
                    f"{MAX_TREE_BYTES // 2**20} MiB, the most one version holds; keep large "
                    "files out of the repository",
                    field="files",
                )
            files[path] = decode_text(blob.data)
            if len(files) > MAX_TREE_FILES:
                raise Invalid(
                    f"more than {MAX_TREE_FILES} files in the tree of "
                    f"{commit_sha.decode()[:12]}; at most {MAX_TREE_FILES}",
                    field="files",
                )
    return Snapshot(
        commit_hash=commit_sha.decode(),
        message=stored_text(commit.message).strip()[:MAX_MESSAGE_CHARS],
        author=stored_text(commit.author)[:300],
        files=dict(sorted(files.items())),
    )


def stored_text(data: bytes) -> str:
    # A commit may carry any bytes; no database stores NUL (PostgreSQL refuses it).
    return data.decode("utf-8", errors="replace").replace("\0", "\N{REPLACEMENT CHARACTER}")


def decode_text(data: bytes) -> str | None:
    if b"\0" in data:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


# ---------------------------------------------------------------------------------------------
# Versions


@dataclass(frozen=True)
class PinnedVersion:
    version: RepositoryVersion
    created: bool


def pin_version(*, repository: Repository, snapshot: Snapshot, ref: str) -> PinnedVersion:
    """Pin a commit as a version (once per commit: a second push of it is the same version).
    A new version is stored unchecked: rooms/runtime/verdicts.py finds its verdict, within the push,
    after it is answered (rooms/git/version_checks.py) or when someone reads it."""
    version, created = RepositoryVersion.objects.get_or_create(
        repository=repository,
        commit_hash=snapshot.commit_hash,
        defaults={
            "ref": ref[:200],
            "message": snapshot.message,
            "author": snapshot.author,
            "files": snapshot.files,
        },
    )
    return PinnedVersion(version=version, created=created)


def is_quick_to_check(version: RepositoryVersion) -> bool:
    """Whether the runnability check of `version` fits within its push: code of at most
    CHECKED_WITHIN_PUSH_BYTES (a snippet-sized app) compiles in well under 0.1 s, and the
    pusher reads its verdict in git's output; a larger app is checked once the push is
    answered (rooms/git/version_checks.py)."""
    code = rules.app_files(version)
    size = sum(len(text) for path, text in code.items() if path.endswith(rules.CODE_SUFFIXES))
    return size <= CHECKED_WITHIN_PUSH_BYTES


def push_report(version: RepositoryVersion, problems: list[str] | None) -> list[str]:
    """The lines the pusher reads (git prints each as `remote: …`); `problems` None: the
    version is being checked."""
    head = f"version {version.pk} of {version.ref or version.short_hash} ({version.short_hash})"
    if problems is None:
        return [
            f"{head}: pinned; checking now whether it runs in the Room: list_room_repositories "
            "shows the result (runnable), propose_room_repo_app names any problem"
        ]
    if not problems:
        return [f"{head}: runs in the Room; propose it with propose_room_repo_app"]
    return [f"{head}: cannot run in the Room:"] + [f"  {p}" for p in problems[:10]]


# ---------------------------------------------------------------------------------------------
# Updates of apps from a repository


def repo_update_target(room: Room, version: RepositoryVersion) -> tuple[dict, dict] | None:
    """A version of a repository the Room already runs one app from updates that app (its card
    shows the diff between the two versions): (its proposal fields, what its content hash
    binds besides the version). A first version, or a repository behind several
    apps, makes a new app. The same version again is refused: nothing to review."""
    apps = [
        app
        for app in room.apps.filter(position__isnull=False).select_related(
            "proposal__repository_version"
        )
        if app.proposal.kind == Proposal.Kind.REPO
        and app.proposal.repository_version is not None
        and app.proposal.repository_version.repository_id == version.repository_id
    ]
    if len(apps) != 1:
        return None
    app = apps[0]
    if app.proposal.repository_version_id == version.pk:
        raise Invalid(
            f"version_id: “{app.name}” v{app.revision} already runs this version; push a new "
            "commit and propose that version",
            code="unchanged",
            field="version_id",
        )
    return (
        {"app": app, "base_revision": app.revision},  # the proposal's fields
        {"update_of": str(app.pk), "base_revision": app.revision},  # what its hash binds
    )


def open_repo_line(caller: User, room: Room, version: RepositoryVersion) -> Proposal | None:
    """The caller's repository proposal to `room` that a new version of the same repository
    answers: the latest of its line of work, sent back with changes requested. The new version
    continues that card as its next revision (rooms/review/revisions.py)."""
    sent_back = (
        Proposal.objects.filter(
            room=room,
            proposed_by=caller,
            kind=Proposal.Kind.REPO,
            status=Proposal.Status.CHANGES_REQUESTED,
            repository_version__repository_id=version.repository_id,
            next__isnull=True,
        )
        .select_related("repository_version")
        .order_by("-decided_at")
    )
    previous = sent_back.first()
    if previous is not None and previous.repository_version_id == version.pk:
        raise Invalid(
            f"version_id: revision {previous.iteration} of “{previous.name}” is this version, "
            "and its owner requested changes; push a new commit and propose that version",
            code="unchanged",
            field="version_id",
        )
    return previous


# ---------------------------------------------------------------------------------------------
# What agents read

# Versions listed per repository: enough to find the one just pushed.
LISTED_VERSIONS = 3


def git_path(repository: Repository) -> str:
    return f"/git/{quote(repository.project.name)}/{quote(repository.name)}.git"


def list_room_repositories(user: AnyUser, room_id: str, *, origin: str) -> list[dict]:
    """The repositories of a Room's project with their clone URL and latest versions, newest
    first (what propose_room_repo_app needs)."""
    room = get_room_for_user(user, room_id, agent=True)
    repositories = room.project.repositories.select_related("project")[:MAX_PAGE]
    return [
        {
            "repository_id": str(repository.pk),
            "name": repository.name,
            "clone_url": origin + git_path(repository),
            "latest_versions": [
                {
                    "version_id": str(version.pk),
                    "commit": version.commit_hash,
                    "ref": version.ref,
                    "message": version.message.partition("\n")[0][:200],
                    "pushed_at": version.imported_at.isoformat(),
                    "runnable": verdicts.runs(version),
                }
                for version in repository.versions.order_by("-imported_at")[:LISTED_VERSIONS]
            ],
        }
        for repository in repositories
    ]
