"""From package.json's ranges to a tree of exact versions, as npm lays out node_modules.

Each range is resolved as npm's pick-manifest does: the `latest` dist-tag if it satisfies the
range, else the highest satisfying version that is not deprecated, else the highest at all
(prereleases only where the range names one: node-semver's rules, via the node-semver port).
A dist-tag ("latest", "next") names its version. Anything that is not a registry version
(git, a URL, a file, an alias) is refused with the form to use.

Layout: the app's dependencies sit at node_modules/<name>; each further dependency is taken
from the nearest node_modules above the package that needs it when the version there satisfies
its range, else placed as high as it can go (the top when that name is free there, else beside
the package, nested). Peer dependencies are found the same way, any version counting (npm's
--legacy-peer-deps), and installed at the top when nobody has them; optional ones, and optional
dependencies (builds for one operating system, as a rule), are not fetched, nor are @types/
packages (no code). React and React DOM are the Room's own and never fetched: a package that
needs them gets the frame's.
"""

import re
from collections import deque
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field

import nodesemver

from .client import Registry, RegistryError

# The Room's runtime brings these: every package gets the frame's one React.
PROVIDED = {"react": "19.3.1", "react-dom": "19.3.1"}
# npm's rule for a package name (validate-npm-package-name's core: lower case, URL-safe, at
# most 214 characters), for the app's dependencies and every package's alike.
NAME = re.compile(r"^(?:@[a-z0-9][a-z0-9._~-]*/)?[a-z0-9][a-z0-9._~-]*$")
THREADS = 8


class ResolveProblem(Exception):
    """A dependency that cannot be resolved, as a sentence naming it and the fix."""


@dataclass
class Node:
    """One package version at one place in node_modules."""

    path: str  # "node_modules/a" or "node_modules/a/node_modules/b"
    name: str
    version: str
    integrity: str
    shasum: str
    tarball: str
    unpacked_size: int
    dependencies: dict[str, str]
    peers: dict[str, str]
    deprecated: str
    has_install_script: bool
    required_by: str  # who brought it in, for messages: "package.json" or "a@1.0.0"
    # Once its files are had (stored, or fetched and checked): their storage key
    # (tarballs.storage_key), the install scripts it has and its unpacked size.
    key: str = ""
    install_scripts: list[str] = field(default_factory=list)
    unpacked_bytes: int = 0

    @property
    def label(self) -> str:
        return f"{self.name}@{self.version}"


@dataclass
class Tree:
    nodes: dict[str, Node] = field(default_factory=dict)  # by path

    def visible(self, from_path: str, name: str) -> Node | None:
        """The copy of `name` that a package at `from_path` finds (its own node_modules first,
        then each one above it); from_path "" is the app itself."""
        place = from_path
        while True:
            found = self.nodes.get(
                f"{place}/node_modules/{name}" if place else f"node_modules/{name}"
            )
            if found is not None or not place:
                return found
            place = place.rpartition("/node_modules/")[0] if "/node_modules/" in place else ""


def spec_problem(spec: str) -> str | None:
    """Why `spec` is not a registry version this resolver reads, or None."""
    if not isinstance(spec, str):
        return 'must be a version range given as a string, e.g. "^1.2.0"'
    text = spec.strip()
    if text.startswith("npm:"):
        return "an alias (npm:...); name the package itself with a version range"
    if ":" in text or "/" in text or text.startswith((".", "~/")):
        return (
            "not a registry version (git, a URL, a file or a link); give a version range "
            'such as "^1.2.0"'
        )
    return None


def pick(packument: dict, spec: str, *, name: str, wanted_by: str) -> dict:
    """The version `spec` resolves to in `packument` (its manifest), as npm picks it."""
    versions: dict = packument.get("versions") or {}
    tags: dict = packument.get("dist-tags") or {}
    text = spec.strip() or "*"
    if text in tags and tags[text] in versions:
        return versions[tags[text]]
    try:
        nodesemver.make_range(text, loose=False)
    except (ValueError, TypeError):
        raise ResolveProblem(
            f"{wanted_by} asks for {name} {spec!r}, which is neither a version range nor a "
            f"dist-tag of {name} ({', '.join(sorted(tags)) or 'none'}); give a range such as "
            '"^1.2.0"'
        ) from None
    latest = tags.get("latest")
    if latest in versions and nodesemver.satisfies(latest, text, loose=False):
        return versions[latest]
    candidates = [v for v, manifest in versions.items() if not manifest.get("deprecated")]
    chosen = nodesemver.max_satisfying(candidates, text, loose=False)
    chosen = chosen or nodesemver.max_satisfying(list(versions), text, loose=False)
    if chosen is None:
        raise ResolveProblem(
            f"no version of {name} matches {spec!r}, which {wanted_by} asks for (the latest is "
            f"{latest or 'unknown'}); widen the range"
        )
    return versions[chosen]


