"""Receiving a pushed pack within limits, before memory is spent on it.

A pack is a stream of zlib-compressed objects, each headed by its type and its declared size (a
delta's header declares the delta's size, and the delta itself begins with the size of the
object it makes). Compression is where a small push becomes a large one: one 200 MiB blob of
zeros is a 200 KB pack, and dulwich's reader inflates every object whole before anyone can look
at its size (a 200 KB push grew a worker by ~420 MiB, issue 31). So each object is judged by
its declared size before it is inflated, inflating stops at that size, and the push's inflated
bytes have a budget of their own:

- an object over `object_bytes` (a file over the per-file limit) is read through without being
  kept, its id computed on the way, so the refusal can name its path; it costs CPU within the
  inflated budget, and no memory;
- a delta over `object_bytes`, or one that makes an object over it, is refused at once;
- every object is counted against `inflated_bytes` by its declared size before it is inflated.

Resolved objects are staged compressed in a temporary file (`StagedObjects`), not in memory: the
push handler checks what the refs point at, then stores only what they reach. A delta's base is
read back from the stage (or from the repository, for a thin pack), through a small cache.
"""

import hashlib
import struct
import zlib
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from tempfile import TemporaryFile

from dulwich.errors import ApplyDeltaError
from dulwich.objects import Commit, ObjectFormatException, ShaFile, Tag, Tree, object_class
from dulwich.pack import OFS_DELTA, REF_DELTA, apply_delta

from osfoundry.errors import Invalid

# The limits of a push, as the issue sets them: large apps, not large binaries.
MAX_PUSH_BYTES = 50 * 1024 * 1024  # the pack as sent
MAX_FILE_BYTES = 1_000_000  # any one object, inflated
# Everything a push inflates to: a 50 MB pack of source with its history inflates to a few times
# its size; a pack that inflates to more is a compression bomb or a repository of binaries.
MAX_INFLATED_BYTES = 256 * 1024 * 1024
# Objects in one push: a 200-file app with 300 commits is ~5,000 (/work/shared/RESEARCH.md).
MAX_PUSH_OBJECTS = 100_000

SUBMODULE = 0o160000
HASH_BYTES = 20  # SHA-1: the object format of every repository here
READ_CHUNK = 64 * 1024
# Inflated bytes per zlib call: 64 KiB of compressed zeros inflate to 64 MiB in one call.
INFLATE_PIECE = 1024 * 1024
# Inflated objects kept for the deltas that follow them: a delta's base is nearly always one of
# the last few objects of the pack.
BASE_CACHE_BYTES = 8 * 1024 * 1024


@dataclass(frozen=True)
class Limits:
    pack_bytes: int
    object_bytes: int
    inflated_bytes: int
    objects: int


def limits() -> Limits:
    """The limits as this module sets them now (read at each push: tests lower them)."""
    return Limits(MAX_PUSH_BYTES, MAX_FILE_BYTES, MAX_INFLATED_BYTES, MAX_PUSH_OBJECTS)


class PackTooLarge(Invalid):
    """The pack as sent is over `Limits.pack_bytes`."""


class MalformedPack(Invalid):
    """Not a pack git would send: git reports it as the unpack's failure."""


def file_too_large(path: str, size: int, limit: int) -> Invalid:
    return Invalid(
        f"{path}: {size} bytes, at most {limit} per file; keep large files out of the repository",
        field="files",
    )


def refused(reason: str) -> Invalid:
    return Invalid(reason, field="pack")


def malformed(reason: str) -> MalformedPack:
    return MalformedPack(reason, field="pack")


@dataclass(frozen=True)
class Oversized:
    type_num: int
    size: int


