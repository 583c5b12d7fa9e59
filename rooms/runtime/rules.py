"""The Room runtime's rules, once: where an app starts, what it can load, what of it runs.

The Room page's frame (static/rooms/frame-runtime.js) starts every app from ENTRY and loads the
files LOADABLE_SUFFIXES name. Everything that needs these facts reads them here: the run check
(rooms/runtime/runnable.py), the snippet rules (rooms/runtime/snippet_rules.py), the stored verdicts
(rooms/runtime/verdicts.py), the card (rooms/review/cards.py) and the frame's files
(rooms/runtime/views.py). app_files is the one answer to "which files does the Room run" for a
proposal or a version.
"""

from osfoundry.errors import Problem

from ..models import Proposal, RepositoryVersion

ENTRY = "src/App.tsx"
# The app's npm manifest: read by the server for its dependencies, never loaded by the frame.
MANIFEST = "package.json"
CODE_SUFFIXES = (".tsx", ".ts", ".jsx", ".js", ".mjs")
# What the frame can load: code, and JSON and CSS imported from it.
LOADABLE_SUFFIXES = CODE_SUFFIXES + (".json", ".css")
# A repository version runs from this folder, and the browser runs at most this much of it.
APP_FOLDER = "src/"
APP_MAX_BYTES = 5_000_000


def text_bytes(text: str) -> int:
    # surrogatepass: a lone surrogate must reach validation (and its clear error), not crash.
    return len(text.encode("utf-8", "surrogatepass"))


def problem_at(path: str, line: int, column: int, message: str) -> Problem:
    """A problem in one of the app's files, as every answer names it (`path:line:column:
    message`), about the field `files.<path>`."""
    return Problem(f"{path}:{line}:{column}: {message}", field=f"files.{path}")


def app_files(subject: Proposal | RepositoryVersion) -> dict[str, str]:
    """The files the Room runs of a proposal or a version, and nothing else: a snippet's files
    as proposed; of a repository version (or a proposal of one), its src/ folder, the file
    types the frame loads only, binary files left out."""
    if isinstance(subject, Proposal):
        if subject.kind == Proposal.Kind.SNIPPET:
            return dict(subject.files)
        assert subject.repository_version is not None  # a database constraint
        subject = subject.repository_version
    return {
        path: text
        for path, text in subject.files.items()
        if isinstance(text, str)
        and path.startswith(APP_FOLDER)
        and path.endswith(LOADABLE_SUFFIXES)
    }


def manifest_of(subject: Proposal | RepositoryVersion) -> dict[str, str]:
    """The app's package.json, as {"package.json": text}, or {}: a snippet's, or the one at a
    repository version's root (its dependencies: rooms/registry/dependencies.py)."""
    if isinstance(subject, Proposal):
        if subject.kind == Proposal.Kind.SNIPPET:
            text = subject.files.get(MANIFEST)
            return {MANIFEST: text} if isinstance(text, str) else {}
        assert subject.repository_version is not None  # a database constraint
        subject = subject.repository_version
    text = subject.files.get(MANIFEST)
    return {MANIFEST: text} if isinstance(text, str) else {}


def cannot_start(subject: Proposal | RepositoryVersion, files: dict[str, str]) -> str | None:
    """Why the Room cannot even start `files`, the app_files of a repository version: it lacks
    the entry, or holds more app code than the browser runs (None: it can start). A snippet's
    own rules say so before it is stored (rooms/runtime/snippet_rules.py)."""
    version = subject.repository_version if isinstance(subject, Proposal) else subject
    if version is None:
        return None
    if ENTRY not in files:
        return (
            f"{version} has no {ENTRY}, so the Room cannot run it in a tab: the runtime starts "
            f"from {ENTRY}. Propose a version that has it."
        )
    total = sum(text_bytes(text) for text in files.values())
    if total > APP_MAX_BYTES:
        return (
            f"{version} has {total} bytes of app code under {APP_FOLDER}; the Room runs at most "
            f"{APP_MAX_BYTES} bytes in the browser; trim src/ and propose that version."
        )
    return None
