"""osfoundry.memory: what a process remembers counts only while no wake-up can be missed, is
forgotten by a wake-up under its own key (not another's), and a read that overlapped a forget is
never stored."""

import pytest

from osfoundry import memory, wakeups
from osfoundry.memory import HeardMemory


@pytest.fixture
def reliable(monkeypatch):
    state = {"reliable": True}
    monkeypatch.setattr(wakeups.registry, "is_reliable", lambda: state["reliable"])
    return state


@pytest.fixture
def remembered(reliable):
    remembered = HeardMemory("test:changed", ttl=30, max_entries=3)
    yield remembered
    wakeups.registry._listeners["test:changed"].remove(remembered.heard)


def test_a_value_is_remembered_until_its_ttl(remembered, monkeypatch):
    remembered.put("a", 1, remembered.generation)
    assert remembered.get("a") == 1
    now = memory.monotonic()
    monkeypatch.setattr(memory, "monotonic", lambda: now + 29)
    assert remembered.get("a") == 1
    monkeypatch.setattr(memory, "monotonic", lambda: now + 31)
    assert remembered.get("a") is None


def test_a_shorter_ttl_wins(remembered, monkeypatch):
    remembered.put("a", 1, remembered.generation, ttl=2)
    now = memory.monotonic()
    monkeypatch.setattr(memory, "monotonic", lambda: now + 3)
    assert remembered.get("a") is None


def test_a_wake_up_under_its_key_forgets_everything(remembered):
    remembered.put("a", 1, remembered.generation)
    remembered.put("b", 2, remembered.generation)
    wakeups.registry.wake_local(["agent:7", "test:changed"])
    assert remembered.get("a") is None and remembered.get("b") is None


def test_a_wake_up_under_other_keys_forgets_nothing(remembered):
    remembered.put("a", 1, remembered.generation)
    wakeups.registry.wake_local(["agent:7", "access:changed"])
    assert remembered.get("a") == 1


@pytest.mark.parametrize("forget", ["wake_all_local", "forget_all"])
def test_a_missed_wake_up_forgets_everything(remembered, forget):
    # A (re)subscription wakes everyone; a lost one forgets what the wake-ups vouched for.
    remembered.put("a", 1, remembered.generation)
    getattr(wakeups.registry, forget)()
    assert remembered.get("a") is None


def test_a_read_that_overlapped_a_forget_is_not_stored(remembered):
    generation = remembered.generation  # the read starts
    remembered.forget_all()  # a change is announced while it runs
    remembered.put("a", "stale", generation)
    assert remembered.get("a") is None
    remembered.put("a", "fresh", remembered.generation)
    assert remembered.get("a") == "fresh"


def test_nothing_is_stored_or_trusted_while_wake_ups_may_be_missed(remembered, reliable):
    remembered.put("a", 1, remembered.generation)
    reliable["reliable"] = False
    assert remembered.get("a") is None
    remembered.put("b", 2, remembered.generation)
    reliable["reliable"] = True
    assert remembered.get("b") is None
    assert remembered.get("a") == 1


def test_a_full_memory_starts_again(remembered):
    for key in "abc":
        remembered.put(key, key, remembered.generation)
    remembered.put("d", "d", remembered.generation)
    assert [remembered.get(key) for key in "abcd"] == [None, None, None, "d"]


def test_a_full_memory_drops_the_expired_entries_first(remembered):
    remembered.put("old", 1, remembered.generation, ttl=-1)
    remembered.put("a", 2, remembered.generation)
    remembered.put("b", 3, remembered.generation)
    remembered.put("c", 4, remembered.generation)  # the expired one goes; half is not freed
    assert [remembered.get(key) for key in ("a", "b", "c")] == [None, None, 4]
    lasting = HeardMemory(None, max_entries=4, vouched_by_wakeups=False)
    lasting.put("old", 1, ttl=-1)
    for key in "abc":
        lasting.put(key, key)
    lasting.put("d", "d")  # one expired of four: that frees less than half, so all go
    assert len(lasting) == 1
    for key in "ef":
        lasting.put(key, key, ttl=-1)
    lasting.put("g", "g")
    lasting.put("h", "h")  # e and f expired: half freed, the rest stays
    assert [lasting.get(key) for key in "dgh"] == ["d", "g", "h"]


def test_forgetting_one_entry_voids_the_reads_under_way(remembered):
    remembered.put("a", 1, remembered.generation)
    generation = remembered.generation
    remembered.forget("a")
    remembered.put("b", 2, generation)
    assert remembered.get("a") is None and remembered.get("b") is None


def test_a_memory_without_a_key_hears_no_wake_up_and_needs_none(reliable):
    own = HeardMemory(None, vouched_by_wakeups=False)
    own.put("a", 1)
    wakeups.registry.forget_all()
    reliable["reliable"] = False
    assert own.get("a") == 1 and own.peek("a") == 1
