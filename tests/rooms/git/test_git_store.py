"""rooms/git/store.py as dulwich uses it: objects and refs are rows of one repository, shared by
every process that opens it."""

import pytest
from dulwich.objects import Blob
from dulwich.pack import write_pack_objects

from rooms.git.store import ZERO_SHA, DatabaseObjectStore, DatabaseRefs
from rooms.models import GitObject, Repository


def blob(text: str) -> Blob:
    return Blob.from_string(text.encode())


def test_an_object_added_is_read_back_by_another_store(repository):
    hello = blob("hello\n")
    DatabaseObjectStore(repository.pk).add_object(hello)
    other = DatabaseObjectStore(repository.pk)  # another process: nothing in memory
    assert hello.id in other
    assert other[hello.id].as_raw_string() == b"hello\n"
    assert list(other) == [hello.id]


def test_objects_belong_to_their_repository(repository, project):
    elsewhere = Repository.objects.create(project=project, name="other")
    hello = blob("hello\n")
    DatabaseObjectStore(repository.pk).add_object(hello)
    assert hello.id not in DatabaseObjectStore(elsewhere.pk)
    assert list(DatabaseObjectStore(elsewhere.pk)) == []


def test_a_pack_written_to_add_pack_is_stored_when_committed(repository):
    store = DatabaseObjectStore(repository.pk)
    objects = [blob("one\n"), blob("two\n")]
    f, commit, _abort = store.add_pack()
    write_pack_objects(f.write, [(obj, None) for obj in objects], object_format=store.object_format)
    commit()
    stored = set(GitObject.objects.filter(repository=repository).values_list("sha", flat=True))
    assert stored == {obj.id.decode() for obj in objects}


def test_a_pack_of_no_objects_stores_nothing(repository):
    store = DatabaseObjectStore(repository.pk)
    f, commit, _abort = store.add_pack()
    write_pack_objects(f.write, [], object_format=store.object_format)
    commit()
    assert not GitObject.objects.exists()


def test_refs_move_only_from_the_value_they_were_read_at(repository):
    refs = DatabaseRefs(repository.pk)
    one, two, three = (blob(text).id for text in ("1", "2", "3"))
    assert refs.set_if_equals(b"refs/heads/main", None, one)  # unconditional
    assert refs.set_if_equals(b"refs/heads/main", one, two)
    with pytest.raises(OSError, match="was moved by another push"):
        refs.set_if_equals(b"refs/heads/main", one, three)
    with pytest.raises(OSError, match="was created by another push"):
        refs.set_if_equals(b"refs/heads/main", ZERO_SHA, three)
    with pytest.raises(OSError, match="was moved by another push"):
        refs.remove_if_equals(b"refs/heads/main", one)
    assert refs.remove_if_equals(b"refs/heads/main", two)
    with pytest.raises(OSError, match="was moved by another push"):
        refs.remove_if_equals(b"refs/heads/main", None)  # already gone
