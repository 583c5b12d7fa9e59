"""What the Room can run: the rules of the browser runtime, checked when an app is proposed.

The Room page's frame (static/rooms/frame-runtime.js) compiles every code file with Sucrase,
then loads modules from the entry, src/App.tsx (rooms/runtime/rules.py: the entry and the file
types): each `require` (an import, after Sucrase) of a relative path resolves to one of the app's
files, with the same extension and index-file search as here, and only the React modules below and
the curated libraries exist besides (the curated set is rooms/runtime/libraries.py, the manifest
the frame's loader reads too). It renders the entry's default export. These rules say, before
anyone clicks, whether that will work: the facts come from the frame's own compiler run on the
server (rooms/runtime/jsengine.py, rooms/runtime/js/runnable.js) and the rules are applied here,
once (the verdicts are stored and read through rooms/runtime/verdicts.py).
tests/rooms/runtime/test_runnable_parity.py runs one corpus of apps through this check and through
the frame in Chromium: they must agree on every app.

What is checked is what the frame does: every code file compiles (the frame compiles them all
before it runs any); the files the entry loads, directly or through others, are valid
JavaScript once compiled, their imports resolve, their JSON parses. A file nothing loads never
runs, so its imports are not held against the app; it is named in a warning instead.
"""

import json
import re
from collections import deque
from dataclasses import dataclass, field
from typing import Protocol

from osfoundry.errors import Problem

from . import libraries
from .jsengine import EngineOutOfMemory, EngineTimeout, engine
from .rules import CODE_SUFFIXES, ENTRY, LOADABLE_SUFFIXES, MANIFEST, problem_at

BUILTIN_MODULES = libraries.REACT_MODULES
# The order the frame tries when an import names no file exactly: `./x` is x.tsx, x.ts, ...
RESOLVE_EXTENSIONS = (".tsx", ".ts", ".jsx", ".js", ".json", ".css")
# A deadline for the whole check: a base, plus time in proportion to the code. Sucrase compiles
# real apps at about 1 MB/s on a loaded machine, so this leaves five times that; code that
# takes longer (long `?.` chains are quadratic) would stall the owner's browser too.
CHECK_BASE_SECONDS = 0.5
CHECK_SECONDS_PER_MB = 5.0
# A check past its deadline runs once more with this many times the time before it is refused.
SLOW_RETRY_FACTOR = 4

NO_DEFAULT_EXPORT = (
    f"no default export; the Room renders {ENTRY}'s default export: add "
    "`export default function App() { ... }`"
)
TOO_SLOW = (
    "took too long to compile (the check stopped after {seconds:.1f} s); Sucrase, the Room's "
    "compiler, slows down sharply on very long files, e.g. long chains of `?.`: split the file "
    "or simplify that code"
)
TOO_BIG = (
    "too large to compile: the Room's compiler ran out of memory on this app; split the large "
    "files or propose the app as a repository version"
)


class PackageIndex(Protocol):
    """The npm packages an app's package.json took from a registry (rooms/registry/): which
    bare imports are theirs, and why one of them cannot be imported (None: it can)."""

    def owns(self, spec: str) -> bool: ...

    def problem(self, spec: str) -> str | None: ...


@dataclass(frozen=True)
class RunCheck:
    """The verdict on one app: what keeps it from running, and what of it never runs."""

    problems: list[Problem] = field(default_factory=list)
    loaded: list[str] = field(default_factory=list)  # the files the entry loads, itself included
    unused: list[str] = field(default_factory=list)  # files nothing loads
    # The curated library files the frame loads for it, in its order (rooms/runtime/libraries.py).
    libraries: list[str] = field(default_factory=list)
    # The imports of registry packages (package.json's), each resolved by the PackageIndex.
    packages: list[str] = field(default_factory=list)
    is_transient: bool = False  # stopped by a deadline or the memory limit: may pass later

    @property
    def runs(self) -> bool:
        return not self.problems

    def as_dict(self) -> dict:
        """What rooms/runtime/verdicts.py stores (a transient check is never stored)."""
        return {
            "problems": [{"text": str(p), "field": p.field} for p in self.problems],
            "loaded": self.loaded,
            "unused": self.unused,
            "libraries": self.libraries,
            "packages": self.packages,
        }

    @classmethod
    def from_dict(cls, data: dict) -> "RunCheck":
        problems = [Problem(p["text"], field=p["field"]) for p in data["problems"]]
        return cls(
            problems=problems,
            loaded=data["loaded"],
            unused=data["unused"],
            libraries=data["libraries"],
            packages=data.get("packages", []),
        )


