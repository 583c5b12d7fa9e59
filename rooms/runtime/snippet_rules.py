"""The snippet rules: what a proposed snippet must be.

Pure functions of the proposed files: rooms.services applies them when a proposal arrives, and
rooms/runtime/verdicts.py applies file_problems to what the Room runs of a repository version. The
character rules (what a file, path or name may not carry) are in rooms/content/characters.py; what
the Room runs and from which entry, in rooms/runtime/rules.py. Each problem names its field:
`files.<path>`, `files`, or `name`.
"""

import unicodedata

from django.conf import settings

from osfoundry.errors import Problem
from osfoundry.text import one_line_problems, visible

from ..content.characters import content_problems, path_character_problem
from .rules import ENTRY, text_bytes

MAX_PATH_CHARS = 255


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
        return f"absolute path; use a path relative to the app root, e.g. {ENTRY!r}"
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
        return [Problem(f"files: empty; add at least {ENTRY}", field="files")]
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
    if ENTRY not in files:
        problems.append(Problem(f"{ENTRY} missing", field=f"files.{ENTRY}"))
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
