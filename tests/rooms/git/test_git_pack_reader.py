"""The pack reader on its own (rooms/git/pack.py): each malformed or over-limit pack a client
could send is refused with its own message and keeps nothing; what git itself sends (repeated
objects, far and near delta bases, large objects) is resolved to the objects it makes."""

import io

import pytest
from dulwich.objects import Blob
from dulwich.pack import OFS_DELTA

from osfoundry.errors import Invalid
from rooms.git import pack as reader
from rooms.git.pack import Limits, MalformedPack, PackTooLarge, reach, receive_pack
from tests.rooms.gitpacks import (
    BLOB,
    COMMIT,
    delta,
    entry,
    header,
    ofs_delta_entry,
    pack,
    ref_delta_entry,
)

MIB = 2**20
LIMITS = Limits(pack_bytes=50 * MIB, object_bytes=1_000_000, inflated_bytes=64 * MIB, objects=100)


def nothing_held(sha: bytes) -> tuple[int, bytes]:
    raise KeyError(sha)


def read(data: bytes, *, limits: Limits = LIMITS, external=nothing_held):
    return receive_pack(io.BytesIO(data).read, external=external, limits=limits)


def refusal(data: bytes, *, limits: Limits = LIMITS, kind=MalformedPack, external=nothing_held):
    with pytest.raises(kind) as caught:
        read(data, limits=limits, external=external)
    assert caught.value.field == "pack"
    return caught.value.message


def copy(offset: int, size: int) -> bytes:
    """A delta instruction copying `size` (< 64 KiB) bytes of the base from `offset` (< 16 MiB)."""
    return bytes(
        [0x80 | 0x01 | 0x02 | 0x04 | 0x10 | 0x20, offset & 0xFF, (offset >> 8) & 0xFF]
        + [(offset >> 16) & 0xFF, size & 0xFF, size >> 8]
    )


def insert(data: bytes) -> bytes:
    return bytes([len(data)]) + data


def test_an_object_sent_twice_is_staged_once():
    blob = Blob.from_string(b"twice\n")
    staged = read(pack([entry(BLOB, blob.data), entry(BLOB, blob.data)]))
    assert staged.shas() == [blob.id]
    assert len(staged) == 1
    assert staged[blob.id].data == b"twice\n"


