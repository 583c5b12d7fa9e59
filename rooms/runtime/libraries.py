"""The curated library set: what an app may import besides React and its own files.

static/vendor/libraries.json, written by tools/snippet-runtime (libraries.mjs says what is in
it and why), lists every module specifier that exists, the bundle file it comes from, and each
file's package, version, licence, size and hash. It is the one list both sides read: the run
check resolves imports with it (rooms/runtime/runnable.py) and the frame page embeds it for the
frame's loader (rooms/runtime/views.py), so the server never accepts an import the frame cannot
load.

The curated packages are part of the Room's runtime, like React: every app runs the version the
Room serves now, and that is the version its card lists.
"""

import hashlib
import json
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from django.conf import settings

from ..registry.licenses import is_osi

MANIFEST = Path(settings.BASE_DIR) / "static" / "vendor" / "libraries.json"
REACT_MODULES = ("react", "react-dom", "react-dom/client", "react/jsx-runtime")


@dataclass(frozen=True)
class Package:
    """A third-party package an app brings, as its card and the read tools show it: from the
    curated set, or from the npm registry (rooms/registry/lock.py's lock)."""

    name: str
    version: str
    license: str
    bytes: int  # what the frame loads of it: the files of it the app's imports reach
    origin: str = "curated"
    osi: bool = True  # its licence is OSI-approved (rooms/registry/licenses.py)
    install_scripts: tuple[str, ...] = ()  # what npm would run on install; the Room runs none
    advisories: tuple[dict, ...] = ()  # the registry's advisories for this exact version
    unpacked_bytes: int | None = None  # the whole tarball, for a registry package
    deprecated: str = ""

    @property
    def npm_url(self) -> str:
        return settings.NPM_PACKAGE_PAGE.format(name=self.name, version=self.version)

    @property
    def marks(self) -> list[str]:
        """What the owner should look at twice, in words for the card."""
        marks = []
        if self.install_scripts:
            marks.append("has install scripts (never run)")
        if not self.osi:
            marks.append("licence not OSI-approved")
        if self.advisories:
            count = len(self.advisories)
            marks.append(f"{count} security advisor{'y' if count == 1 else 'ies'}")
        if self.deprecated:
            marks.append("deprecated")
        return marks

    def as_dict(self) -> dict:
        data = {
            "name": self.name,
            "version": self.version,
            "license": self.license,
            "bytes": self.bytes,
            "origin": self.origin,
            "url": self.npm_url,
            "osi_license": self.osi,
            "install_scripts": list(self.install_scripts),
            "advisories": list(self.advisories),
        }
        if self.origin == "registry":
            data["unpacked_bytes"] = self.unpacked_bytes
            data["deprecated"] = self.deprecated or None
        return data


@cache
def manifest() -> dict:
    return json.loads(MANIFEST.read_text())


@cache
def modules() -> dict[str, str]:
    """Every specifier the curated set has, and the bundle file it is in."""
    return {spec: name for name, file in manifest()["files"].items() for spec in file["modules"]}


@cache
def fingerprint() -> str:
    """Changes whenever the curated set does: a part of the run check's cache keys."""
    return hashlib.sha256(MANIFEST.read_bytes()).hexdigest()[:16]


def file_of(spec: str) -> str | None:
    return modules().get(spec)


def tailwind_file() -> str:
    return manifest()["tailwind"]["file"]


@cache
def tailwind_pattern() -> re.Pattern:
    return re.compile(manifest()["tailwind"]["css"])


def asks_for_tailwind(css: str) -> bool:
    """Whether a CSS file the app loads asks for Tailwind (`@import "tailwindcss"`, or v3's
    `@tailwind` directives): the frame tests each loaded CSS file with the same pattern."""
    return tailwind_pattern().search(css) is not None


def with_requirements(names: Iterable[str]) -> list[str]:
    """`names` and the files they build on (react-chartjs-2 on chart.js), those first, in the
    order the frame loads them."""
    files = manifest()["files"]
    ordered: list[str] = []

    def want(name: str) -> None:
        if name not in ordered:
            for required in files[name]["requires"]:
                want(required)
            ordered.append(name)

    for name in sorted(names):
        want(name)
    return ordered


