"""The Room page: the launcher tab bar and build states (the check each revision passed)."""

import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from rooms.launcher.tabs import remove_app
from rooms.models import LauncherApp, Proposal
from rooms.services import approve_proposal
from tests.refusals import refused_by_view
from tests.rooms.helpers import proposal_rows, propose


@pytest.fixture
def apps(room, owner, agent, files):
    made = []
    for index, name in enumerate(["Timer", "Board", "Poll"]):
        proposal = propose(room, agent, files, key=f"key-room-{index}", name=name)
        made.append(approve_proposal(owner=owner, proposal_id=proposal.pk))
    return made


def room_url(room):
    return reverse("rooms:room", args=[room.pk])


def test_owner_sees_tabs_in_order_with_a_runtime_hook_and_build_state(client, owner, room, apps):
    client.force_login(owner)
    response = client.get(room_url(room))
    assert response.status_code == 200
    html = response.content.decode()
    positions = [html.index(f'data-instance-id="{app.pk}" data-position') for app in apps]
    assert positions == sorted(positions)
    assert 'role="tablist"' in html
    assert "data-app-area\n" in html  # the runtime mounts the selected tab's app there
    assert "rooms/launcher.js" in html
    assert "Deploy" not in html  # there is no server build: the check ran when proposed
    assert (
        len(re.findall(r'data-build-state title="Checked when proposed: [^"]+">Ready<', html)) == 3
    )
    assert "rooms/room.js" in html


def test_member_sees_the_launcher_without_tab_actions(client, member, room, apps):
    client.force_login(member)
    response = client.get(room_url(room))
    assert response.status_code == 200
    html = response.content.decode()
    assert all(f'data-instance-id="{app.pk}"' in html for app in apps)
    assert "data-tab-action" not in html


def test_pending_proposals_never_appear_in_the_launcher(client, member, room, agent, files):
    propose(room, agent, files, name="Secret plan")
    client.force_login(member)
    html = client.get(room_url(room)).content.decode()
    assert "Secret plan" not in html
    assert "No apps yet." in html


def test_stranger_gets_404_for_the_room(client, stranger, room):
    client.force_login(stranger)
    refused_by_view(client.get(room_url(room)), "rooms:room")


def test_anonymous_is_sent_to_login(client, room):
    assert client.get(room_url(room)).status_code == 302


def apps_in_bulk(room, owner, agent, count, start=0):
    """`count` approved apps at positions start.., written as rows (the Room page only reads
    them): what years of approvals leave in a Room. Returns them in position order."""
    approved = proposal_rows(
        room,
        agent,
        range(start, start + count),
        status=Proposal.Status.APPROVED,
        decided_by=owner,
        decided_at=timezone.now(),
    )
    return LauncherApp.objects.bulk_create(
        LauncherApp(
            room=room,
            proposal=proposal,
            name=proposal.name,
            position=start + n,
            build_state=LauncherApp.BuildState.READY,
        )
        for n, proposal in enumerate(approved)
    )


def table_rows(html: str) -> list[str]:
    """The instance ids of the Apps table's rows, in order."""
    body = html.split("data-app-rows", 1)[1].split("</tbody>", 1)[0]
    return re.findall(r'<tr data-instance-id="([^"]+)"', body)


def test_a_room_with_more_apps_than_a_page_shows_fifty_and_a_pager(client, owner, room, agent):
    made = apps_in_bulk(room, owner, agent, 60)
    client.force_login(owner)
    first = client.get(room_url(room))
    html = first.content.decode()
    assert table_rows(html) == [str(app.pk) for app in made[:50]]
    assert "1–50 of 60 apps" in html
    assert 'href="?page=2" rel="next">Next</a>' in html and 'rel="prev"' not in html
    # The tab bar still holds every app: a link each, no forms.
    launcher = html.split("data-launcher>", 1)[1].split("</nav>", 1)[0]
    assert launcher.count('role="tab"') == 60 and "<form" not in launcher
    # Only the very first app cannot move left.
    assert html.count('data-tab-action="move-left" aria-label') == 50
    assert html.count("disabled>←</button>") == 1
    assert "disabled>→</button>" not in html

    second = client.get(room_url(room), {"page": "2"})
    html = second.content.decode()
    assert table_rows(html) == [str(app.pk) for app in made[50:]]
    assert "51–60 of 60 apps" in html
    assert 'href="?page=1" rel="prev">Previous</a>' in html and 'rel="next"' not in html
    assert '<td class="num">51</td>' in html  # numbered through the Room, not the page
    assert "disabled>←</button>" not in html
    assert html.count("disabled>→</button>") == 1
    # Each action comes back to the page it was posted from.
    assert f'name="next" value="{room_url(room)}?page=2"' in html


