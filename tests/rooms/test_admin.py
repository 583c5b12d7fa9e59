import pytest
from django.urls import reverse

from rooms.models import Proposal, Room
from rooms.services import approve_proposal, propose_snippet


@pytest.fixture
def approved(room, owner, agent, files):
    proposal = propose_snippet(
        caller=agent, room_id=str(room.pk), name="Timer", files=files, idempotency_key="key-000001"
    ).proposal
    approve_proposal(owner=owner, proposal_id=proposal.pk)
    return proposal


def test_every_admin_page_renders(admin_client, approved, room):
    for model in ("project", "room", "repository", "proposal", "launcherapp", "roomevent"):
        response = admin_client.get(reverse(f"admin:rooms_{model}_changelist"))
        assert response.status_code == 200, model
    response = admin_client.get(reverse("admin:agents_accesstoken_changelist"))
    assert response.status_code == 200
    detail = admin_client.get(reverse("admin:rooms_proposal_change", args=[approved.pk]))
    assert detail.status_code == 200


def test_proposal_content_is_read_only_in_admin(admin_client, approved):
    url = reverse("admin:rooms_proposal_change", args=[approved.pk])
    response = admin_client.post(url, {"name": "Changed", "status": "pending"})
    assert response.status_code == 403
    approved.refresh_from_db()
    assert approved.name == "Timer" and approved.status == Proposal.Status.APPROVED


def test_admin_creates_a_room_with_members(admin_client, project, owner, member):
    response = admin_client.post(
        reverse("admin:rooms_room_add"),
        {
            "project": project.pk,
            "name": "New Room",
            "kind": "cloud",
            "owner": owner.pk,
            "members": [member.pk],
        },
    )
    assert response.status_code == 302
    room = Room.objects.get(name="New Room")
    assert list(room.members.all()) == [member]
