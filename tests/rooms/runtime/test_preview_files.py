"""A pending proposal's files for the owner's preview: the Room owner only, pending only."""

import pytest
from django.urls import reverse

from osfoundry.errors import Conflict, NotFound
from rooms.access import get_pending_proposal_for_owner
from rooms.services import approve_proposal, propose_snippet
from tests.refusals import refused_by_view


@pytest.fixture
def proposal(room, agent, files):
    return propose_snippet(
        caller=agent, room_id=str(room.pk), name="Timer", files=files, idempotency_key="key-prev-1"
    ).proposal


def preview_url(proposal):
    return reverse("rooms:proposal_preview_files", args=[proposal.pk])


def test_owner_gets_the_pending_files(client, owner, proposal, files):
    client.force_login(owner)
    response = client.get(preview_url(proposal))
    assert response.status_code == 200
    assert response.json() == {
        "name": "Timer",
        "entry": "src/App.tsx",
        "status": "pending",
        "files": files,
        "packages": None,
    }


@pytest.mark.parametrize("who", ["member", "stranger", "agent"])
def test_everyone_but_the_owner_gets_404(client, request, proposal, who):
    # "agent" proposed it and is a member: its unreviewed code still runs in nobody's session.
    client.force_login(request.getfixturevalue(who))
    response = client.get(preview_url(proposal))
    refused_by_view(response, "rooms:proposal_preview_files")
    assert response.json()["error"]["code"] == "not_found"
    assert "App.tsx" not in response.content.decode()


def test_anonymous_is_asked_to_log_in(client, proposal):
    response = client.get(preview_url(proposal))
    assert response.status_code == 401
    assert response.json() == {
        "error": {"code": "login_required", "message": "Log in again to open this app"}
    }


def test_a_decided_proposal_is_no_longer_previewed(client, owner, proposal):
    approve_proposal(owner=owner, proposal_id=proposal.pk)
    client.force_login(owner)
    response = client.get(preview_url(proposal))
    assert response.status_code == 409
    assert "open it from the Room launcher" in response.json()["error"]["message"]
    with pytest.raises(Conflict):
        get_pending_proposal_for_owner(owner=owner, proposal_id=proposal.pk)


def test_service_refuses_members_like_missing_proposals(member, proposal):
    with pytest.raises(NotFound):
        get_pending_proposal_for_owner(owner=member, proposal_id=proposal.pk)
    with pytest.raises(NotFound):
        get_pending_proposal_for_owner(owner=member, proposal_id="not-a-uuid")


def test_preview_button_is_on_the_owners_card_only(client, owner, agent, proposal):
    card = reverse("rooms:proposal", args=[proposal.pk])
    client.force_login(owner)
    page = client.get(card).content.decode()
    assert preview_url(proposal) in page
    assert "Unapproved code" in page
    # The proposer may read its card, but gets no preview.
    client.force_login(agent)
    page = client.get(card)
    assert page.status_code == 200
    assert preview_url(proposal) not in page.content.decode()


def test_anonymous_is_asked_to_log_in_for_the_preview_packages_too(client, proposal):
    url = reverse("rooms:proposal_preview_packages", args=[proposal.pk, "0" * 64])
    response = client.get(url)
    assert response.status_code == 401
    assert response.json() == {
        "error": {"code": "login_required", "message": "Log in again to open this app"}
    }