def test_a_delta_on_a_large_earlier_object_reads_its_base_back_from_the_stage():
    # Over a quarter of the base cache: staged, not kept in memory, read back for the delta.
    base = bytes(range(256)) * (3 * MIB // 256)
    limits = Limits(50 * MIB, 4 * MIB, 64 * MIB, 100)
    made = base[:1000] + b"changed\n"
    change = ref_delta_entry(
        Blob.from_string(base).id, delta(len(base), len(made), copy(0, 1000) + insert(b"changed\n"))
    )
    staged = read(pack([entry(BLOB, base), change]), limits=limits)
    assert staged[Blob.from_string(made).id].data == made
    assert staged[Blob.from_string(base).id].data == base


def test_a_delta_whose_base_is_far_back_is_resolved():
    base = bytes(range(200)) * 3  # compresses to well over 128 bytes: a two-byte distance
    first = entry(BLOB, base)
    assert len(first) >= 128
    made = base[:50] + b"tail\n"
    change = ofs_delta_entry(
        len(first), delta(len(base), len(made), copy(0, 50) + insert(b"tail\n"))
    )
    staged = read(pack([first, change]))
    assert staged[Blob.from_string(made).id].data == made


def test_a_delta_on_an_object_the_repository_holds_asks_the_repository():
    held = Blob.from_string(b"held\n" * 10)
    made = b"held\nand more\n"
    change = ref_delta_entry(held.id, delta(50, len(made), copy(0, 5) + insert(b"and more\n")))
    asked = []

    def external(sha):
        asked.append(sha)
        return BLOB, held.data

    staged = read(pack([change]), external=external)
    assert asked == [held.id]
    assert staged.shas() == [Blob.from_string(made).id]


def test_not_a_pack():
    assert refusal(b"JUNK" + bytes(8) + bytes(20)) == "not a git pack"


def test_an_unknown_pack_version():
    data = pack([])
    data = data[:4] + b"\0\0\0\x04" + data[8:]
    assert refusal(data) == "pack version 4 is not supported; git sends version 2"


def test_more_objects_than_a_push_may_hold():
    data = pack([entry(BLOB, b"%d\n" % n) for n in range(3)])
    message = refusal(data, limits=Limits(50 * MIB, 1_000_000, 64 * MIB, 2), kind=Invalid)
    assert message == "3 objects in one push, at most 2; push the history in parts"


def test_an_object_header_that_never_ends_is_named_by_where_it_starts():
    first = entry(BLOB, b"fine\n")
    data = pack([first, bytes([0x80 | (BLOB << 4)]) + b"\xff" * 10 + b"\x00"])
    assert refusal(data) == f"object header at offset {12 + len(first)} is malformed"


def test_an_object_of_an_unknown_type():
    assert refusal(pack([entry(5, b"x")])) == "object at offset 12 has an unknown type (5)"


def test_a_delta_base_offset_that_never_ends_is_named_by_where_it_starts():
    data = pack([header(OFS_DELTA, 5) + b"\xff" * 12 + b"\x00"])
    assert refusal(data) == "delta base offset at 13 is malformed"


def test_a_delta_that_names_no_object_as_its_base():
    first = entry(BLOB, b"a base\n")
    data = pack([first, ofs_delta_entry(len(first) - 1, delta(7, 1, insert(b"x")))])
    assert refusal(data) == f"the delta at offset {12 + len(first)} names no object as its base"


def test_an_object_that_is_not_zlib():
    message = refusal(pack([header(BLOB, 5) + b"not zlib at all"]))
    assert message.startswith("object at offset 12 is not valid zlib: Error -3 ")


def test_an_object_smaller_than_its_header_says():
    data = pack([entry(BLOB, b"abc", declared=10)])
    assert refusal(data) == "object at offset 12 is smaller than its header says"


def test_a_pack_whose_checksum_does_not_match():
    data = pack([entry(BLOB, b"abc")])
    data = data[:-1] + bytes([data[-1] ^ 1])
    assert refusal(data) == "the pack's checksum does not match its contents"


def test_a_pack_that_ends_early():
    data = pack([entry(BLOB, b"abc" * 100)])
    assert refusal(data[:20]) == "the pack ends early; push again"


def test_a_pack_over_its_size_limit():
    data = pack([entry(BLOB, bytes(range(256)) * 10)])
    message = refusal(data, limits=Limits(100, 1_000_000, 64 * MIB, 100), kind=PackTooLarge)
    assert message == ("push larger than 0 MB (100 bytes); leave large files out of the repository")


@pytest.mark.parametrize("data", [b"", b"\x80", b"\x05\xff"])
def test_a_delta_whose_header_is_cut_short(data):
    first = entry(BLOB, b"a base\n")
    assert refusal(pack([first, ofs_delta_entry(len(first), data)])) == (
        "a delta's header is malformed"
    )


def test_a_delta_over_the_per_file_limit():
    first = entry(BLOB, b"a base\n")
    change = ofs_delta_entry(len(first), delta(7, 30, insert(b"x" * 30)))
    message = refusal(
        pack([first, change]), limits=Limits(50 * MIB, 20, 64 * MIB, 100), kind=Invalid
    )
    assert message == (
        "a delta of 33 bytes at offset 28, at most 20; keep large files out of the repository"
    )


def test_a_delta_whose_result_is_past_the_inflated_budget():
    first = entry(BLOB, b"a base\n")
    change = ofs_delta_entry(len(first), delta(7, 60, insert(b"y" * 60)))
    message = refusal(pack([first, change]), limits=Limits(50 * MIB, 1000, 80, 100), kind=Invalid)
    assert message == (
        "the push inflates to more than 80 bytes (0 MiB); push fewer commits at once, and keep "
        "large files out of the repository"
    )


def test_a_delta_that_does_not_apply_to_its_base():
    first = entry(BLOB, b"a base\n")
    change = ofs_delta_entry(len(first), delta(99, 1, insert(b"x")))
    message = refusal(pack([first, change]))
    assert message.startswith(f"the delta at offset {12 + len(first)} does not apply: ")


def test_a_change_to_an_object_over_the_per_file_limit():
    big = b"z" * 5000
    change = ref_delta_entry(Blob.from_string(big).id, delta(5000, 1, insert(b"x")))
    message = refusal(
        pack([entry(BLOB, big), change]), limits=Limits(50 * MIB, 1000, 64 * MIB, 100), kind=Invalid
    )
    assert message == (
        "a change to a file of 5000 bytes, at most 1000 per file; keep large files out of the "
        "repository"
    )


def test_a_delta_whose_base_is_nowhere():
    missing = b"ab" * 20
    change = ref_delta_entry(missing, delta(5, 1, insert(b"x")))
    assert refusal(pack([change])) == (
        f"a delta's base {missing.decode()} is neither earlier in the pack nor in the "
        "repository; fetch and push again"
    )


def test_a_malformed_commit_a_ref_reaches_is_refused_when_read():
    raw = b"tree not-a-sha\n\nmessage\n"
    staged = read(pack([entry(COMMIT, raw)]))
    sha = reader.object_id(COMMIT, raw)
    with pytest.raises(MalformedPack) as caught:
        reach(staged, [sha])
    assert caught.value.message.startswith(f"object {sha.decode()} is malformed: ")