def check_app(files: dict[str, str], packages: PackageIndex | None = None) -> RunCheck:
    """Whether the Room's frame can run `files` (a snippet, or a repository version's src/),
    with the registry packages of `packages`, if any."""
    code_bytes = sum(len(text) for path, text in files.items() if path.endswith(CODE_SUFFIXES))
    timeout = CHECK_BASE_SECONDS + CHECK_SECONDS_PER_MB * code_bytes / 1_000_000
    try:
        try:
            facts = engine.check(files, timeout=timeout)
        except EngineTimeout:
            # A busy machine can stretch an ordinary check past its deadline; code that is
            # really too slow (quadratic in Sucrase) is still far past a longer one.
            timeout *= SLOW_RETRY_FACTOR
            facts = engine.check(files, timeout=timeout)
    except EngineTimeout as exc:
        path = exc.path or ENTRY
        problem = problem_at(path, 1, 1, TOO_SLOW.format(seconds=timeout))
        return RunCheck(problems=[problem], is_transient=True)
    except EngineOutOfMemory:
        return RunCheck(problems=[problem_at(ENTRY, 1, 1, TOO_BIG)], is_transient=True)
    problems = [compile_problem(path, facts[path]["compile"]) for path in compile_failures(facts)]
    if ENTRY not in files:  # the callers' own rules say so, each in its terms
        return RunCheck(problems=problems, unused=sorted(files))
    loaded, load_problems, used, imported = load_graph(files, facts, packages)
    problems += load_problems
    entry = facts.get(ENTRY, {})
    if "requires" in entry and not entry["default_export"]:
        problems.append(problem_at(ENTRY, 1, 1, NO_DEFAULT_EXPORT))
    # package.json is the server's to read (its dependencies), never the frame's to load.
    unused = sorted(set(files) - set(loaded) - {MANIFEST})
    return RunCheck(
        problems=problems,
        loaded=loaded,
        unused=unused,
        libraries=libraries.with_requirements(used),
        packages=sorted(imported),
    )


def compile_failures(facts: dict) -> list[str]:
    return sorted(path for path, found in facts.items() if "compile" in found)


def compile_problem(path: str, error: dict) -> Problem:
    fix = "fix the syntax"
    if path.endswith(".ts"):
        fix += " (a .ts file takes no JSX: name it .tsx to use JSX)"
    return problem_at(path, error["line"], error["column"], f"{error['message']}; {fix}")


def load_graph(
    files: dict[str, str], facts: dict, packages: PackageIndex | None
) -> tuple[list[str], list[Problem], set[str], set[str]]:
    """The files the frame loads from the entry, in order, what fails on the way, the curated
    library files they import (Tailwind's for a CSS file that asks for it) and their imports of
    registry packages. A registry package comes first: package.json named it."""
    loaded = [ENTRY]
    problems: list[Problem] = []
    used: set[str] = set()
    imported: set[str] = set()
    queue = deque([ENTRY])
    while queue:
        path = queue.popleft()
        if path.endswith(".css") and libraries.asks_for_tailwind(files[path]):
            used.add(libraries.tailwind_file())
        found = facts.get(path, {})
        if "syntax" in found:
            problems.append(syntax_problem(path, files[path], found["syntax"], found["code"]))
        if "json" in found and found["json"] is not None:
            problems.append(json_problem(path, files[path], found["json"]))
        for spec, line, column in found.get("requires", ()):
            if packages is not None and packages.owns(spec):
                if why := packages.problem(spec):
                    problems.append(problem_at(path, line, column, why))
                else:
                    imported.add(spec)
                continue
            if library := libraries.file_of(spec):
                used.add(library)
                continue
            target, why = resolve_import(files, path, spec)
            if why:
                problems.append(problem_at(path, line, column, why))
            elif target and target not in loaded:
                loaded.append(target)
                queue.append(target)
    return loaded, problems, used, imported


