"""A package version's tarball: checked against the registry's integrity hash, then read.

Nothing in a tarball runs, ever: its install scripts (preinstall, install, postinstall, and the
`node-gyp rebuild` npm runs for a binding.gyp) are only named, for the card to mark. The files
are read in memory, never written to disk: regular files only (no links or devices), paths
inside the package, and the sizes the tar headers declare are added up before anything is
inflated past the limit. What the Room keeps of a package is what its frame may load (.js,
.mjs, .cjs, .json, .css, as UTF-8 text) and every package.json, which module resolution reads.
"""

import base64
import hashlib
import io
import json
import tarfile
import zlib
from dataclasses import dataclass, field

# The strongest hash first: npm checks the strongest one the registry gives.
ALGORITHMS = ("sha512", "sha384", "sha256", "sha1")
KEPT_SUFFIXES = (".js", ".mjs", ".cjs", ".json", ".css")
INSTALL_SCRIPTS = ("preinstall", "install", "postinstall")
# A tar header claims a size; a gzip stream can claim to be anything: inflate in pieces.
READ_PIECE = 1024 * 1024


class TarballProblem(Exception):
    """Why a tarball is refused, as a clause naming what is wrong with it."""


@dataclass
class Unpacked:
    manifest: dict  # the package's own package.json
    files: dict[str, str]  # what the Room keeps of it: path (inside the package) -> text
    unpacked_bytes: int  # every regular file's size, as npm's unpackedSize counts
    install_scripts: list[str] = field(default_factory=list)  # "postinstall: node x.js"


def storage_key(data: bytes) -> str:
    """The content address the Room stores a tarball's files under: its sha512, as SRI."""
    return "sha512-" + base64.b64encode(hashlib.sha512(data).digest()).decode()


def verify(data: bytes, *, integrity: str, shasum: str) -> str:
    """Check `data` against the registry's `dist.integrity` (Subresource Integrity: the
    strongest hash it lists), or its `dist.shasum` (sha1, hex) when that is all it gives.
    Returns the hash checked; raises TarballProblem when it does not match or there is none."""
    offered: dict[str, list[str]] = {}
    for item in (integrity or "").split():
        algorithm, _, digest = item.partition("-")
        if algorithm in ALGORITHMS and digest:
            offered.setdefault(algorithm, []).append(digest.split("?")[0])
    for algorithm in ALGORITHMS:
        if algorithm in offered:
            actual = base64.b64encode(hashlib.new(algorithm, data).digest()).decode()
            if actual not in offered[algorithm]:
                raise TarballProblem(
                    f"its tarball does not match the registry's integrity hash ({algorithm}: "
                    f"expected {offered[algorithm][0][:24]}…, got {actual[:24]}…)"
                )
            return f"{algorithm}-{actual}"
    if shasum:
        actual = hashlib.sha1(data).hexdigest()
        if actual != shasum.lower():
            raise TarballProblem(
                f"its tarball does not match the registry's shasum (expected {shasum}, got "
                f"{actual})"
            )
        return f"sha1-{base64.b64encode(hashlib.sha1(data).digest()).decode()}"
    raise TarballProblem("the registry gives no integrity hash for its tarball")


