"""rooms.live.changes: one receiver per model change tells every memory, feed and parked wait,
in one wake-up after commit, so every memory forgets before any waiter of it runs."""

from agents.models import AgentProfile, agent_key
from osfoundry import wakeups
from osfoundry.trust import ACCESS_KEY
from rooms.events import room_key
from rooms.live.remembered_rooms import ROOMS_KEY


def test_a_person_deactivated_is_one_wake_up_for_every_memory_and_wait(
    room, member, monkeypatch, django_capture_on_commit_callbacks
):
    profile = AgentProfile.objects.create(owner=member, handle="member-codex")
    sent = []
    monkeypatch.setattr(wakeups, "notify", lambda keys, hints=None: sent.append(list(keys)))
    with django_capture_on_commit_callbacks(execute=True):
        member.is_active = False
        member.save()
    assert len(sent) == 1
    assert set(sent[0]) == {ROOMS_KEY, room_key(room.pk), ACCESS_KEY, agent_key(profile.pk)}


def test_a_member_removed_is_one_wake_up_and_nothing_before_commit(
    room, member, monkeypatch, django_capture_on_commit_callbacks
):
    sent = []
    monkeypatch.setattr(wakeups, "notify", lambda keys, hints=None: sent.append(list(keys)))
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        room.members.remove(member)
    assert sent == []
    for callback in callbacks:
        callback()
    assert len(sent) == 1 and set(sent[0]) == {ROOMS_KEY, room_key(room.pk)}
