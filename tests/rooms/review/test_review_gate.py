"""Nothing reaches a Room without its owner's approval; pending content is the owner's alone."""

import pytest

from osfoundry.errors import NotFound
from rooms.access import get_proposal_for_user, list_room_apps
from rooms.events import room_events_after
from rooms.services import approve_proposal, propose_snippet


@pytest.fixture
def proposal(room, agent, files):
    return propose_snippet(
        caller=agent, room_id=str(room.pk), name="Timer", files=files, idempotency_key="key-000001"
    ).proposal


def test_a_pending_proposal_is_never_in_the_launcher(room, owner, member, proposal):
    for user in (owner, member):
        assert list_room_apps(user, room.pk) == []


def test_an_approved_proposal_is_in_the_launcher_for_members(room, owner, member, proposal):
    app = approve_proposal(owner=owner, proposal_id=proposal.pk)
    (entry,) = list_room_apps(member, room.pk)
    assert entry["instance_id"] == str(app.pk)
    assert entry["build"]["state"] == "ready"
    assert entry["build"]["detail"].startswith("Checked when proposed: src/App.tsx")
    assert "files" not in entry


def test_members_and_strangers_get_not_found_for_pending_content(member, stranger, proposal):
    for user in (member, stranger):
        with pytest.raises(NotFound):
            get_proposal_for_user(user, proposal.pk)


def test_owner_and_proposer_can_read_the_proposal(owner, agent, proposal):
    assert get_proposal_for_user(owner, proposal.pk) == proposal
    assert get_proposal_for_user(agent, proposal.pk) == proposal


def test_strangers_get_not_found_for_the_room(room, stranger):
    with pytest.raises(NotFound):
        list_room_apps(stranger, room.pk)


def test_members_see_that_a_proposal_exists_but_not_its_name(room, member, proposal):
    (event,) = room_events_after(member, room.pk)["events"]
    assert event["type"] == "proposal.created"
    assert "name" not in event and "proposal_id" not in event
