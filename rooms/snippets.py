"""The snippet rules: what a proposed snippet must be, and which files the Room runs.

Pure functions of the proposed files (and, for a repository version, of its pinned files):
rooms.services applies them when a proposal arrives; the Room page's runtime gets exactly what
runnable_files returns. The character rules (what a file, path or name may not carry) are in
rooms/characters.py. Each problem names its field: `files.<path>`, `files`, or `name`.
"""

import unicodedata

from django.conf import settings

from osfoundry.errors import Problem, Unavailable
from osfoundry.text import one_line_problems, visible

from .characters import content_problems, path_character_problem
from .models import Proposal, RepositoryVersion

SNIPPET_ENTRY = "src/App.tsx"
MAX_PATH_CHARS = 255
# What the in-browser runtime can load; a repository version runs from its src/ folder.
RUNNABLE_SUFFIXES = (".tsx", ".ts", ".jsx", ".js", ".mjs", ".json", ".css")
RUNNABLE_FOLDER = "src/"
RUNNABLE_MAX_BYTES = 5_000_000


def path_problem(path: str) -> str | None:
    """Why `path` is not a safe relative path, or None.

    Paths are taken as given, never normalised: `src/./App.tsx`, `src//x.ts` and a trailing
    slash are refused rather than silently rewritten, so the reviewer sees exactly what runs.
    """
    if not path:
        return "empty path"
    if len(path) > MAX_PATH_CHARS:
        return f"longer than {MAX_PATH_CHARS} characters"
    if character := path_character_problem(path):
        return character
    if "\\" in path:
        return "backslash; use '/' between folders"
    if path.startswith("/"):
        return "absolute path; use a path relative to the app root, e.g. 'src/App.tsx'"
    if len(path) >= 2 and path[1] == ":":
        return "drive letter; use a path relative to the app root"
    segments = path.split("/")
    if ".." in segments:
        return "'..' segment; paths must stay inside the app"
    if "" in segments:
        return "empty segment ('//' or a trailing '/'); write each folder once"
    if "." in segments:
        return "'.' segment; write the path without './'"
    return None


def path_identity(path: str) -> str:
    # Two keys that name the same file on a case-insensitive or normalising file system
    # (macOS, Windows) would overwrite each other when the app is checked out: refuse them.
    return unicodedata.normalize("NFC", path).casefold()


def name_problems(name: str) -> list[Problem]:
    """Why `name`, an app's title, cannot be shown as it is ([]: it can)."""
    return [
        Problem(problem, field="name")
        for problem in one_line_problems(name, field="name", what="name")
    ]


def snippet_problems(files: dict[str, str]) -> list[Problem]:
    """Every reason `files` cannot be proposed as a snippet, each with its fix ([]: none)."""
    problems: list[Problem] = []
    count = len(files)
    if count == 0:
        return [Problem(f"files: empty; add at least {SNIPPET_ENTRY}", field="files")]
    if count > settings.SNIPPET_MAX_FILES:
        problems.append(
            Problem(
                f"files: {count} files, at most {settings.SNIPPET_MAX_FILES} allowed; "
                "an app this size belongs in a repository: use propose_room_repo_app",
                field="files",
            )
        )
    total = 0
    for path, text in files.items():
        total += text_bytes(text)
        problems.extend(file_problems(path, text))
    problems.extend(collisions(files))
    if total > settings.SNIPPET_MAX_TOTAL_BYTES:
        problems.append(
            Problem(
                f"files: {total} bytes in all, at most {settings.SNIPPET_MAX_TOTAL_BYTES}; "
                "an app this size belongs in a repository: use propose_room_repo_app",
                field="files",
            )
        )
    if SNIPPET_ENTRY not in files:
        problems.append(Problem(f"{SNIPPET_ENTRY} missing", field=f"files.{SNIPPET_ENTRY}"))
    return problems


def file_problems(path: str, text: str) -> list[Problem]:
    field = f"files.{visible(path)}"
    if problem := path_problem(path):
        return [Problem(f"unsafe path {path!r}: {problem}", field=field)]
    # Refused characters: what the card shows must be what runs, and no database stores NUL or
    # a lone surrogate (PostgreSQL's jsonb refuses both).
    problems = content_problems(path, text, field_name=field)
    size = text_bytes(text)
    if size > settings.SNIPPET_MAX_FILE_BYTES:
        problems.append(
            Problem(
                f"files[{path!r}]: {size} bytes, at most {settings.SNIPPET_MAX_FILE_BYTES} "
                "per file; split it, or use propose_room_repo_app for large apps",
                field=field,
            )
        )
    return problems


def collisions(files: dict[str, str]) -> list[Problem]:
    problems: list[Problem] = []
    seen: dict[str, str] = {}
    for path in files:
        if path_problem(path):
            continue
        identity = path_identity(path)
        if identity in seen:
            problems.append(
                Problem(
                    f"paths {seen[identity]!r} and {path!r} collide (they differ only in case or "
                    "Unicode normalisation); rename one",
                    field=f"files.{visible(path)}",
                )
            )
        seen.setdefault(identity, path)
    return problems


def text_bytes(text: str) -> int:
    # surrogatepass: a lone surrogate must reach validation (and its clear error), not crash.
    return len(text.encode("utf-8", "surrogatepass"))


def runnable_files(*, proposal: Proposal) -> dict[str, str]:
    """The files the Room's browser runtime gets for `proposal`: nothing else enters the frame.

    A snippet runs as proposed. A repository version runs from its src/ folder (the runtime's
    file types only, binary files left out) and must contain the entry src/App.tsx.
    """
    if proposal.kind == Proposal.Kind.SNIPPET:
        return dict(proposal.files)
    version = proposal.repository_version
    assert version is not None  # a repo proposal always names one (a database constraint)
    files = version_app_files(version)
    if SNIPPET_ENTRY not in files:
        raise Unavailable(
            f"{version} has no {SNIPPET_ENTRY}, so the Room cannot run it in a tab: the runtime "
            f"starts from {SNIPPET_ENTRY}. Propose a version that has it.",
            code="not_runnable",
        )
    total = sum(text_bytes(text) for text in files.values())
    if total > RUNNABLE_MAX_BYTES:
        raise Unavailable(
            f"{version} has {total} bytes of app code under {RUNNABLE_FOLDER}; the Room runs at "
            f"most {RUNNABLE_MAX_BYTES} bytes in the browser; trim src/ and propose that version.",
            code="not_runnable",
        )
    return files


def version_app_files(version: RepositoryVersion) -> dict[str, str]:
    """What the Room runs of a repository version: its src/ folder, the runtime's file types
    only, binary files left out."""
    return {
        path: text
        for path, text in version.files.items()
        if isinstance(text, str)
        and path.startswith(RUNNABLE_FOLDER)
        and path.endswith(RUNNABLE_SUFFIXES)
    }
