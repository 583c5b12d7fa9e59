"""The Room page: the launcher tab bar and build states (the check each revision passed)."""

import re

import pytest
from django.urls import reverse

from rooms.services import approve_proposal
from tests.refusals import refused_by_view
from tests.rooms.helpers import propose


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
