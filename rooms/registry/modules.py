"""Where each import of an app and of its packages leads, and the module table the frame runs.

Resolution follows Node's algorithm as bundlers apply it for a browser, once, on the server:
a bare name is looked up in the nearest node_modules of the resolved tree (rooms/registry/
resolve.py), a package's `exports` are read with the conditions browser, require and default
(then import and module, for a package that offers nothing else), else its `browser` field
when it is a string, then `main`, then index.js; files are tried as written, then with .js,
.mjs, .cjs and .json, then as a folder (its own package.json's browser or main, its index);
a package's `browser` object maps its files and the names it requires to others or to an
empty module (false). CommonJS is preferred where a package offers both: it runs as it is.

The frame gets the result as data: for each module its code and, for each specifier its code
requires, the module that specifier is (or null: Node's own modules, and anything not
installed, which throw only if the code really requires them). Only modules an app's imports
reach are in the table. Nothing here runs package code: the frame does, in its sandbox.
"""

import hashlib
import json
import posixpath
from collections.abc import Callable
from dataclasses import dataclass, field

from django.core.cache import cache

from ..runtime import jsengine, libraries
from .resolve import PROVIDED, Node, Tree

RUNTIME = "runtime:"  # a module of the frame's own React: "runtime:react/jsx-runtime"
EMPTY = "empty:"  # a file or name a browser field maps to false
EXTENSIONS = (".js", ".mjs", ".cjs", ".json")
LOADED_TYPES = (".js", ".mjs", ".cjs", ".json", ".css")
CONDITIONS = (("browser", "require", "default"), ("browser", "import", "module", "default"))
PREPARED_SECONDS = 7 * 24 * 3600
COMPILE_BASE_SECONDS = 2.0
COMPILE_SECONDS_PER_MB = 5.0
NODE_BUILTINS = frozenset(
    "assert async_hooks buffer child_process cluster console constants crypto dgram dns domain "
    "events fs http http2 https inspector module net os path perf_hooks process punycode "
    "querystring readline repl stream string_decoder sys timers tls trace_events tty url util "
    "v8 vm wasi worker_threads zlib".split()
)


class PackageCodeProblem(Exception):
    """A package file an app's imports reach that the frame could not run."""


@dataclass
class Package:
    """A node of the tree with the files the Room keeps of it (tarballs.Unpacked.files), read
    only when resolution first looks into it (`load`): most packages of a tree are never
    reached by an app's imports (axios's Node adapter brings a dozen)."""

    node: Node
    manifest: dict
    load: Callable[[], dict[str, str]]
    browser_map: dict[str, str | bool] = field(default_factory=dict)
    _files: dict[str, str] | None = None

    @property
    def files(self) -> dict[str, str]:
        if self._files is None:
            self._files = self.load()
        return self._files

    def __post_init__(self) -> None:
        browser = self.manifest.get("browser")
        if isinstance(browser, dict):
            for key, value in browser.items():
                if not isinstance(value, str | bool) or value is True:
                    continue
                if key.startswith("."):
                    path = inside(key)
                    if path is not None:
                        self.browser_map[path] = value
                        self.browser_map.setdefault(strip_extension(path), value)
                else:
                    self.browser_map[key] = value


@dataclass(frozen=True)
class Target:
    """What a specifier is: a package module (`module` is its id), the frame's React
    (`runtime`), an empty module, or nothing (`missing` says why)."""

    module: str = ""
    runtime: str = ""
    empty: bool = False
    missing: str = ""
    package: str = ""  # a module's package (its node path) and file in it
    file: str = ""

    @property
    def dep(self) -> str | None:
        """As the module table writes it."""
        if self.module:
            return self.module
        if self.runtime:
            return RUNTIME + self.runtime
        return EMPTY if self.empty else None


