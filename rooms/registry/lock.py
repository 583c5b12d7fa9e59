"""An app's npm packages, resolved once when it is proposed: the lock the owner approves.

resolve_packages(dependencies) does the I/O, never inside a transaction and within one deadline
for the whole of it (NPM_RESOLVE_SECONDS): the tree of exact versions (resolve.py), each
tarball not stored yet fetched and checked against its integrity hash before anything is kept
(tarballs.py), the registry's advisories for those versions. It refuses, storing nothing, past
NPM_MAX_PACKAGES packages or NPM_MAX_UNPACKED_BYTES unpacked; a registry that is down or slow is
TryLater (503, retry), a package that cannot be had is Invalid naming it and the fix.

After the run check, lock_of() makes the lock from the packages and the module table the
app's imports reach (modules.py): each package's name, exact version, integrity, licence, size,
install scripts and advisories, and the sha256 of the table. services stores both with the
proposal; content_digest() is what the content hash binds.
"""

import gzip
import hashlib
import json
import threading
from collections import OrderedDict
from concurrent.futures import Future
from dataclasses import dataclass, field
from functools import partial

from django.conf import settings

from osfoundry.errors import Invalid, TryLater

from ..packagemodels import NpmPackage, PackageBundle
from ..runtime import libraries
from . import licenses, modules, tarballs
from .client import Deadline, Registry, RegistryError
from .dependencies import FIELD
from .resolve import Node, ResolveProblem, Resolver, Tree, satisfies

RETRY_AFTER_S = 30
ADVISORY_SECONDS = 5.0


@dataclass
class Resolved:
    """The resolved tree with every package's files, and what is new to store."""

    dependencies: dict[str, str]
    layout: modules.Layout
    new: dict[str, tuple[Node, tarballs.Unpacked]] = field(default_factory=dict)  # by key
    advisories: dict | None = None  # name -> [advisory], None: the registry reports none


def retry_later(what: str) -> TryLater:
    return TryLater(
        f"The npm registry could not be used: {what}. Nothing was stored; propose again in "
        f"{RETRY_AFTER_S} s (the same idempotency_key is fine).",
        retry_after=RETRY_AFTER_S,
        code="registry_unavailable",
        field=FIELD,
    )


def refused(message: str, *, code: str = "invalid_package") -> Invalid:
    return Invalid(f"package.json: {message}", code=code, field=FIELD)


def resolve_packages(dependencies: dict[str, str]) -> Resolved:
    deadline = Deadline(settings.NPM_RESOLVE_SECONDS)
    try:
        with Registry(deadline) as registry:
            resolver = Resolver(registry, max_packages=settings.NPM_MAX_PACKAGES)
            try:
                tree = resolver.resolve(dependencies)
                declared = sum(node.unpacked_size for node in tree.nodes.values())
                if declared > settings.NPM_MAX_UNPACKED_BYTES:
                    raise too_large(declared, tree)
                packages, new = fetch(registry, resolver, tree)
                advisories = registry.advisories(
                    versions_of(tree), seconds=min(ADVISORY_SECONDS, deadline.left())
                )
            finally:
                resolver.close()
    except ResolveProblem as exc:
        raise refused(str(exc)) from None
    except RegistryError as exc:
        if exc.unavailable:
            raise retry_later(exc.message) from None
        raise refused(exc.message) from None
    layout = modules.Layout(tree, packages)
    return Resolved(dependencies=dependencies, layout=layout, new=new, advisories=advisories)


def too_large(size: int, tree: Tree) -> Invalid:
    biggest = sorted(tree.nodes.values(), key=lambda node: -node.unpacked_size)[:3]
    named = ", ".join(f"{node.label} {node.unpacked_size:,} B" for node in biggest)
    return refused(
        f"the packages unpack to {size:,} bytes, more than the {settings.NPM_MAX_UNPACKED_BYTES:,} "
        f"an app may bring (the largest: {named}); depend on smaller packages",
        code="packages_too_large",
    )


def versions_of(tree: Tree) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for node in tree.nodes.values():
        found.setdefault(node.name, [])
        if node.version not in found[node.name]:
            found[node.name].append(node.version)
    return found