def node_of(manifest: dict, *, name: str, path: str, required_by: str) -> Node:
    dist: dict = manifest["dist"] if isinstance(manifest.get("dist"), dict) else {}
    optional = manifest.get("optionalDependencies") or {}
    dependencies = {
        dep: str(spec)
        for dep, spec in (manifest.get("dependencies") or {}).items()
        if dep not in optional
    }
    meta = manifest.get("peerDependenciesMeta") or {}
    peers = {
        dep: str(spec)
        for dep, spec in (manifest.get("peerDependencies") or {}).items()
        if not (isinstance(meta.get(dep), dict) and meta[dep].get("optional"))
    }
    deprecated = manifest.get("deprecated")
    return Node(
        path=path,
        name=name,
        version=str(manifest.get("version", "")),
        integrity=str(dist.get("integrity") or ""),
        shasum=str(dist.get("shasum") or ""),
        tarball=str(dist.get("tarball") or ""),
        unpacked_size=int(dist.get("unpackedSize") or 0),
        dependencies=dependencies,
        peers=peers,
        deprecated=deprecated if isinstance(deprecated, str) else "",
        has_install_script=bool(manifest.get("hasInstallScript")),
        required_by=required_by,
    )


class Resolver:
    """Resolves one app's dependencies against `registry`, at most `max_packages` of them."""

    def __init__(self, registry: Registry, *, max_packages: int):
        self.registry = registry
        self.max_packages = max_packages
        self.pool = ThreadPoolExecutor(max_workers=THREADS, thread_name_prefix="npm-resolve")
        self.packuments: dict[str, Future] = {}

    def close(self) -> None:
        self.pool.shutdown(wait=True, cancel_futures=True)

    def prefetch(self, name: str) -> None:
        if name not in self.packuments:
            self.packuments[name] = self.pool.submit(self.registry.packument, name)

    def packument(self, name: str, wanted_by: str) -> dict:
        self.prefetch(name)
        try:
            return self.packuments[name].result(timeout=self.registry.deadline.left())
        except TimeoutError:
            self.registry.deadline.left()
            raise
        except RegistryError as exc:
            if exc.unavailable:
                raise
            raise ResolveProblem(
                f"{exc.message} ({wanted_by} depends on it); check the name"
            ) from None

    def resolve(self, dependencies: dict[str, str]) -> Tree:
        tree = Tree()
        queue: deque[Node] = deque()
        for name in sorted(dependencies):
            self.prefetch(name)
        for name, spec in sorted(dependencies.items()):
            manifest = pick(
                self.packument(name, "package.json"), spec, name=name, wanted_by="package.json"
            )
            queue.append(self.place(tree, manifest, name, f"node_modules/{name}", "package.json"))
        while queue:
            node = queue.popleft()
            wanted = {**node.peers, **node.dependencies}
            for name in wanted:
                if name not in PROVIDED and not is_types(name) and NAME.match(name):
                    self.prefetch(name)
            for name, spec in sorted(wanted.items()):
                if name in PROVIDED or is_types(name):
                    continue
                if len(name) > 214 or not NAME.match(name):
                    raise ResolveProblem(
                        f"{node.label} depends on {name[:80]!r}, which is not an npm package "
                        f"name; depend on another version of {node.name}"
                    )
                found = tree.visible(node.path, name)
                is_peer = name in node.peers and name not in node.dependencies
                if found is not None and (is_peer or satisfies(found.version, spec)):
                    continue
                manifest = pick(
                    self.packument(name, node.label), spec, name=name, wanted_by=node.label
                )
                top = f"node_modules/{name}"
                path = top if top not in tree.nodes else f"{node.path}/node_modules/{name}"
                queue.append(self.place(tree, manifest, name, path, node.label))
        return tree

    def place(self, tree: Tree, manifest: dict, name: str, path: str, by: str) -> Node:
        node = node_of(manifest, name=name, path=path, required_by=by)
        tree.nodes[path] = node
        if len(tree.nodes) > self.max_packages:
            raise ResolveProblem(
                f"the dependencies come to more than {self.max_packages} packages, the most an "
                f"app may bring (the last was {node.label}, for {by}); depend on fewer or "
                "smaller packages"
            )
        return node


def is_types(name: str) -> bool:
    """TypeScript's types, which the compiler strips: never fetched."""
    return name.startswith("@types/")


def satisfies(version: str, spec: str) -> bool:
    try:
        return nodesemver.satisfies(version, spec.strip() or "*", loose=False)
    except (ValueError, TypeError):
        return False