def inside(path: str) -> str | None:
    """A path relative to a package's root, normalised ("./lib/x.js" -> "lib/x.js", "." -> "");
    None if it leaves the package."""
    if path.startswith("/"):
        return None
    normal = posixpath.normpath(path)
    if normal == ".":
        return ""
    if normal == ".." or normal.startswith("../"):
        return None
    return normal


def strip_extension(path: str) -> str:
    for extension in EXTENSIONS:
        if path.endswith(extension):
            return path[: -len(extension)]
    return path


def split_name(spec: str) -> tuple[str, str]:
    """("@scope/name" or "name", the subpath after it or "")."""
    name = libraries.package_name(spec)
    return name, spec[len(name) + 1 :]


class Layout:
    """The resolved tree with each package's files: where every specifier leads."""

    def __init__(self, tree: Tree, packages: dict[str, Package]):
        self.tree = tree
        self.packages = packages  # by node path

    # -- from the app ---------------------------------------------------------------------------

    def owns(self, spec: str) -> bool:
        """Whether `spec` names a package the app's package.json took from the registry."""
        return f"node_modules/{libraries.package_name(spec)}" in self.packages

    def problem(self, spec: str) -> str | None:
        target = self.resolve_app(spec)
        if target.module:
            return None
        why = target.missing or f"{spec!r} maps to no module in a browser"
        return f"cannot import {spec!r}: {why}; import a module the package exports"

    def resolve_app(self, spec: str) -> Target:
        name, subpath = split_name(spec)
        package = self.packages[f"node_modules/{name}"]
        return self.in_package(package, subpath, spec)

    # -- from a package file ----------------------------------------------------------------------

    def resolve(self, package: Package, file: str, spec: str) -> Target:
        if spec.startswith((".", "/")):
            base = inside(posixpath.join(posixpath.dirname(file), spec))
            if base is None:
                return Target(missing=f"{spec!r} points outside {package.node.label}")
            return self.file_in(package, base, spec)
        mapped = package.browser_map.get(spec)
        if mapped is False:
            return Target(empty=True)
        if isinstance(mapped, str):
            if mapped.startswith("."):
                base = inside(mapped)
                return self.file_in(package, base or "", spec)
            spec = mapped
        return self.bare(package.node.path, spec)

    def bare(self, from_path: str, spec: str) -> Target:
        if spec.startswith("node:"):
            return Target(missing=f"{spec!r} is a Node.js module, which no browser has")
        name, subpath = split_name(spec)
        if name in PROVIDED:
            if spec in libraries.REACT_MODULES:
                return Target(runtime=spec)
            return Target(missing=f"{spec!r} is not part of the Room's React {PROVIDED[name]}")
        node = self.tree.visible(from_path, name)
        if node is None or node.path not in self.packages:
            if name in NODE_BUILTINS:
                return Target(missing=f"{spec!r} is a Node.js module, which no browser has")
            return Target(missing=f"{name} is not installed (no dependency names it)")
        return self.in_package(self.packages[node.path], subpath, spec)

    # -- inside a package -----------------------------------------------------------------------

    def in_package(self, package: Package, subpath: str, spec: str) -> Target:
        exports = package.manifest.get("exports")
        if exports is not None:
            for conditions in CONDITIONS:
                target = exports_target(exports, "./" + subpath if subpath else ".", conditions)
                if target is not None:
                    path = inside(target)
                    if path is None or not target.startswith("./"):
                        break
                    return self.exact(package, path, spec)
            return Target(
                missing=f"{package.node.label} exports no {('./' + subpath) if subpath else '.'}"
                " for a browser"
            )
        if subpath:
            return self.file_in(package, inside(subpath) or "", spec)
        return self.main_of(package, spec)

    def main_of(self, package: Package, spec: str) -> Target:
        browser = package.manifest.get("browser")
        main = browser if isinstance(browser, str) else package.manifest.get("main")
        main = inside(main) if isinstance(main, str) and main.strip() else None
        if main:
            found = self.file_in(package, main, spec)
            if not found.missing:
                return found
        return self.file_in(package, "index", spec)

    def exact(self, package: Package, path: str, spec: str) -> Target:
        if path in package.files:
            return self.mapped(package, path)
        return self.file_in(package, path, spec)

    def file_in(self, package: Package, base: str, spec: str) -> Target:
        if base == "":  # the package's own folder: its main file
            return self.main_of(package, spec)
        mapped = package.browser_map.get(base)
        if mapped is False:
            return Target(empty=True)
        if isinstance(mapped, str) and mapped.startswith("."):
            base = inside(mapped) or base
        path = self.as_file(package, base) or self.as_folder(package, base)
        if path is None:
            return Target(missing=f"{spec!r} is no file of {package.node.label} the Room loads")
        return self.mapped(package, path)

    def mapped(self, package: Package, path: str) -> Target:
        value = package.browser_map.get(path)
        if value is False:
            return Target(empty=True)
        if isinstance(value, str) and value.startswith("."):
            other = inside(value)
            if other is not None and (found := self.as_file(package, other)):
                path = found
        if not path.endswith(LOADED_TYPES):
            return Target(missing=f"{path} of {package.node.label} is no file type the Room loads")
        return Target(module=f"{package.node.path}/{path}", package=package.node.path, file=path)

    def as_file(self, package: Package, base: str) -> str | None:
        if base and base in package.files and not base.endswith("/package.json"):
            return base
        for extension in EXTENSIONS:
            if base + extension in package.files:
                return base + extension
        return None

    def as_folder(self, package: Package, base: str) -> str | None:
        prefix = f"{base}/" if base else ""
        nested = package.files.get(prefix + "package.json") if base else None
        if nested:
            try:
                manifest = json.loads(nested)
            except ValueError:
                manifest = None
            if not isinstance(manifest, dict):  # "[1]", "5": names no main
                manifest = {}
            browser = manifest.get("browser")
            main = browser if isinstance(browser, str) else manifest.get("main")
            if isinstance(main, str) and (path := inside(posixpath.join(base, main))):
                if found := self.as_file(package, path) or self.as_file(package, path + "/index"):
                    return found
        return self.as_file(package, prefix + "index")


