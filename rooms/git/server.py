"""Git over smart HTTP at /git/<project>/<repository>.git: dulwich's WSGI application on the
database store (rooms/git/store.py), behind a2wsgi's threads (osfoundry/asgi.py), so a push
never ties the event loop.

Authentication is HTTP Basic with a personal access token as the password (any user name), as
git's credential helpers expect. Pushes go through `PushHandler`: the pack is received and
checked against the limits before anything is stored, branch tips become pinned versions, and
what happened is told in git's own output (`remote: …` lines). Whether a new version runs in the
Room is checked once the push is answered (rooms/git/version_checks.py).
"""

import base64
import re
from collections.abc import Iterable, Iterator

from django.db import close_old_connections
from dulwich.errors import GitProtocolError
from dulwich.objects import ShaFile, Tag
from dulwich.pack import write_pack_data
from dulwich.protocol import CAPABILITY_NO_DONE, SIDE_BAND_CHANNEL_PROGRESS
from dulwich.server import Backend, ReceivePackHandler, UploadPackHandler, _ProtocolGraphWalker
from dulwich.web import GunzipFilter, HTTPGitApplication

from osfoundry import ratelimit
from osfoundry.auth import Principal, authenticate_remembered
from osfoundry.errors import DomainError, Invalid
from osfoundry.text import visible

from ..repomodels import Repository
from ..runtime import verdicts
from . import pack, repositories, version_checks
from .repositories import ref_problem
from .store import ZERO_SHA, DatabaseObjectStore, DatabaseRefs, open_repository

PREFIX = "/git/"
ROUTE = re.compile(
    r"/git/(?P<project>[^/]+)/(?P<repository>[^/]+?)\.git"
    r"(?P<service>/info/refs|/git-upload-pack|/git-receive-pack)"
)
REALM = 'Basic realm="osFoundry"'
# dulwich writes each protocol line separately, and each write crosses a2wsgi's thread hop:
# coalescing into 64 KiB took a clone from 3.3 s to 1.5 s (/work/shared/RESEARCH.md).
WRITE_CHUNK = 64 * 1024
MAX_TAG_DEPTH = 10


def matches(scope) -> bool:
    return scope["path"].startswith(PREFIX)


def application(environ, start_response) -> Iterable[bytes]:
    """The WSGI application: authenticate, find the repository, let dulwich speak git; then
    check the versions a push pinned."""
    close_old_connections()
    pinned: list = []  # ids of the versions a push pinned unchecked
    try:
        yield from serve(environ, start_response, pinned)
    finally:
        close_old_connections()
        version_checks.check_later(pinned)


def serve(environ, start_response, pinned: list) -> Iterator[bytes]:
    match = ROUTE.fullmatch(environ["PATH_INFO"])
    if match is None:
        yield plain(
            start_response,
            "404 Not Found",
            "Not found: clone <origin>/git/<project>/<repository>.git",
        )
        return
    query = environ.get("QUERY_STRING", "")
    push = match["service"] == "/git-receive-pack" or "service=git-receive-pack" in query
    principal = authenticate_remembered(basic_password(environ.get("HTTP_AUTHORIZATION", "")))
    # The caller's one budget, shared with REST and MCP (osfoundry.ratelimit): by token, or by
    # address without a valid one (guessing tokens costs budget too).
    address = environ.get("REMOTE_ADDR") or "unknown"
    quota = ratelimit.take_sync(principal.token_key if principal else f"ip:{address}")
    if quota.exceeded:
        yield plain(start_response, "429 Too Many Requests", quota.message, quota.header_items())
        return
    if principal is None:
        yield plain(
            start_response,
            "401 Unauthorized",
            "Authentication required: a personal access token as the password",
            [("WWW-Authenticate", REALM)],
        )
        return
    try:
        repository = repositories.open_git_repository(
            principal=principal,
            project_name=match["project"],
            repository_name=match["repository"],
            push=push,
        )
    except DomainError as error:
        status = {403: "403 Forbidden", 404: "404 Not Found"}.get(
            error.http_status, "400 Bad Request"
        )
        yield plain(start_response, status, error.message)
        return
    # uvicorn already removed the chunked framing: dulwich would decode it a second time, and
    # pushes over 1 MiB would fail while git prints "Everything up-to-date".
    if environ.get("HTTP_TRANSFER_ENCODING", "").lower() == "chunked":
        del environ["HTTP_TRANSFER_ENCODING"]
    # Gunzip: git compresses large fetch requests (many `have` lines).
    app = GunzipFilter(
        HTTPGitApplication(
            SingleRepositoryBackend(repository, principal, pinned),
            handlers={b"git-upload-pack": CloneHandler, b"git-receive-pack": PushHandler},
        )
    )
    yield from coalesced(app, environ, start_response)


