"""Each change of a tab is one Room event carrying the tab whole: what a launcher needs to redraw
it without reading the app again (instance, name, position, kind, revision, build state, who)."""

import pytest

from rooms.launcher.tabs import move_app, remove_app, rename_app, restore_app, rollback_app
from rooms.models import RoomEvent
from rooms.review.revisions import propose_update
from rooms.services import approve_proposal
from tests.rooms.helpers import propose


@pytest.fixture
def apps(room, owner, agent, files):
    made = []
    for index, name in enumerate(["Timer", "Board"]):
        proposal = propose(room, agent, files, key=f"key-event-{index}", name=name)
        made.append(approve_proposal(owner=owner, proposal_id=proposal.pk))
    return made


def events_since(room, sequence):
    rows = RoomEvent.objects.filter(room=room, sequence__gt=sequence).order_by("sequence")
    return [(row.type, row.payload) for row in rows]


def last_sequence(room):
    return RoomEvent.objects.filter(room=room).order_by("sequence").last().sequence


def call(service, owner, app, **extra):
    return service(owner=owner, room_id=app.room_id, instance_id=app.pk, **extra)


def tab(app, *, position, revision=1, name=None, **extra):
    return {
        "instance_id": str(app.pk),
        "name": name or app.name,
        "position": position,
        "kind": "snippet",
        "revision": revision,
        "build_state": "ready",
        **extra,
    }


def test_an_approval_adds_a_tab_and_says_so(room, owner, agent, files):
    proposal = propose(room, agent, files, name="Timer")
    before = last_sequence(room)
    app = approve_proposal(owner=owner, proposal_id=proposal.pk)
    proposal.refresh_from_db()
    assert events_since(room, before) == [
        (
            "proposal.approved",
            {
                "proposal_id": str(proposal.pk),
                "instance_id": str(app.pk),
                "decided_by": "owner",
                "decided_at": proposal.decided_at.isoformat(),
            },
        ),
        ("app.created", tab(app, position=0, proposal_id=str(proposal.pk), by="owner")),
    ]


def test_an_approved_update_and_a_rollback_say_which_revision_runs(room, owner, agent, files):
    app = approve_proposal(owner=owner, proposal_id=propose(room, agent, files, name="Timer").pk)
    first_proposal = str(app.proposal_id)
    update = propose_update(
        caller=agent,
        room_id=str(room.pk),
        instance_id=str(app.pk),
        files={**files, "src/App.tsx": files["src/App.tsx"] + "// v2\n"},
        idempotency_key="update-0001",
        name="Timer v2",
    ).proposal
    approve_proposal(owner=owner, proposal_id=update.pk)
    assert events_since(room, last_sequence(room) - 1) == [
        (
            "app.updated",
            tab(
                app,
                position=0,
                revision=2,
                name="Timer v2",
                proposal_id=str(update.pk),
                by="owner",
            ),
        )
    ]
    before = last_sequence(room)
    call(rollback_app, owner, app, to_revision=1, expected_revision=2)
    assert events_since(room, before) == [
        (
            "app.rolled_back",
            tab(
                app,
                position=0,
                revision=3,
                name="Timer",
                proposal_id=first_proposal,
                rolled_back_to=1,
                by="owner",
            ),
        )
    ]


def test_removing_and_restoring_a_tab_say_where_it_went(room, owner, apps):
    before = last_sequence(room)
    call(remove_app, owner, apps[0])
    call(restore_app, owner, apps[0])
    assert events_since(room, before) == [
        ("app.removed", tab(apps[0], position=None, by="owner")),
        ("app.restored", tab(apps[0], position=2, by="owner")),
    ]


def test_moving_a_tab_gives_the_new_order(room, owner, apps):
    before = last_sequence(room)
    call(move_app, owner, apps[1], direction="left")
    order = [str(apps[1].pk), str(apps[0].pk)]
    assert events_since(room, before) == [
        ("app.moved", tab(apps[1], position=0, by="owner", order=order))
    ]


def test_renaming_a_tab_gives_both_names(room, owner, apps):
    before = last_sequence(room)
    call(rename_app, owner, apps[1], name="Sprint board")
    assert events_since(room, before) == [
        (
            "app.renamed",
            tab(apps[1], position=1, name="Sprint board", by="owner", previous_name="Board"),
        )
    ]