class StagedObjects:
    """The objects of a received pack, resolved, each kept as its zlib-compressed body in a
    temporary file: what a pack entry of the store holds (rooms/git/store.py)."""

    def __init__(self) -> None:
        self._file = TemporaryFile(prefix="push-")
        # hex sha -> (type, inflated size, offset in the file, compressed length)
        self._index: dict[bytes, tuple[int, int, int, int]] = {}
        # hex sha -> an object over the per-file limit: read through, never kept
        self.oversized: dict[bytes, Oversized] = {}
        self._cache: OrderedDict[bytes, bytes] = OrderedDict()
        self._cached_bytes = 0

    def __contains__(self, sha: bytes) -> bool:
        return sha in self._index

    def __len__(self) -> int:
        return len(self._index)

    def shas(self) -> list[bytes]:
        return list(self._index)

    def add(self, sha: bytes, type_num: int, raw: bytes, compressed: bytes | None = None) -> None:
        if sha in self._index:
            return
        body = compressed if compressed is not None else zlib.compress(raw)
        offset = self._file.seek(0, 2)
        self._file.write(body)
        self._index[sha] = (type_num, len(raw), offset, len(body))
        self._remember(sha, raw)

    def raw(self, sha: bytes) -> tuple[int, bytes]:
        type_num, _size, _offset, _length = self._index[sha]  # KeyError: not staged
        if (raw := self._cache.get(sha)) is not None:
            self._cache.move_to_end(sha)
            return type_num, raw
        raw = zlib.decompress(self._compressed(sha))
        self._remember(sha, raw)
        return type_num, raw

    def __getitem__(self, sha: bytes) -> ShaFile:
        type_num, raw = self.raw(sha)
        try:
            return ShaFile.from_raw_string(type_num, raw, sha=sha)
        except ObjectFormatException as error:
            raise malformed(f"object {sha.decode()} is malformed: {error}") from None

    def entries(self, shas: Iterable[bytes]) -> Iterator[tuple[bytes, int, int, bytes]]:
        """(sha, type, inflated size, compressed body) of each of `shas`, read one at a time."""
        for sha in shas:
            type_num, size, _offset, _length = self._index[sha]
            yield sha, type_num, size, self._compressed(sha)

    def close(self) -> None:
        self._file.close()

    def _compressed(self, sha: bytes) -> bytes:
        _type, _size, offset, length = self._index[sha]
        self._file.seek(offset)
        return self._file.read(length)

    def _remember(self, sha: bytes, raw: bytes) -> None:
        if len(raw) > BASE_CACHE_BYTES // 4:
            return
        self._cache[sha] = raw
        self._cached_bytes += len(raw)
        while self._cached_bytes > BASE_CACHE_BYTES:
            _sha, dropped = self._cache.popitem(last=False)
            self._cached_bytes -= len(dropped)


class Wire:
    """The pack as it arrives: read ahead in chunks, capped at `limit` bytes; every byte
    consumed is hashed, since a pack ends with the checksum of all the bytes before it."""

    def __init__(self, read_some: Callable[[int], bytes], limit: int) -> None:
        self._read_some = read_some
        self._limit = limit
        self._received = 0
        self._buffer = bytearray()
        self._pos = 0
        self.offset = 0  # bytes consumed
        self._hash = hashlib.sha1()

    def take(self, n: int, *, hashed: bool = True) -> bytes:
        self._fill(n)
        data = bytes(self._buffer[self._pos : self._pos + n])
        self._consume(n, hashed=hashed)
        return data

    def byte(self) -> int:
        return self.take(1)[0]

    def varint(self) -> tuple[int, int]:
        """A pack object header: (type, size), the size in 7-bit groups after 4 bits."""
        at = self.offset
        first = self.byte()
        type_num, size, shift = (first >> 4) & 7, first & 15, 4
        byte = first
        while byte & 0x80:
            if shift > 63:
                raise malformed(f"object header at offset {at} is malformed")
            byte = self.byte()
            size |= (byte & 0x7F) << shift
            shift += 7
        return type_num, size

    def base_offset(self) -> int:
        """An OFS_DELTA's distance back to its base (git's own offset encoding)."""
        at = self.offset
        byte = self.byte()
        distance = byte & 0x7F
        while byte & 0x80:
            if distance > 1 << 56:
                raise malformed(f"delta base offset at {at} is malformed")
            byte = self.byte()
            distance = ((distance + 1) << 7) | (byte & 0x7F)
        return distance

    def inflate(
        self, size: int, sink: Callable[[bytes], None], *, at: int, keep: bool = False
    ) -> bytes:
        """Inflate the zlib stream of the object at offset `at`, declared `size` bytes, each
        piece (at most INFLATE_PIECE) handed to `sink` as it comes, never more than `size` + 1
        bytes in all; with `keep`, the compressed bytes it used."""
        decompressor = zlib.decompressobj()
        compressed = bytearray()
        produced = 0
        while not decompressor.eof:
            if self._pos == len(self._buffer):
                self._fill(1)
            data = bytes(self._buffer[self._pos :])
            try:
                # +1: a stream longer than declared shows itself instead of being cut.
                piece = decompressor.decompress(data, min(size - produced + 1, INFLATE_PIECE))
            except zlib.error as error:
                raise malformed(f"object at offset {at} is not valid zlib: {error}") from None
            # Past the stream's end the bytes after it are in unused_data, and in
            # unconsumed_tail too when a max_length was given: count them once.
            left = decompressor.unused_data if decompressor.eof else decompressor.unconsumed_tail
            used = len(data) - len(left)
            if keep:
                compressed += data[:used]
            self._consume(used)
            produced += len(piece)
            if produced > size:
                raise malformed(f"object at offset {at} is larger than its header says")
            sink(piece)
        if produced != size:
            raise malformed(f"object at offset {at} is smaller than its header says")
        return bytes(compressed)

    def check_trailer(self) -> None:
        expected = self._hash.digest()
        if self.take(HASH_BYTES, hashed=False) != expected:
            raise malformed("the pack's checksum does not match its contents")

    def _fill(self, n: int) -> None:
        while len(self._buffer) - self._pos < n:
            data = self._read_some(READ_CHUNK)
            if not data:
                raise malformed("the pack ends early; push again")
            self._received += len(data)
            if self._received > self._limit:
                raise PackTooLarge(
                    f"push larger than {self._limit // 2**20} MB ({self._limit} bytes); leave "
                    "large files out of the repository",
                    field="pack",
                )
            if self._pos > READ_CHUNK:
                del self._buffer[: self._pos]
                self._pos = 0
            self._buffer += data

    def _consume(self, n: int, *, hashed: bool = True) -> None:
        if hashed:
            self._hash.update(memoryview(self._buffer)[self._pos : self._pos + n])
        self._pos += n
        self.offset += n