def exports_target(exports, subpath: str, conditions: tuple[str, ...]) -> str | None:
    """The file `subpath` ("." or "./x") maps to in an `exports` field, under `conditions`."""
    if isinstance(exports, str | list) or (
        isinstance(exports, dict) and not any(key.startswith(".") for key in exports)
    ):
        exports = {".": exports}
    if not isinstance(exports, dict):
        return None
    if subpath in exports and "*" not in subpath:
        return conditional(exports[subpath], "", conditions)
    best: tuple[int, str, str] | None = None
    for key in exports:
        if "*" in key:
            prefix, _star, suffix = key.partition("*")
            if (
                subpath.startswith(prefix)
                and subpath.endswith(suffix)
                and len(subpath) >= len(prefix) + len(suffix)
                and (best is None or len(prefix) > best[0])
            ):
                best = (len(prefix), key, subpath[len(prefix) : len(subpath) - len(suffix)])
        elif key.endswith("/") and subpath.startswith(key):
            if best is None or len(key) > best[0]:
                best = (len(key), key, subpath[len(key) :] + "\0")
    if best is None:
        return None
    _length, key, star = best
    if star.endswith("\0"):  # a folder mapping ("./lib/": "./lib/"), deprecated but still met
        target = conditional(exports[key], "", conditions)
        return target + star[:-1] if isinstance(target, str) else None
    return conditional(exports[key], star, conditions)


def conditional(target, star: str, conditions: tuple[str, ...]) -> str | None:
    if isinstance(target, str):
        return target.replace("*", star)
    if isinstance(target, list):
        for item in target:
            if (found := conditional(item, star, conditions)) is not None:
                return found
        return None
    if isinstance(target, dict):
        for key, value in target.items():
            if key in conditions:
                found = conditional(value, star, conditions)
                if found is not None:
                    return found
        return None
    return None


