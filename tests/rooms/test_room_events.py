from unittest import mock

from rooms.events import room_events_after
from rooms.models import RoomEvent
from rooms.runtime import verdicts
from rooms.services import approve_proposal, decline_proposal, propose_snippet


def propose(room, agent, files, name):
    return propose_snippet(
        caller=agent,
        room_id=str(room.pk),
        name=name,
        files={**files, "src/n.ts": name},
        idempotency_key=f"key-{name}-01",
    ).proposal


def test_events_follow_the_lifecycle_in_sequence(room, owner, agent, files):
    first = propose(room, agent, files, "One")
    second = propose(room, agent, files, "Two")
    app = approve_proposal(owner=owner, proposal_id=first.pk)
    decline_proposal(owner=owner, proposal_id=second.pk, reason="no")
    events = room_events_after(owner, room.pk)["events"]
    assert [(e["sequence"], e["type"]) for e in events] == [
        (1, "proposal.created"),
        (2, "proposal.created"),
        (3, "proposal.approved"),
        (4, "app.created"),
        (5, "proposal.declined"),
    ]
    assert events[2]["instance_id"] == str(app.pk)
    assert events[3]["position"] == 0
    assert events[4]["reason"] == "no"


def test_reading_after_a_sequence_resumes_there(room, owner, agent, files):
    for name in ("A", "B", "C"):
        propose(room, agent, files, name)
    page = room_events_after(owner, room.pk, after_sequence=1, limit=1)
    assert [e["sequence"] for e in page["events"]] == [2]
    assert page["next_after_sequence"] == 2
    empty = room_events_after(owner, room.pk, after_sequence=3)
    assert empty == {"events": [], "next_after_sequence": 3}


def test_events_are_published_only_after_commit(
    room, owner, agent, files, django_capture_on_commit_callbacks
):
    with mock.patch("rooms.events.publish_room_event") as publish:
        with django_capture_on_commit_callbacks(execute=False) as callbacks:
            proposal = propose(room, agent, files, "One")
        assert publish.call_count == 0
        for callback in callbacks:
            callback()
        assert publish.call_count == 1
        assert publish.call_args.args[0]["proposal_id"] == str(proposal.pk)


def test_approval_wakes_room_waiters_and_websocket_group(
    room, owner, agent, files, django_capture_on_commit_callbacks
):
    proposal = propose(room, agent, files, "One")
    with (
        mock.patch("osfoundry.wakeups.notify") as notify,
        django_capture_on_commit_callbacks(execute=True),
    ):
        approve_proposal(owner=owner, proposal_id=proposal.pk)
    notify.assert_called_with([f"room:{room.pk}"])
    assert RoomEvent.objects.filter(room=room).count() == 3


def test_approval_records_the_proposal_time_check_as_the_build_state(room, owner, agent, files):
    proposal = propose(room, agent, files, "One")
    summary = verdicts.summary(verdicts.of(proposal))
    assert summary.startswith("src/App.tsx and the")
    app = approve_proposal(owner=owner, proposal_id=proposal.pk)
    app.refresh_from_db()
    assert app.build_state == "ready" and app.build_updated_by == owner
    assert app.build_detail == f"Checked when proposed: {summary}"
    assert app.as_dict()["build"]["detail"] == app.build_detail