def coalesced(app, environ, start_response) -> Iterator[bytes]:
    buffer = bytearray()
    write = None

    def buffered_write(data: bytes) -> None:
        buffer.extend(data)
        if len(buffer) >= WRITE_CHUNK and write is not None:
            write(bytes(buffer))
            buffer.clear()

    def buffered_start_response(status, headers, exc_info=None):
        nonlocal write
        write = start_response(status, headers, exc_info)
        return buffered_write

    try:
        for chunk in app(environ, buffered_start_response):
            buffer.extend(chunk)
            if len(buffer) >= WRITE_CHUNK:
                yield bytes(buffer)
                buffer.clear()
    except GitProtocolError as error:
        # A request git itself would never send (a ref update line that does not parse, a
        # want of no object): git prints an ERR line as "remote error: …", where a cut
        # response would leave it guessing.
        buffer.extend(pkt_line(b"ERR " + str(error).encode("utf-8", "replace")[:1000]))
    if buffer:
        yield bytes(buffer)


def pkt_line(data: bytes) -> bytes:
    return b"%04x" % (len(data) + 4) + data


def plain(start_response, status: str, text: str, headers=()) -> bytes:
    body = (text + "\n").encode()
    start_response(
        status,
        [("Content-Type", "text/plain; charset=utf-8"), ("Content-Length", str(len(body)))]
        + list(headers),
    )
    return body


def basic_password(header: str) -> str | None:
    scheme, _, encoded = header.strip().partition(" ")
    if scheme.lower() != "basic":
        return None
    try:
        decoded = base64.b64decode(encoded.strip(), validate=True).decode()
    except (ValueError, UnicodeDecodeError):
        return None
    return decoded.partition(":")[2] or None


class SingleRepositoryBackend(Backend):
    """The one repository this request reached (access was decided before dulwich runs);
    `unchecked` collects the ids of the versions a push pinned, to check after the answer."""

    def __init__(self, repository: Repository, principal: Principal, unchecked: list):
        self.repository = repository
        self.principal = principal
        self.unchecked = unchecked
        self.repo = open_repository(repository)

    def open_repository(self, path):
        return self.repo

    def store_repository(self) -> None:
        """A push to a new name stores its repository now that it stores something in it."""
        if not self.repository._state.adding:
            return
        self.repository = repositories.create_repository(
            project=self.repository.project,
            name=self.repository.name,
            created_by=self.repository.created_by,
        )
        # Another first push may have created it meanwhile: store into that one.
        store, refs = self.repo.object_store, self.repo.refs
        assert isinstance(store, DatabaseObjectStore) and isinstance(refs, DatabaseRefs)
        store.repository_id = refs.repository_id = self.repository.pk


class CloneHandler(UploadPackHandler):
    """upload-pack whose pack entries are the objects' compressed bodies as stored, where
    dulwich's would inflate, parse and deflate each again (43 ms of a 2 MB clone's 0.24 s).
    A partial clone's filter (`--filter=blob:none`) is accepted and everything sent: git asks
    for what it left out later, by object id, which this server refuses (an unadvertised
    object), so a filtered clone's checkout failed."""

    def handle(self) -> None:
        # UploadPackHandler.handle of dulwich 1.2, but for the writing of the pack.
        self._processing_have_lines = True
        store = self.repo.object_store
        assert isinstance(store, DatabaseObjectStore)
        walker = _ProtocolGraphWalker(self, store, self.repo.get_peeled, self.repo.refs.get_symrefs)
        wants: list = []

        def determine_wants(refs, depth=None) -> list:
            wants.extend(walker.determine_wants(refs, depth))
            return wants

        missing = self.repo.find_missing_objects(
            determine_wants, walker, self.progress, get_tagged=self.get_tagged
        )
        if not wants or missing is None:
            return
        # Iterating reads the client's `have` lines: before handle_done, as dulwich does.
        shas = [sha for sha, _hint in missing]
        if not walker.handle_done(not self.has_capability(CAPABILITY_NO_DONE), self._done_received):
            return
        self._start_pack_send_phase()
        self.progress(f"counting objects: {len(shas)}, done.\n".encode("ascii"))
        write_pack_data(
            self.write_pack_data,
            store.stored_entries(shas),
            num_records=len(shas),
            object_format=self.repo.object_format,
        )
        self.proto.write_pkt_line(None)


