"""Migration 0011 gives a change request's summary its own field: what a changes-requested
proposal stored as the owner's one note moves to changes_summary, a decline keeps its reason
(decline_reason), and going back puts the summary in the one note again."""

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from rooms.review.revisions import request_changes
from rooms.services import decline_proposal
from tests.rooms.helpers import changed, propose

BEFORE = [("rooms", "0010_npm_packages")]
AFTER = [("rooms", "0011_proposal_changes_summary")]


def migrate(targets):
    executor = MigrationExecutor(connection)
    executor.migrate(targets)
    return MigrationExecutor(connection).loader.project_state(targets).apps


@pytest.mark.django_db(transaction=True)
def test_a_summary_moves_to_its_own_field_and_back(room, owner, agent, files):
    sent_back = propose(room, agent, files)
    request_changes(owner=owner, proposal_id=sent_back.pk, summary="Two nits")
    declined = propose(room, agent, changed(files, "v2"), key="key-00002")
    decline_proposal(owner=owner, proposal_id=declined.pk, reason="Too noisy")

    # Back to before the split: the one note holds both, as a database written then does.
    old = migrate(BEFORE).get_model("rooms", "Proposal")
    assert dict(old.objects.values_list("pk", "decision_note")) == {
        sent_back.pk: "Two nits",
        declined.pk: "Too noisy",
    }

    new = migrate(AFTER).get_model("rooms", "Proposal")
    rows = new.objects.values_list("pk", "decline_reason", "changes_summary")
    assert sorted(rows) == sorted([(sent_back.pk, "", "Two nits"), (declined.pk, "Too noisy", "")])
    sent_back.refresh_from_db()
    assert sent_back.as_dict()["changes_summary"] == "Two nits"
    assert sent_back.as_dict()["decline_reason"] is None