def unpack(data: bytes, *, max_bytes: int) -> Unpacked:
    """The files of a verified tarball, at most `max_bytes` unpacked in all."""
    try:
        archive = tarfile.open(fileobj=_Inflating(data, max_bytes), mode="r|")
    except (tarfile.TarError, zlib.error, OSError, EOFError) as exc:
        raise TarballProblem(f"its tarball cannot be read ({exc})") from None
    files: dict[str, str] = {}
    manifest_text = None
    total = 0
    try:
        for member in archive:
            if not member.isfile():
                continue  # links, folders, devices: nothing the Room loads
            total += member.size
            if total > max_bytes:
                raise TarballProblem(f"it unpacks to more than {max_bytes:,} bytes")
            path = package_path(member.name)
            if path is None or path.startswith("node_modules/"):
                continue
            if not (path.endswith(KEPT_SUFFIXES) or path.rsplit("/", 1)[-1] == "binding.gyp"):
                continue
            handle = archive.extractfile(member)
            raw = handle.read() if handle else b""
            if path == "package.json":
                manifest_text = raw
            if path.endswith("binding.gyp"):
                files[path] = ""  # only its presence matters (npm's implicit install)
                continue
            try:
                files[path] = raw.decode("utf-8")
            except UnicodeDecodeError:
                continue  # not text: not something the frame could load
    except (tarfile.TarError, zlib.error, OSError, EOFError) as exc:
        raise TarballProblem(f"its tarball cannot be read ({exc})") from None
    if manifest_text is None:
        raise TarballProblem("its tarball has no package.json")
    try:
        manifest = json.loads(manifest_text)
    except ValueError:
        raise TarballProblem("its package.json is not valid JSON") from None
    if not isinstance(manifest, dict):
        raise TarballProblem("its package.json is not a JSON object")
    scripts = install_scripts(manifest, has_binding="binding.gyp" in files)
    files.pop("binding.gyp", None)
    return Unpacked(manifest=manifest, files=files, unpacked_bytes=total, install_scripts=scripts)


def install_scripts(manifest: dict, *, has_binding: bool) -> list[str]:
    """The scripts npm would run when installing the package (the Room runs none of them)."""
    scripts = manifest.get("scripts")
    scripts = scripts if isinstance(scripts, dict) else {}
    found = [
        f"{name}: {str(scripts[name])[:200]}"
        for name in INSTALL_SCRIPTS
        if isinstance(scripts.get(name), str) and scripts[name].strip()
    ]
    if has_binding and not any(scripts.get(name) for name in ("install", "preinstall")):
        found.append("install: node-gyp rebuild (binding.gyp)")
    return found


def package_path(name: str) -> str | None:
    """A member's path inside the package: npm drops the first folder ("package/"), whatever
    it is called. None for a path that leaves the package or means nothing."""
    parts = name.replace("\\", "/").split("/")[1:]
    if not parts or any(part in ("", ".", "..") for part in parts) or "\0" in name:
        return None
    return "/".join(parts)


class _Inflating(io.RawIOBase):
    """A gzip stream read as the tar reader asks, inflated piece by piece, refusing to inflate
    more than `limit` bytes (plus the tar headers' share)."""

    def __init__(self, data: bytes, limit: int):
        self._source = memoryview(data)
        self._at = 0
        self._inflate = zlib.decompressobj(16 + zlib.MAX_WBITS)
        self._buffer = b""
        self._offset = 0  # what of _buffer was read (the tar reader asks 512 bytes at a time)
        # Headers and padding: 512 bytes a block; a tarball of small files doubles its size.
        self._left = limit * 2 + 10 * 1024 * 1024

    def readable(self) -> bool:
        return True

    def _more(self) -> bool:
        while True:
            if self._inflate.eof:
                rest = self._inflate.unused_data
                if not rest:
                    return False
                # A second gzip member (concatenated streams are valid gzip).
                self._inflate = zlib.decompressobj(16 + zlib.MAX_WBITS)
                self._buffer = self._inflate.decompress(rest, READ_PIECE)
            else:
                chunk: bytes | memoryview
                chunk = self._inflate.unconsumed_tail
                if not chunk:
                    chunk = self._source[self._at : self._at + 256 * 1024]
                    self._at += len(chunk)
                if not chunk:  # the data ends inside the gzip stream: it was cut short
                    raise TarballProblem("its tarball cannot be read (its gzip stream ends early)")
                self._buffer = self._inflate.decompress(chunk, READ_PIECE)
            self._offset = 0
            if self._buffer:
                return True

    def readinto(self, target) -> int:
        if self._offset >= len(self._buffer) and not self._more():
            return 0
        size = min(len(target), len(self._buffer) - self._offset)
        target[:size] = self._buffer[self._offset : self._offset + size]
        self._offset += size
        self._left -= size
        if self._left < 0:
            raise TarballProblem("it inflates to far more than its files declare")
        return size