def test_an_apps_address_opens_the_table_page_that_holds_it(client, owner, room, agent):
    made = apps_in_bulk(room, owner, agent, 60)
    client.force_login(owner)
    response = client.get(reverse("rooms:app", args=[room.pk, made[55].pk]))
    assert response.context["page"].number == 2
    assert str(made[55].pk) in table_rows(response.content.decode())
    # A page asked for wins.
    asked = client.get(reverse("rooms:app", args=[room.pk, made[55].pk]), {"page": "1"})
    assert asked.context["page"].number == 1


@pytest.mark.parametrize("number", ["x", "", "0", "-1", "2.5", "1e9", "99", "٣"])
def test_a_page_number_that_is_not_one_gives_a_page_never_an_error(
    client, owner, room, agent, number
):
    apps_in_bulk(room, owner, agent, 60)
    client.force_login(owner)
    response = client.get(room_url(room), {"page": number})
    assert response.status_code == 200
    # Not a whole number, or below 1: the first page; past the end: the last.
    assert response.context["page"].number == (2 if number in ("99", "٣") else 1)
    assert len(table_rows(response.content.decode())) in (50, 10)


def test_the_room_page_reads_as_many_queries_for_120_apps_as_for_5(
    client, owner, member, room, agent
):
    def queries(user) -> int:
        client.force_login(user)
        with CaptureQueriesContext(connection) as seen:
            assert client.get(room_url(room)).status_code == 200
        return len(seen)

    made = apps_in_bulk(room, owner, agent, 5)
    remove_app(owner=owner, room_id=room.pk, instance_id=made[0].pk)  # a Removed tabs row too
    few = queries(owner), queries(member)
    more = apps_in_bulk(room, owner, agent, 120, start=10)
    for app in more[:20]:
        remove_app(owner=owner, room_id=room.pk, instance_id=app.pk)
    assert (queries(owner), queries(member)) == few


def test_removed_tabs_come_a_page_at_a_time_newest_first(client, owner, room, agent):
    made = apps_in_bulk(room, owner, agent, 61)
    for app in made[1:]:
        remove_app(owner=owner, room_id=room.pk, instance_id=app.pk)
    client.force_login(owner)
    html = client.get(room_url(room)).content.decode()
    removed = html.split("data-removed-apps", 1)[1].split("</tbody>", 1)[0]
    assert removed.count('data-tab-action="restore"') == 50
    assert "1–50 of 60 removed, newest first" in html
    assert 'href="?page=1&amp;removed=2" rel="next">Older</a>' in html
    older = client.get(room_url(room), {"removed": "2"}).content.decode()
    assert older.split("data-removed-apps", 1)[1].count('data-tab-action="restore"') == 10
    assert str(made[1].pk) in older  # the first removed is the oldest
    # Restoring comes back to the Room's page it was posted from.
    assert f'name="next" value="{room_url(room)}?page=1"' in older


def test_the_tab_bar_escapes_what_an_app_is_named(client, owner, room, agent):
    (app,) = apps_in_bulk(room, owner, agent, 1)
    LauncherApp.objects.filter(pk=app.pk).update(name='"><img src=x onerror=alert(1)>')
    client.force_login(owner)
    html = client.get(room_url(room)).content.decode()
    launcher = html.split("data-launcher>", 1)[1].split("</nav>", 1)[0]
    assert "<bdi>&quot;&gt;&lt;img src=x onerror=alert(1)&gt;</bdi></a>" in launcher
    assert "<img" not in html