def object_id(type_num: int, raw: bytes) -> bytes:
    header = b"%s %d\0" % (object_class(type_num).type_name, len(raw))
    return hashlib.sha1(header + raw).hexdigest().encode()


def delta_sizes(delta: bytes) -> tuple[int, int]:
    """The (base, result) sizes a delta begins with."""
    sizes, index = [], 0
    for _ in range(2):
        size = shift = 0
        while True:
            if index >= len(delta) or shift > 63:
                raise malformed("a delta's header is malformed")
            byte = delta[index]
            index += 1
            size |= (byte & 0x7F) << shift
            shift += 7
            if not byte & 0x80:
                break
        sizes.append(size)
    return sizes[0], sizes[1]


def receive_pack(
    read_some: Callable[[int], bytes],
    *,
    external: Callable[[bytes], tuple[int, bytes]],
    limits: Limits,
) -> StagedObjects:
    """Read a pack from `read_some` into a stage, within `limits`; Invalid (nothing kept) when
    it breaks one or is malformed. `external(sha)` gives (type, raw) of an object the repository
    already holds, the base of a thin pack's delta (KeyError if it has none)."""
    wire = Wire(read_some, limits.pack_bytes)
    staged = StagedObjects()
    try:
        read_objects(wire, staged, external, limits)
        wire.check_trailer()
    except BaseException:
        staged.close()
        raise
    return staged


def read_objects(
    wire: Wire,
    staged: StagedObjects,
    external: Callable[[bytes], tuple[int, bytes]],
    limits: Limits,
) -> None:
    if wire.take(4) != b"PACK":
        raise malformed("not a git pack")
    version, count = struct.unpack(">LL", wire.take(8))
    if version not in (2, 3):
        raise malformed(f"pack version {version} is not supported; git sends version 2")
    if count > limits.objects:
        raise refused(
            f"{count} objects in one push, at most {limits.objects}; push the history in parts"
        )
    at_offset: dict[int, bytes] = {}  # where each object starts -> its sha
    inflated = 0
    for _ in range(count):
        start = wire.offset
        type_num, size = wire.varint()
        base: bytes | None = None
        if type_num == OFS_DELTA:
            distance = wire.base_offset()
            if (base := at_offset.get(start - distance)) is None:
                raise malformed(f"the delta at offset {start} names no object as its base")
        elif type_num == REF_DELTA:
            base = wire.take(HASH_BYTES).hex().encode()
        elif type_num not in (1, 2, 3, 4):
            raise malformed(f"object at offset {start} has an unknown type ({type_num})")
        inflated += size
        if inflated > limits.inflated_bytes:
            raise over_budget(limits)
        if base is None:
            at_offset[start] = read_whole(wire, staged, type_num, size, limits, at=start)
            continue
        if size > limits.object_bytes:
            raise refused(
                f"a delta of {size} bytes at offset {start}, at most {limits.object_bytes}; "
                "keep large files out of the repository"
            )
        pieces: list[bytes] = []
        wire.inflate(size, pieces.append, at=start)
        delta = b"".join(pieces)
        _base_size, result_size = delta_sizes(delta)
        if result_size > limits.object_bytes:
            raise refused(
                f"a file of {result_size} bytes (stored as a change to another), at most "
                f"{limits.object_bytes} per file; keep large files out of the repository"
            )
        inflated += result_size
        if inflated > limits.inflated_bytes:
            raise over_budget(limits)
        base_type, base_raw = delta_base(staged, external, base, limits)
        try:
            raw = b"".join(apply_delta(base_raw, delta))
        except (ApplyDeltaError, ValueError) as error:
            raise malformed(f"the delta at offset {start} does not apply: {error}") from None
        sha = object_id(base_type, raw)
        staged.add(sha, base_type, raw)
        at_offset[start] = sha


