"""Connected → Needs your approval: the owner's pending proposals and the navigation badge."""

from datetime import timedelta

from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from osfoundry.auth import authenticate_bearer
from rooms.models import Proposal
from rooms.services import approve_proposal
from tests.rooms.helpers import proposal_rows, propose


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


def pending_in_bulk(room, agent, count, via=""):
    """`count` pending proposals, written as rows (what is read is what is tested here), a
    minute apart and older than any proposed by the test itself: newest first is `made`."""
    made = proposal_rows(room, agent, range(count), proposed_via=via)
    start = timezone.now() - timedelta(days=1)
    for n, proposal in enumerate(made):  # created_at is set on insert: moved back after
        Proposal.objects.filter(pk=proposal.pk).update(created_at=start - timedelta(minutes=n))
    return made


def test_the_inbox_shows_a_page_of_fifty_newest_first_and_pages_back(client, owner, room, agent):
    made = pending_in_bulk(room, agent, 60)
    client.force_login(owner)
    first = client.get(reverse("rooms:inbox"))
    assert list(first.context["pending"]) == made[:50]
    html = first.content.decode()
    assert "1–50 of 60 waiting, newest first" in html
    assert 'href="?page=2" rel="next">Older</a>' in html
    assert 'rel="prev"' not in html
    second = client.get(reverse("rooms:inbox"), {"page": "2"})
    assert list(second.context["pending"]) == made[50:]
    assert 'href="?page=1" rel="prev">Newer</a>' in second.content.decode()
    assert 'data-page="2"' in second.content.decode()
    # Not a page number: the first page; past the end: the last; never an error.
    assert client.get(reverse("rooms:inbox"), {"page": "x"}).context["page"].number == 1
    assert client.get(reverse("rooms:inbox"), {"page": "99"}).context["page"].number == 2


def test_the_pages_keep_the_filters(client, owner, room, agent):
    pending_in_bulk(room, agent, 51)
    client.force_login(owner)
    html = client.get(reverse("rooms:inbox"), {"room": str(room.pk), "agent": "agent"})
    assert f'href="?room={room.pk}&amp;agent=agent&amp;page=2"' in html.content.decode()


def test_the_inbox_reads_as_many_queries_for_a_thousand_proposals_as_for_a_few(
    client, owner, room, agent, agent_token
):
    raw, _profile = agent_token(agent, "falcon-builder")
    principal = authenticate_bearer(raw)
    token_user = principal.user
    client.force_login(owner)

    def queries() -> int:
        with CaptureQueriesContext(connection) as seen:
            assert client.get(reverse("rooms:inbox")).status_code == 200
        return len(seen)

    for n in range(3):  # proposed through a token: the rows name the agent and its token
        propose(
            room,
            token_user,
            {"src/App.tsx": f"export default () => <p>{n}</p>;\n"},
            key=f"key-token-{n:04}",
            name=f"Token app {n}",
        )
    few = queries()
    pending_in_bulk(room, agent, 1000, via=principal.token_key)
    assert queries() == few