def fetch(
    registry: Registry, resolver: Resolver, tree: Tree
) -> tuple[dict[str, modules.Package], dict[str, tuple[Node, tarballs.Unpacked]]]:
    """Every package's files: from the store when this version was fetched before (by the
    registry's integrity), else from its tarball, checked, then unpacked in memory."""
    nodes = list(tree.nodes.values())
    stored = {
        (row.name, row.version, row.integrity): row
        for row in NpmPackage.objects.filter(
            name__in={node.name for node in nodes},
            integrity__in={seen(node) for node in nodes},
        ).defer("files")
    }
    packages: dict[str, modules.Package] = {}
    new: dict[str, tuple[Node, tarballs.Unpacked]] = {}
    downloads: dict[str, tuple[Node, Future]] = {}
    fetched: dict[tuple[str, str], Future] = {}
    for node in nodes:
        row = stored.get((node.name, node.version, seen(node)))
        if row is not None:
            node.key = row.key
            packages[node.path] = modules.Package(
                node=node, manifest=row.manifest, load=partial(stored_files, row.key)
            )
            node.install_scripts = list(row.install_scripts)
            node.unpacked_bytes = row.unpacked_bytes
            continue
        if (node.name, node.version) not in fetched:  # one version at two places: once
            fetched[(node.name, node.version)] = resolver.pool.submit(download, registry, node)
        downloads[node.path] = (node, fetched[(node.name, node.version)])
    total = sum(node.unpacked_bytes for node in nodes if node.path in packages)
    for path, (node, future) in downloads.items():
        try:
            key, unpacked = future.result(timeout=registry.deadline.left())
        except TimeoutError:
            registry.deadline.left()
            raise
        node.key = key
        node.install_scripts = unpacked.install_scripts
        node.unpacked_bytes = unpacked.unpacked_bytes
        total += unpacked.unpacked_bytes
        if total > settings.NPM_MAX_UNPACKED_BYTES:
            raise too_large(total, tree)
        packages[path] = modules.Package(
            node=node, manifest=unpacked.manifest, load=partial(dict, unpacked.files)
        )
        new[key] = (node, unpacked)
    return packages, new


class _Unpacked:
    """The files of stored packages this process read lately, by storage key (immutable
    content), up to BUDGET bytes: another app of the same packages reads none of them again."""

    BUDGET = 96 * 1024 * 1024

    def __init__(self):
        self.lock = threading.Lock()
        self.files: OrderedDict[str, tuple[dict[str, str], int]] = OrderedDict()
        self.size = 0

    def get(self, key: str) -> dict[str, str] | None:
        with self.lock:
            found = self.files.get(key)
            if found is not None:
                self.files.move_to_end(key)
            return found[0] if found else None

    def put(self, key: str, files: dict[str, str], size: int) -> None:
        with self.lock:
            if key in self.files or size > self.BUDGET:
                return
            self.files[key] = (files, size)
            self.size += size
            while self.size > self.BUDGET:
                _key, (_files, dropped) = self.files.popitem(last=False)
                self.size -= dropped


unpacked_files = _Unpacked()


def stored_files(key: str) -> dict[str, str]:
    if (files := unpacked_files.get(key)) is not None:
        return files
    data = NpmPackage.objects.filter(pk=key).values_list("files", flat=True).get()
    text = gzip.decompress(data)
    files = json.loads(text)
    unpacked_files.put(key, files, len(text))
    return files


def seen(node: Node) -> str:
    """What the registry said a version's tarball hashes to: the store's second key."""
    return node.integrity or f"sha1:{node.shasum}"


def download(registry: Registry, node: Node) -> tuple[str, tarballs.Unpacked]:
    if not node.tarball:
        raise RegistryError(f"the registry gives no tarball for {node.label}", unavailable=False)
    data = registry.tarball(
        node.tarball, max_bytes=settings.NPM_MAX_UNPACKED_BYTES, what=node.label
    )
    try:
        tarballs.verify(data, integrity=node.integrity, shasum=node.shasum)
        unpacked = tarballs.unpack(data, max_bytes=settings.NPM_MAX_UNPACKED_BYTES)
    except tarballs.TarballProblem as exc:
        raise RegistryError(
            f"{node.label} (for {node.required_by}) cannot be used: {exc}; nothing was stored. "
            f"Depend on another version of {node.name}",
            unavailable=False,
        ) from None
    if node.has_install_script and not unpacked.install_scripts:
        unpacked.install_scripts.append("install script (the registry says so)")
    return tarballs.storage_key(data), unpacked


# ---------------------------------------------------------------------------------------------
# The lock


@dataclass
class AppPackages:
    """What services stores with a proposal: the lock and the module table's bytes."""

    resolved: Resolved
    lock: dict
    data: bytes

    def store(self) -> PackageBundle:
        return store(self.resolved, self.data, self.lock["bundle"])


def package_app(resolved: Resolved, imports: list[str]) -> AppPackages:
    """The lock and module table for an app whose run check passed, its registry imports
    being `imports`. Refuses a package file those imports reach that the frame cannot run."""
    try:
        table = modules.build_table(resolved.layout, imports)
    except modules.PackageCodeProblem as exc:
        raise refused(f"{exc}; depend on another version of it, or another package") from None
    lock, data = lock_of(resolved, table)
    return AppPackages(resolved=resolved, lock=lock, data=data)