class PushHandler(ReceivePackHandler):
    """receive-pack with the rules and the limits. Each ref is judged by its name first
    (repositories.ref_problem); the pack is read within pack.py's limits into a stage, never
    whole into memory; the commit each ref points at is checked (repositories.read_snapshot);
    then only the objects the accepted refs reach are stored, and each tip becomes a pinned
    version. A push that breaks a limit stores nothing, and one to a new name that stores
    nothing leaves no repository behind."""

    def _apply_pack(self, refs):
        problems = {ref: problem for _old, _new, ref in refs if (problem := ref_problem(ref))}
        updates = [(old, new, ref) for old, new, ref in refs if ref not in problems]
        snapshots: dict = {}
        try:
            if any(new != ZERO_SHA for _old, new, _ref in updates):
                snapshots = self._receive_and_store(updates)
            elif any(new != ZERO_SHA for _old, new, _ref in refs):
                self._drain()  # the pack of refs refused by their names: read, never kept
        except pack.MalformedPack as error:
            self._drain()
            yield (b"unpack", error.message.encode())
            return
        except Invalid as error:
            yield from self._refuse(refs, problems, error.message)
            return
        yield (b"unpack", b"ok")
        for old, new, ref in refs:
            if ref in problems:
                self._say(f"error: {visible(ref.decode('utf-8', 'replace'))}: {problems[ref]}")
                yield ref, problems[ref].encode()
                continue
            status = self._update(ref, old, new)
            yield ref, status
            if status == b"ok" and (snapshot := snapshots.get(ref)) is not None:
                self._pin(ref, snapshot)

    def _receive_and_store(self, updates) -> dict:
        """Receive the pack, check what the refs point at, store what they reach: the
        snapshot of each ref's commit. Invalid when a limit or a rule is broken."""
        store = self._object_store()
        staged = pack.receive_pack(self.proto.recv, external=store.get_raw, limits=pack.limits())
        try:
            tips = [new for _old, new, _ref in updates if new != ZERO_SHA]
            reached = pack.reach(staged, tips, object_bytes=pack.limits().object_bytes)
            if missing := store.missing(reached.held):
                raise Invalid(
                    f"the push lacks {len(missing)} object(s) its refs need, such as "
                    f"{min(missing).decode()}; fetch and push again",
                    field="pack",
                )

            def lookup(sha: bytes) -> ShaFile:
                return staged[sha] if sha in staged else store[sha]

            snapshots = {
                ref: repositories.read_snapshot(lookup, peeled(lookup, new))
                for _old, new, ref in updates
                if new != ZERO_SHA
            }
            self._backend().store_repository()
            store.add_staged(staged.entries(sorted(reached.staged)))
        finally:
            staged.close()
        return snapshots

    def _object_store(self) -> DatabaseObjectStore:
        store = self.repo.object_store
        assert isinstance(store, DatabaseObjectStore)
        return store

    def _update(self, ref: bytes, old: bytes, new: bytes) -> bytes:
        try:
            if new == ZERO_SHA:
                self.repo.refs.remove_if_equals(ref, old)
            else:
                self.repo.refs.set_if_equals(ref, old, new)
        except OSError as error:
            self._say(f"error: {ref.decode()}: {error}; fetch and push again")
            return b"failed to write"
        return b"ok"

    def _pin(self, ref: bytes, snapshot: repositories.Snapshot) -> None:
        backend = self._backend()
        version = repositories.pin_version(
            repository=backend.repository, snapshot=snapshot, ref=short_ref(ref)
        ).version
        problems: list[str] | None = None  # None: the runnability check runs after the answer
        if (
            verdicts.rule_problems(version)  # the rules are quick: applied within the push
            or verdicts.known(version) is not None  # pushed before (e.g. to another branch)
            or repositories.is_quick_to_check(version)
        ):
            problems = verdicts.version_problems(version)
        else:
            backend.unchecked.append(version.pk)
        for line in repositories.push_report(version, problems):
            self._say(line)

    def _backend(self) -> SingleRepositoryBackend:
        assert isinstance(self.backend, SingleRepositoryBackend)
        return self.backend

    def _refuse(self, refs, problems: dict, reason: str):
        self._drain()
        self._say(f"error: {reason}")
        yield (b"unpack", b"ok")
        for _old, _new, ref in refs:
            yield ref, problems.get(ref, "rejected by policy").encode()

    def _drain(self) -> None:
        # Read what the client still sends, so it reads our answer instead of a broken pipe;
        # up to twice the limit, so a client that never stops sending cannot hold a thread.
        left = 2 * pack.MAX_PUSH_BYTES
        while left > 0 and (data := self.proto.read(min(WRITE_CHUNK, left))):
            left -= len(data)

    def _say(self, line: str) -> None:
        if self.has_capability(b"side-band-64k"):
            self.proto.write_sideband(SIDE_BAND_CHANNEL_PROGRESS, (line + "\n").encode())


def peeled(lookup, sha: bytes) -> bytes:
    """What a ref at `sha` pins: the commit an annotated tag (or a tag of a tag) points at;
    read_snapshot refuses anything but a commit."""
    for _ in range(MAX_TAG_DEPTH):
        tag = lookup(sha)
        if not isinstance(tag, Tag):
            return sha
        sha = tag.object[1]
    raise Invalid(f"{sha.decode()}: tags of tags nested past {MAX_TAG_DEPTH}", field="ref")


def short_ref(ref: bytes) -> str:
    """The name a version keeps of its ref: `main` for refs/heads/main, `tags/v1` for
    refs/tags/v1 (git's own short forms)."""
    return ref.decode().removeprefix("refs/heads/").removeprefix("refs/")