def resolve_import(files: dict[str, str], from_path: str, spec: str) -> tuple[str | None, str]:
    """(the file `spec` loads from `from_path`, or None for a React module or a curated
    library; why it fails)."""
    if spec in BUILTIN_MODULES or libraries.file_of(spec):
        return None, ""
    if not spec.startswith((".", "/")):
        return None, libraries.not_available(spec)
    base = join_path(from_path, spec)
    if base is None:
        return None, f"cannot import {spec!r}: it points above the app's root folder"
    target = resolve_file(files, base)
    if target is None:
        return None, missing_file(files, spec, base)
    if not target.endswith(LOADABLE_SUFFIXES):
        return None, (
            f"cannot import {spec!r}: {target} is not a file type the Room loads (it loads "
            f"{', '.join(LOADABLE_SUFFIXES[:-1])} and {LOADABLE_SUFFIXES[-1]}); put the content "
            "in a module instead, "
            "e.g. an SVG as JSX or an image as a data: URL"
        )
    return target, ""


def join_path(from_path: str, spec: str) -> str | None:
    """`spec` joined onto the importing file's folder ("src/a/b.tsx" + "../c" -> "src/c"), as
    the frame's joinPath does: a leading "/" starts at the app root; None above the root."""
    parts = [] if spec.startswith("/") else from_path.split("/")[:-1]
    for segment in spec.split("/"):
        if segment in ("", "."):
            continue
        if segment == "..":
            if not parts:
                return None
            parts.pop()
        else:
            parts.append(segment)
    return "/".join(parts)


def resolve_file(files: dict[str, str], base: str) -> str | None:
    """The frame's resolveFile: the exact file, then each extension, then an index file."""
    if base and base in files:
        return base
    for extension in RESOLVE_EXTENSIONS:
        if base + extension in files:
            return base + extension
    folder = base + "/index" if base else "index"
    for extension in RESOLVE_EXTENSIONS:
        if folder + extension in files:
            return folder + extension
    return None


def missing_file(files: dict[str, str], spec: str, base: str) -> str:
    message = (
        f"cannot find {spec!r}: no {base or '(root)'}, {base}.tsx/.ts/.jsx/.js/.json/.css or "
        f"{base}/index.* among the files; add it or fix the path"
    )
    by_lower = {path.lower(): path for path in files}
    near = resolve_file(dict.fromkeys(by_lower, ""), base.lower())
    if near is not None:
        message += f" (paths are case-sensitive: did you mean {by_lower[near]}?)"
    return message


def syntax_problem(path: str, source: str, message: str, code: str) -> Problem:
    line, column = syntax_position(source, code)
    fix = "the Room runs each file as a function, not as an ES module: " + (
        "move the await into an async function (e.g. inside useEffect)"
        if message.startswith("await is only valid")
        else "remove what browsers do not run there (top-level await, decorators, a #! line, "
        "namespaced JSX such as <svg:rect>)"
    )
    return problem_at(path, line, column, f"{message}; {fix}")


REPORT_LINE = re.compile(r"^undefined:(\d+): ")
WRAPPER_PREFIX = len("(function (require, module, exports) {")


def syntax_position(source: str, code: str) -> tuple[int, int]:
    """Where V8 stops on the compiled `code`, as a source line and column. Sucrase keeps lines
    where they were, so the line is exact; the column is the same text found on that line."""
    report = engine.syntax_report(code, timeout=CHECK_BASE_SECONDS + len(code) / 1_000_000)
    lines = (report or "").split("\n")
    match = REPORT_LINE.match(lines[0])
    if not match or len(lines) < 3 or "^" not in lines[2]:
        return 1, 1
    line = int(match.group(1)) - 1  # the probe's first line is its `throw 0;`
    start = lines[2].index("^")
    width = len(lines[2].rstrip()) - start
    if line == 1:
        start -= WRAPPER_PREFIX
    out_line = lines[1][WRAPPER_PREFIX:] if line == 1 else lines[1]
    word = out_line[start : start + width]
    source_lines = source.split("\n")
    text = source_lines[line - 1] if line <= len(source_lines) else ""
    at = text.find(word) if word else -1
    return line, (at + 1 if at >= 0 else 1)


def json_problem(path: str, text: str, error: dict) -> Problem:
    line, column = error["line"], error["column"]
    if line is None:
        line, column = json_position(text)
    fix = "fix it (JSON takes no comments, trailing commas or single quotes)"
    return problem_at(path, line, column, f"invalid JSON: {error['message']}; {fix}")


def json_position(text: str) -> tuple[int, int]:
    # V8 gives no position for some errors; Python's parser finds the same spot for them.
    try:
        json.loads(text, parse_constant=lambda name: None)
    except json.JSONDecodeError as exc:
        return exc.lineno, exc.colno
    return 1, 1