def lock_of(resolved: Resolved, table: modules.Table) -> tuple[dict, bytes]:
    """The lock to store with the proposal, and the module table's bytes (its sha256 is in
    the lock as `bundle`)."""
    data = table.as_json()
    digest = hashlib.sha256(data).hexdigest()
    rows = []
    for path, package in sorted(resolved.layout.packages.items()):
        node = package.node
        licence = licenses.license_text(package.manifest)
        rows.append(
            {
                "path": path,
                "name": node.name,
                "version": node.version,
                "integrity": seen(node),
                "key": node.key,
                "license": licence or "none given",
                "osi": licenses.is_osi(licence),
                "unpacked_bytes": node.unpacked_bytes,
                "loaded_bytes": table.loaded_bytes.get(path, 0),
                "install_scripts": node.install_scripts,
                "deprecated": node.deprecated[:300],
                "advisories": advisories_of(resolved.advisories, node),
                "required_by": node.required_by,
            }
        )
    lock = {
        "dependencies": resolved.dependencies,
        "packages": rows,
        "advisories_checked": resolved.advisories is not None,
        "imports": table.imports,
        "bundle": digest,
        "bundle_bytes": len(data),
    }
    return lock, data


def advisories_of(found: dict | None, node: Node) -> list[dict]:
    """The advisories the registry reported that this exact version is affected by."""
    shown = []
    for advisory in (found or {}).get(node.name) or []:
        if not isinstance(advisory, dict):
            continue
        affected = str(advisory.get("vulnerable_versions") or "*")
        if not satisfies(node.version, affected):
            continue
        shown.append(
            {
                "id": str(advisory.get("id", ""))[:40],
                "title": str(advisory.get("title") or "advisory")[:300],
                "severity": str(advisory.get("severity") or "unknown")[:20],
                "url": safe_url(advisory.get("url")),
                "vulnerable_versions": affected[:200],
            }
        )
    return shown


def safe_url(value) -> str:
    text = str(value or "")
    return text[:500] if text.startswith("https://") else ""


def packages_of(lock: dict) -> list[libraries.Package]:
    """The registry packages of a stored lock, as the card and the read tools list them."""
    return [
        libraries.Package(
            name=row["name"],
            version=row["version"],
            license=row["license"],
            bytes=row["loaded_bytes"],
            origin="registry",
            osi=row["osi"],
            install_scripts=tuple(row["install_scripts"]),
            advisories=tuple(row["advisories"]),
            unpacked_bytes=row["unpacked_bytes"],
            deprecated=row["deprecated"],
        )
        for row in lock.get("packages", [])
    ]


class StoredIndex:
    """A stored proposal's registry packages, as its run check reads them: what the app's
    imports resolved to when it was proposed (a proposal is never resolved again)."""

    def __init__(self, lock: dict):
        self.dependencies = set(lock.get("dependencies") or ())
        self.imports = lock.get("imports") or {}

    def owns(self, spec: str) -> bool:
        return libraries.package_name(spec) in self.dependencies

    def problem(self, spec: str) -> str | None:
        if spec in self.imports:
            return None
        return f"cannot import {spec!r}: it was not resolved when the app was proposed"


def content_digest(lock: dict) -> dict:
    """What of the lock the content hash binds: every package at its place, exact version
    and stored content, and the module table the frame runs."""
    return {
        "dependencies": lock["dependencies"],
        "packages": [[p["path"], p["name"], p["version"], p["key"]] for p in lock["packages"]],
        "bundle": lock["bundle"],
    }


def store(resolved: Resolved, data: bytes, digest: str) -> PackageBundle:
    """Store the new packages and the table (content-addressed: a row that exists stays)."""
    NpmPackage.objects.bulk_create(
        [
            NpmPackage(
                key=key,
                name=node.name,
                version=node.version,
                integrity=seen(node),
                manifest=unpacked.manifest,
                # Level 1: five times as fast as the default 9, and these are read far more
                # often than written.
                files=gzip.compress(
                    json.dumps(unpacked.files, separators=(",", ":")).encode(),
                    compresslevel=1,
                    mtime=0,
                ),
                unpacked_bytes=unpacked.unpacked_bytes,
                install_scripts=unpacked.install_scripts,
            )
            for key, (node, unpacked) in resolved.new.items()
        ],
        ignore_conflicts=True,
    )
    bundle, _created = PackageBundle.objects.get_or_create(
        sha256=digest,
        defaults={"data": gzip.compress(data, compresslevel=6, mtime=0), "bytes": len(data)},
    )
    return bundle