def packages_of(names: Iterable[str]) -> list[Package]:
    """The packages the bundle files `names` come from, by name, each with the bytes of its
    files among them (date-fns and its locales are one package, two files)."""
    files = manifest()["files"]
    sizes: dict[str, int] = {}
    for name in set(names):
        package = files[name]["package"]
        sizes[package] = sizes.get(package, 0) + files[name]["bytes"]
    known = manifest()["packages"]
    return [
        Package(
            name=package,
            version=known[package]["version"],
            license=known[package]["license"],
            bytes=size,
            osi=is_osi(known[package]["license"]),
        )
        for package, size in sorted(sizes.items())
    ]


def package_changes(before: list[Package], after: list[Package]) -> list[dict]:
    """What an update changes in the packages an app brings: each package added, removed or
    at another version, by name and origin (a registry package may sit at two versions)."""

    def grouped(packages: list[Package]) -> dict[tuple[str, str], tuple[str, Package]]:
        versions: dict[tuple[str, str], list[Package]] = {}
        for package in packages:
            versions.setdefault((package.name, package.origin), []).append(package)
        return {
            key: (", ".join(sorted({p.version for p in group})), group[0])
            for key, group in versions.items()
        }

    old, new = grouped(before), grouped(after)
    changes = []
    for key in sorted(old.keys() | new.keys()):
        was, now = old.get(key), new.get(key)
        if was is None or now is None:
            change = "added" if was is None else "removed"
        elif was[0] != now[0]:
            change = "changed"
        else:
            continue
        changes.append(
            {
                "name": key[0],
                "origin": key[1],
                "change": change,
                "old": was[0] if was else None,
                "new": now[0] if now else None,
                "package": (now or was)[1],  # type: ignore[index]
            }
        )
    return changes


def package_name(spec: str) -> str:
    """The npm package a bare specifier names: `lodash/debounce` -> lodash, `@a/b/c` -> @a/b."""
    parts = spec.split("/")
    return "/".join(parts[:2]) if spec.startswith("@") else parts[0]


def offered() -> list[tuple[str, str, list[str]]]:
    """(package, version, what an app imports of it) for each curated package, by what it is
    imported as: Tailwind's runtime, @tailwindcss/browser, as tailwindcss."""
    rows = [
        (name, package["version"], package["imports"])
        for name, package in manifest()["packages"].items()
    ]
    return sorted(rows, key=lambda row: row[2][0])


def package_imports() -> list[str]:
    """What an app imports each curated package as, Tailwind's runtime left out (an app asks
    for it from CSS): the propose tool's description names these."""
    tailwind = manifest()["files"][tailwind_file()]["package"]
    return [imports[0] for name, _version, imports in offered() if name != tailwind]


def available_text() -> str:
    """What an app may import, in words: the refusal of an import says it, as do the docs."""
    shown = []
    for _name, _version, imports in offered():
        head, *rest = imports
        shown.append(f"{head} ({', '.join(rest)})" if rest else head)
    return (
        "an app imports its own files (relative paths), "
        + ", ".join(REACT_MODULES)
        + " and the curated packages "
        + ", ".join(shown)
    )


def not_available(spec: str) -> str:
    """The refusal of an import of `spec`, which neither React nor the curated set has."""
    wanted = package_name(spec)
    for name, version, imports in offered():
        if package_name(imports[0]) == wanted:
            return (
                f"module {spec!r} is not available in Rooms: of {name} {version} an app may "
                f"import {', '.join(imports)}"
            )
    if settings.NPM_REGISTRY_URL:
        return (
            f"module {spec!r} is not available in Rooms; {available_text()}; name any other "
            "package in package.json's dependencies (this Room resolves them from its npm "
            "registry), or copy the code you need into the app"
        )
    return (
        f"module {spec!r} is not available in Rooms; {available_text()}; copy any other code "
        "you need into the app"
    )


def frame_libraries(static_url: Callable[[str], str]) -> dict:
    """What the frame's loader reads (static/rooms/frame-runtime.js, readLibraries): every
    specifier's file, each file's script URL and the files it needs first, and Tailwind's."""
    files = manifest()["files"]
    return {
        "modules": modules(),
        "files": {
            name: {"src": static_url("vendor/" + file["path"]), "requires": file["requires"]}
            for name, file in files.items()
        },
        "tailwind": manifest()["tailwind"],
    }


def script_paths() -> list[str]:
    """Every library file's static path (under vendor/): the frame's script-src lists each."""
    return ["vendor/" + file["path"] for file in manifest()["files"].values()]
