"""`manage.py purge_idempotency_keys` (run daily) forgets old keys of every kind; what they
stood for stays, and a key of a still-pending proposal is kept."""

from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import call_command
from django.utils import timezone

from agents.models import Message, MessageKey
from agents.sending import send_agent_message
from agents.services import claim_connected_profile
from rooms.models import Proposal, ProposalKey
from rooms.services import decline_proposal, propose_snippet

pytestmark = pytest.mark.django_db


def test_the_command_purges_old_proposal_and_message_keys(room, owner, member, agent, files):
    decided = propose_snippet(
        caller=agent, room_id=room.pk, name="Old", files=files, idempotency_key="old-proposal"
    ).proposal
    decline_proposal(owner=owner, proposal_id=decided.pk)
    propose_snippet(
        caller=agent, room_id=room.pk, name="Pending", files=files, idempotency_key="old-pending"
    )
    room.project.members.add(owner, member)
    alice = claim_connected_profile(user=owner, connection_key="pat:a", handle="alice").profile
    claim_connected_profile(user=member, connection_key="pat:b", handle="bob")
    send_agent_message(sender=alice, to="bob", body="old", idempotency_key="old-message")
    send_agent_message(sender=alice, to="bob", body="new", idempotency_key="new-message")
    long_ago = timezone.now() - timedelta(days=31)
    ProposalKey.objects.update(created_at=long_ago)
    MessageKey.objects.filter(key="old-message").update(created_at=long_ago)

    out = StringIO()
    call_command("purge_idempotency_keys", "--days", "30", stdout=out)

    assert out.getvalue().strip() == (
        "Purged idempotency keys older than 30 days: 1 proposal key(s), 1 message key(s)."
    )
    assert list(ProposalKey.objects.values_list("key", flat=True)) == ["old-pending"]
    assert list(MessageKey.objects.values_list("key", flat=True)) == ["new-message"]
    assert Proposal.objects.count() == 2
    assert Message.objects.count() == 2
