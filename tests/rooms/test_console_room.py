"""The Room page: the launcher tab bar, build states and the owner's Deploy action."""

import pytest
from django.urls import reverse

from rooms.events import APP_DEPLOYED
from rooms.models import LauncherApp, RoomEvent
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


def deploy_url(app):
    return reverse("rooms:deploy", args=[app.room_id, app.pk])


def test_owner_sees_tabs_in_order_with_a_runtime_hook_and_deploy(client, owner, room, apps):
    client.force_login(owner)
    response = client.get(room_url(room))
    assert response.status_code == 200
    html = response.content.decode()
    positions = [html.index(f'data-instance-id="{app.pk}" data-position') for app in apps]
    assert positions == sorted(positions)
    assert 'role="tablist"' in html
    assert "data-app-area\n" in html  # the runtime mounts the selected tab's app there
    assert "rooms/launcher.js" in html
    assert html.count("data-deploy>Deploy</button>") == 3
    assert "not deployed" in html
    assert "rooms/room.js" in html


def test_member_sees_the_launcher_without_deploy(client, member, room, apps):
    client.force_login(member)
    response = client.get(room_url(room))
    assert response.status_code == 200
    html = response.content.decode()
    assert all(f'data-instance-id="{app.pk}"' in html for app in apps)
    assert "data-deploy" not in html and "Deploy<" not in html


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


def test_owner_deploy_records_a_build_state(client, owner, room, apps):
    client.force_login(owner)
    response = client.post(deploy_url(apps[0]), follow=True)
    assert response.status_code == 200
    app = LauncherApp.objects.get(pk=apps[0].pk)
    assert app.build_state == LauncherApp.BuildState.READY
    assert app.build_updated_by == owner
    assert RoomEvent.objects.filter(type=APP_DEPLOYED).count() == 1
    html = response.content.decode()
    assert "is deployed: build state ready" in html
    assert 'class="state state-ready" data-build-state>Ready</span>' in html


def test_member_cannot_deploy(client, member, room, apps):
    client.force_login(member)
    response = client.post(deploy_url(apps[0]))
    assert response.status_code == 403
    assert not LauncherApp.objects.get(pk=apps[0].pk).build_state


def test_stranger_cannot_deploy(client, stranger, room, apps):
    client.force_login(stranger)
    refused_by_view(client.post(deploy_url(apps[0])), "rooms:deploy")


def test_deploy_is_a_post(client, owner, room, apps):
    client.force_login(owner)
    assert client.get(deploy_url(apps[0])).status_code == 405