# ---------------------------------------------------------------------------------------------
# The module table


@dataclass
class Table:
    imports: dict[str, str]  # each app import of a registry package -> its module id
    modules: dict[str, dict]  # id -> {name, type, code, deps}
    loaded_bytes: dict[str, int]  # node path -> bytes of its files in the table

    def as_json(self) -> bytes:
        data = {"format": 1, "imports": self.imports, "modules": self.modules}
        return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def build_table(layout: Layout, app_imports: list[str]) -> Table:
    """The modules `app_imports` reach, each prepared for the frame. Raises PackageCodeProblem
    naming a reached file the frame could not run."""
    imports: dict[str, str] = {}
    wanted: list[Target] = []
    for spec in sorted(set(app_imports)):
        target = layout.resolve_app(spec)
        if target.module:  # the run check refused any that is not
            imports[spec] = target.module
            wanted.append(target)
    modules: dict[str, dict] = {}
    loaded: dict[str, int] = {}
    while wanted:
        batch = list({t.module: t for t in wanted if t.module not in modules}.values())
        wanted = []
        facts = prepare(layout, batch)
        for target in batch:
            module = target.module
            package, file = layout.packages[target.package], target.file
            source = package.files[file]
            entry: dict = {"name": f"{package.node.label}/{file}", "deps": {}}
            loaded[package.node.path] = loaded.get(package.node.path, 0) + len(source.encode())
            if file.endswith(".css"):
                entry |= {"type": "css", "code": source}
            elif file.endswith(".json"):
                entry |= {"type": "json", "code": source}
            else:
                found = facts[module]
                if "syntax" in found:
                    raise PackageCodeProblem(
                        f"{package.node.label}: {file} cannot run in the Room ({found['syntax']})"
                    )
                entry |= {"type": "js", "code": found.get("code", source)}
                for spec in found["requires"]:
                    dep = layout.resolve(package, file, spec)
                    entry["deps"][spec] = dep.dep
                    if dep.module and dep.module not in modules:
                        wanted.append(dep)
            modules[module] = entry
    return Table(imports=imports, modules=modules, loaded_bytes=loaded)


def prepare(layout: Layout, targets: list[Target]) -> dict[str, dict]:
    """modules.js's facts for the code files among `targets`, from the cache where they were
    prepared before (by the compiler's fingerprint and the file's content)."""
    sources: dict[str, str] = {}
    for target in targets:
        if target.file.endswith((".js", ".mjs", ".cjs")):
            sources[target.module] = layout.packages[target.package].files[target.file]
    fingerprint = jsengine.fingerprint()
    keys = {
        module: "rooms:npm-module:"
        + hashlib.sha256(f"{fingerprint}\0{source}".encode("utf-8", "surrogatepass")).hexdigest()
        for module, source in sources.items()
    }
    cached = cache.get_many(list(keys.values()))
    facts = {module: cached[key] for module, key in keys.items() if key in cached}
    missing = {module: sources[module] for module in sources if module not in facts}
    if missing:
        size = sum(len(source) for source in missing.values())
        timeout = COMPILE_BASE_SECONDS + COMPILE_SECONDS_PER_MB * size / 1_000_000
        try:
            fresh = jsengine.engine.prepare_modules(missing, timeout=timeout)
        except jsengine.EngineTimeout as exc:
            raise PackageCodeProblem(
                f"{exc.path or 'a package file'} took more than {timeout:.0f} s to compile"
            ) from None
        except jsengine.EngineOutOfMemory:
            raise PackageCodeProblem(
                "the packages' code is too large for the Room's compiler"
            ) from None
        for found in fresh.values():
            if found.get("esm") is False:
                found.pop("code", None)  # runs as it is: the source is the code
        cache.set_many({keys[module]: found for module, found in fresh.items()}, PREPARED_SECONDS)
        facts |= fresh
    return facts