def read_whole(
    wire: Wire, staged: StagedObjects, type_num: int, size: int, limits: Limits, *, at: int
) -> bytes:
    """An object stored whole: kept with the compressed body it came with (a clone sends that
    body as it is), or, over the per-file limit, only hashed on the way through."""
    if size > limits.object_bytes:
        digest = hashlib.sha1(b"%s %d\0" % (object_class(type_num).type_name, size))
        wire.inflate(size, digest.update, at=at)
        sha = digest.hexdigest().encode()
        staged.oversized[sha] = Oversized(type_num, size)
        return sha
    pieces: list[bytes] = []
    compressed = wire.inflate(size, pieces.append, at=at, keep=True)
    raw = b"".join(pieces)
    sha = object_id(type_num, raw)
    staged.add(sha, type_num, raw, compressed)
    return sha


def delta_base(
    staged: StagedObjects,
    external: Callable[[bytes], tuple[int, bytes]],
    sha: bytes,
    limits: Limits,
) -> tuple[int, bytes]:
    if sha in staged:
        return staged.raw(sha)
    if (oversized := staged.oversized.get(sha)) is not None:
        raise refused(
            f"a change to a file of {oversized.size} bytes, at most {limits.object_bytes} per "
            "file; keep large files out of the repository"
        )
    try:
        return external(sha)
    except KeyError:
        # git writes a delta's base before the delta; a thin pack's base is in the repository.
        raise malformed(
            f"a delta's base {sha.decode()} is neither earlier in the pack nor in the "
            "repository; fetch and push again"
        ) from None


def over_budget(limits: Limits) -> Invalid:
    return refused(
        f"the push inflates to more than {limits.inflated_bytes} bytes "
        f"({limits.inflated_bytes // 2**20} MiB); push fewer commits at once, and keep large "
        "files out of the repository"
    )


@dataclass
class Reach:
    """What the refs of a push reach: the staged objects to store, and the objects the
    repository must already hold (the boundary of a thin push)."""

    staged: set[bytes]
    held: set[bytes]


def reach(
    staged: StagedObjects, tips: Iterable[bytes], *, object_bytes: int = MAX_FILE_BYTES
) -> Reach:
    """Walk from `tips` through the staged objects: commits to their trees and parents, trees
    to their entries, tags to what they tag. An object over the per-file limit that a ref
    reaches is refused with the first path it was found at."""
    found = Reach(staged=set(), held=set())
    todo: list[tuple[bytes, str]] = [(tip, "") for tip in tips]
    while todo:
        sha, path = todo.pop()
        if sha in found.staged or sha in found.held:
            continue
        if (oversized := staged.oversized.get(sha)) is not None:
            raise file_too_large(path or sha.decode(), oversized.size, object_bytes)
        if sha not in staged:
            found.held.add(sha)
            continue
        found.staged.add(sha)
        obj = staged[sha]
        if isinstance(obj, Commit):
            todo.append((obj.tree, ""))
            todo.extend((parent, "") for parent in obj.parents)
        elif isinstance(obj, Tree):
            todo.extend(
                (entry.sha, path + entry.path.decode("utf-8", "replace"))
                if not entry.mode & 0o040000
                else (entry.sha, path + entry.path.decode("utf-8", "replace") + "/")
                for entry in obj.iteritems()
                if entry.mode != SUBMODULE
            )
        elif isinstance(obj, Tag):
            todo.append((obj.object[1], ""))
    return found
