"""The inbox: Recently decided and the filters by Room and agent, through the Django client."""

import pytest

from rooms.review.revisions import request_changes
from rooms.services import approve_proposal, decline_proposal, propose_snippet

pytestmark = pytest.mark.django_db


def propose(room, agent, files, key, name):
    return propose_snippet(
        caller=agent, room_id=str(room.pk), name=name, files=files, idempotency_key=key
    ).proposal


def test_recently_decided_names_each_outcome_and_who_decided(client, owner, room, agent, files):
    approved = propose(room, agent, files, "inbox-key-1", "Approved app")
    declined = propose(room, agent, files | {"a.txt": "a"}, "inbox-key-2", "Declined app")
    sent_back = propose(room, agent, files | {"b.txt": "b"}, "inbox-key-3", "Sent back app")
    approve_proposal(owner=owner, proposal_id=approved.pk)
    decline_proposal(owner=owner, proposal_id=declined.pk)
    request_changes(owner=owner, proposal_id=sent_back.pk, summary="Smaller, please")
    propose(room, agent, files | {"c.txt": "c"}, "inbox-key-4", "Waiting app")
    client.force_login(owner)
    page = client.get("/")
    assert [p.name for p in page.context["pending"]] == ["Waiting app"]
    decided = {p.name: p.get_status_display() for p in page.context["decided"]}
    assert decided == {
        "Sent back app": "Changes requested",
        "Declined app": "Declined",
        "Approved app": "Approved",
    }
    assert all(p.decided_by == owner and p.decided_at for p in page.context["decided"])
    assert b"pill-outcome-changes_requested" in page.content


def test_filters_narrow_both_lists(client, owner, room, room_factory, agent, member, files):
    other_room = room_factory(name="Other", members=[agent, member])
    propose(room, agent, files, "inbox-key-5", "In Falcon")
    propose(other_room, agent, files, "inbox-key-6", "In Other")
    propose(other_room, member, files, "inbox-key-7", "From member")
    client.force_login(owner)
    by_room = client.get("/", {"room": str(other_room.pk)})
    assert sorted(p.name for p in by_room.context["pending"]) == ["From member", "In Other"]
    by_both = client.get("/", {"room": str(other_room.pk), "agent": "member"})
    assert [p.name for p in by_both.context["pending"]] == ["From member"]


@pytest.mark.parametrize(
    "params",
    [{"room": "not-a-uuid"}, {"room": "00000000-0000-0000-0000-000000000000"}, {"agent": "nobody"}],
)
def test_an_unknown_filter_is_a_400_with_a_message_and_the_lists_unfiltered(
    client, owner, room, agent, files, params
):
    propose(room, agent, files, "inbox-key-8", "Waiting app")
    client.force_login(owner)
    page = client.get("/", params)
    assert page.status_code == 400
    assert b"data-filter-error" in page.content
    assert [p.name for p in page.context["pending"]] == ["Waiting app"]


def test_a_room_of_someone_else_cannot_be_used_as_a_filter(
    client, owner, stranger, room_factory, files
):
    theirs = room_factory(name="Theirs", room_owner=stranger)
    client.force_login(owner)
    page = client.get("/", {"room": str(theirs.pk)})
    assert page.status_code == 400
    assert b"Theirs" not in page.content
