"""Connected → Needs your approval: the owner's pending proposals and the navigation badge."""

from django.urls import reverse

from rooms.services import approve_proposal
from tests.rooms.helpers import propose


def test_owner_sees_pending_proposals_across_rooms_newest_first(
    client, owner, room, room_factory, agent, files
):
    other = room_factory(name="Team Heron", members=[agent])
    first = propose(room, agent, files, key="key-first", name="Timer")
    second = propose(other, agent, files, key="key-second", name="Board")
    client.force_login(owner)
    response = client.get(reverse("rooms:inbox"))
    assert response.status_code == 200
    assert list(response.context["pending"]) == [second, first]
    html = response.content.decode()
    assert "Needs your approval" in html
    for text in ("Team Falcon", "Team Heron", "agent", "Timer", "Board", "Snippet"):
        assert text in html
    assert reverse("rooms:proposal", args=[first.pk]) in html
    assert f"{first.total_bytes / 1024:.1f}\xa0KB" in html


def test_decided_proposals_leave_the_inbox(client, owner, room, agent, files):
    proposal = propose(room, agent, files)
    approve_proposal(owner=owner, proposal_id=proposal.pk)
    client.force_login(owner)
    response = client.get(reverse("rooms:inbox"))
    assert list(response.context["pending"]) == []
    assert "Nothing is waiting for you." in response.content.decode()


def test_navigation_badge_counts_pending_proposals(client, owner, room, agent, files):
    propose(room, agent, files, key="key-00001", name="One")
    propose(room, agent, files, key="key-00002", name="Two")
    client.force_login(owner)
    response = client.get(reverse("rooms:room", args=[room.pk]))
    assert response.context["pending_count"] == 2
    assert 'data-pending-count title="Proposals waiting for your review">2</span>' in (
        response.content.decode()
    )


def test_member_inbox_shows_no_other_owners_proposals(client, member, room, agent, files):
    propose(room, agent, files)
    client.force_login(member)
    response = client.get(reverse("rooms:inbox"))
    assert response.status_code == 200
    assert list(response.context["pending"]) == []
    assert response.context["pending_count"] == 0
    assert "Standup timer" not in response.content.decode()
    # A member's Room list has the Room, but no live feed for its proposals.
    assert "data-room-feed" not in response.content.decode()


def test_stranger_sees_neither_rooms_nor_proposals(client, stranger, room, agent, files):
    propose(room, agent, files)
    client.force_login(stranger)
    html = client.get(reverse("rooms:inbox")).content.decode()
    assert "Team Falcon" not in html
    assert "Standup timer" not in html


def test_owner_inbox_follows_the_feed_of_each_owned_room(client, owner, room):
    client.force_login(owner)
    html = client.get(reverse("rooms:inbox")).content.decode()
    assert f'data-room-feed data-room-id="{room.pk}"' in html
    assert "rooms/inbox.js" in html


def test_anonymous_inbox_redirects_to_login(client, db):
    response = client.get(reverse("rooms:inbox"))
    assert response.status_code == 302
