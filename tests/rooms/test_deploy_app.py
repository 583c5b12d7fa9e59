import pytest

from osfoundry.errors import Forbidden, Invalid, NotFound
from rooms.services import approve_proposal, deploy_app, propose_snippet


@pytest.fixture
def app(room, owner, agent, files):
    proposal = propose_snippet(
        caller=agent, room_id=str(room.pk), name="Timer", files=files, idempotency_key="key-000001"
    ).proposal
    return approve_proposal(owner=owner, proposal_id=proposal.pk)


def test_only_the_owner_deploys(room, member, app):
    with pytest.raises(Forbidden):
        deploy_app(acting_user=member, room_id=room.pk, instance_id=app.pk)
    app.refresh_from_db()
    assert app.build_state == ""


def test_stranger_gets_not_found(room, stranger, app):
    with pytest.raises(NotFound):
        deploy_app(acting_user=stranger, room_id=room.pk, instance_id=app.pk)


def test_unknown_state_is_refused(room, owner, app):
    with pytest.raises(Invalid) as error:
        deploy_app(acting_user=owner, room_id=room.pk, instance_id=app.pk, state="shipped")
    assert error.value.field == "state"
    assert "queued, building, ready, failed" in error.value.message
