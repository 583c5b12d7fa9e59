"""Small builders shared by the rooms tests."""

from osfoundry.idempotency import canonical_hash
from rooms.git.repositories import Snapshot, pin_version
from rooms.models import Proposal, Repository, RepositoryVersion
from rooms.registry.resolve import Node
from rooms.review.revisions import propose_update
from rooms.runtime.rules import text_bytes
from rooms.services import propose_repo_version, propose_snippet

# The smallest app the Room runs: its entry with a default export (tests/rooms/test_runnable_*).
APP = "export default function App() {\n  return <p>Hello</p>;\n}\n"
# An app importing a package the Room does not have, and the refusal word for word (it names what
# is available, so the agent can fix the import in one retry).
LEFT_PAD = 'import leftPad from "left-pad";\nexport default () => <p>{leftPad("1", 2)}</p>;\n'
LEFT_PAD_REFUSED = (
    "src/App.tsx:1:21: module 'left-pad' is not available in Rooms; an app imports its own "
    "files (relative paths), react, react-dom, react-dom/client, react/jsx-runtime and the "
    "curated packages chart.js (chart.js/auto, chart.js/helpers), clsx, d3, date-fns "
    "(date-fns/<function>, date-fns/locale, date-fns/locale/<code>), framer-motion, lodash "
    "(lodash/<function>), lucide-react, mathjs, papaparse, react-chartjs-2, recharts, "
    "tailwindcss, three (three/addons/controls/OrbitControls.js, "
    "three/examples/jsm/controls/OrbitControls.js), uuid, zustand (zustand/middleware, "
    "zustand/react/shallow, zustand/shallow, zustand/vanilla, zustand/vanilla/shallow); copy "
    "any other code you need into the app"
)


def propose(room, agent, files, *, key="key-00001", name="Standup timer"):
    return propose_snippet(
        caller=agent, room_id=str(room.pk), name=name, files=files, idempotency_key=key
    ).proposal


def propose_version(room, agent, version, key="repo-key-0001", *, name="Timer"):
    """The proposal of the pinned repository `version` for `room`, by `agent`."""
    return propose_repo_version(
        caller=agent,
        room_id=str(room.pk),
        name=name,
        repository_id=str(version.repository_id),
        version_id=str(version.pk),
        idempotency_key=key,
    ).proposal


def pin(repository, files, commit):
    """Version `commit` * 40 of `repository` with `files`, pinned from main as a push pins one."""
    snapshot = Snapshot(commit_hash=commit * 40, message=commit, author="A <a@e>", files=files)
    return pin_version(repository=repository, snapshot=snapshot, ref="main").version


def stored_version(project, files, commit_hash):
    """A version row of a new repository "timer" of `project`: `files` and a README."""
    repository = Repository.objects.create(project=project, name="timer")
    return RepositoryVersion.objects.create(
        repository=repository, commit_hash=commit_hash, files=files | {"README.md": "# Timer\n"}
    )


def stored_unchecked(room, agent, *, files=None, version=None, name="Old app"):
    """A pending proposal row written as proposals were before they were checked for running
    (or under an older runtime): the only way an app that cannot run still reaches the Room's
    frame and cards. For tests of what those do with one, never to get around the check."""
    kind = Proposal.Kind.REPO if version else Proposal.Kind.SNIPPET
    content = (
        {"kind": "repo", "name": name, "version_id": str(version.pk)}
        if version
        else {"kind": "snippet", "name": name, "files": files}
    )
    stored_files = version.files if version else files
    return Proposal.objects.create(
        room=room,
        proposed_by=agent,
        kind=kind,
        name=name,
        files=files or {},
        repository_version=version,
        content_hash=canonical_hash(content),
        file_count=len(stored_files),
        total_bytes=sum(text_bytes(text or "") for text in stored_files.values()),
    )


def proposal_rows(room, agent, numbers, **fields):
    """Snippet proposals "App n" for each n of `numbers`, written as rows in one query (`fields`:
    their status and decision): what years of proposals leave, for tests of what reads them.
    Returns them in the order of `numbers`."""
    return Proposal.objects.bulk_create(
        Proposal(
            room=room,
            kind=Proposal.Kind.SNIPPET,
            name=f"App {n}",
            files={"src/App.tsx": f"export default () => <p>{n}</p>;\n"},
            content_hash=f"{n:064x}",
            file_count=1,
            total_bytes=30,
            proposed_by=agent,
            **fields,
        )
        for n in numbers
    )


def changed(files, marker):
    return {**files, "src/App.tsx": files["src/App.tsx"] + f"\n// {marker}\n"}


def update(app, agent, files, *, key="update-0001", name=None):
    return propose_update(
        caller=agent,
        room_id=str(app.room_id),
        instance_id=str(app.pk),
        files=files,
        idempotency_key=key,
        name=name,
    )


def node(path: str, version: str = "1.0.0") -> Node:
    """A resolved package at `path` (node_modules/<name>, or nested), required by package.json:
    no dependencies, no install script, nothing to fetch."""
    return Node(
        path=path,
        name=path.rpartition("node_modules/")[2],
        version=version,
        integrity="",
        shasum="",
        tarball="",
        unpacked_size=0,
        dependencies={},
        peers={},
        deprecated="",
        has_install_script=False,
        required_by="package.json",
    )
