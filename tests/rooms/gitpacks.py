"""Packs written by hand, for the pushes git itself would never make: objects whose declared
sizes lie, compression bombs, deltas that make huge objects. And one receive-pack request."""

import base64
import hashlib
import struct
import zlib
from collections.abc import Iterable

import httpx
from dulwich.objects import Blob, Commit, Tree
from dulwich.pack import OFS_DELTA, REF_DELTA

ZERO = b"0" * 40
COMMIT, TREE, BLOB = 1, 2, 3


def header(type_num: int, size: int) -> bytes:
    """A pack object header: the type and the size the entry declares."""
    first = (type_num << 4) | (size & 15)
    size >>= 4
    out = bytearray()
    while size:
        out.append(first | 0x80)
        first = size & 0x7F
        size >>= 7
    out.append(first)
    return bytes(out)


def entry(type_num: int, raw: bytes, *, declared: int | None = None) -> bytes:
    return header(type_num, len(raw) if declared is None else declared) + zlib.compress(raw)


def zeros_entry(size: int) -> bytes:
    """A blob of `size` zero bytes at zlib level 9: 200 MiB become about 200 KB."""
    compressor = zlib.compressobj(9)
    chunk = bytes(1 << 20)
    parts = [header(BLOB, size)]
    for start in range(0, size, len(chunk)):
        parts.append(compressor.compress(chunk[: min(len(chunk), size - start)]))
    parts.append(compressor.flush())
    return b"".join(parts)


def varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte, value = value & 0x7F, value >> 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


def delta(base_size: int, result_size: int, instructions: bytes) -> bytes:
    return varint(base_size) + varint(result_size) + instructions


def ofs_distance(distance: int) -> bytes:
    """git's OFS_DELTA offset encoding of the distance back to the base."""
    out = [distance & 0x7F]
    distance >>= 7
    while distance:
        distance -= 1
        out.append(0x80 | (distance & 0x7F))
        distance >>= 7
    return bytes(reversed(out))


def ofs_delta_entry(distance: int, data: bytes) -> bytes:
    return header(OFS_DELTA, len(data)) + ofs_distance(distance) + zlib.compress(data)


def ref_delta_entry(base: bytes, data: bytes) -> bytes:
    return header(REF_DELTA, len(data)) + bytes.fromhex(base.decode()) + zlib.compress(data)


def pack(entries: Iterable[bytes]) -> bytes:
    entries = list(entries)
    body = b"PACK" + struct.pack(">LL", 2, len(entries)) + b"".join(entries)
    return body + hashlib.sha1(body).digest()


def zeros_id(size: int) -> bytes:
    """The id of a blob of `size` zero bytes, without holding them."""
    digest = hashlib.sha1(b"blob %d\0" % size)
    chunk = bytes(1 << 20)
    for start in range(0, size, len(chunk)):
        digest.update(chunk[: min(len(chunk), size - start)])
    return digest.hexdigest().encode()


def tree_of(entries: dict[bytes, bytes]) -> Tree:
    """A tree of files, each name -> a blob's id."""
    tree = Tree()
    for name, sha in entries.items():
        tree.add(name, 0o100644, sha)
    return tree


def commit_on(tree: Tree, *, parents: Iterable[bytes] = ()) -> Commit:
    commit = Commit()
    commit.tree, commit.message, commit.parents = tree.id, b"m\n", list(parents)
    commit.author = commit.committer = b"A <a@example.com>"
    commit.author_time = commit.commit_time = 0
    commit.author_timezone = commit.commit_timezone = 0
    return commit


def commit_of(files: dict[bytes, bytes], *, parents: Iterable[bytes] = ()) -> list:
    """The objects of a one-folder commit of `files`: its blobs, its tree, the commit last."""
    blobs = [Blob.from_string(data) for data in files.values()]
    tree = tree_of({name: blob.id for name, blob in zip(files, blobs, strict=True)})
    return [*blobs, tree, commit_on(tree, parents=parents)]


def entries_of(objects) -> list[bytes]:
    return [entry(obj.type_num, obj.as_raw_string()) for obj in objects]


def receive_pack(
    base_url: str, token: str, path: str, commands: list[tuple[bytes, bytes, bytes]], data: bytes
) -> httpx.Response:
    """POST one receive-pack request: `commands` (old, new, ref), then the pack `data`."""
    auth = base64.b64encode(f"agent:{token}".encode()).decode()
    lines = b""
    for n, (old, new, ref) in enumerate(commands):
        line = old + b" " + new + b" " + ref
        if n == 0:
            line += b"\0report-status side-band-64k"
        lines += b"%04x" % (len(line) + 4) + line
    return httpx.post(
        f"{base_url}/git/{path}/git-receive-pack",
        content=lines + b"0000" + data,
        headers={
            "Authorization": f"Basic {auth}",
            "Content-Type": "application/x-git-receive-pack-request",
        },
        timeout=120,
    )


def report(response: httpx.Response) -> str:
    """What the pusher reads: the side-band's report-status and progress lines, as text."""
    return response.content.decode("utf-8", "replace")
