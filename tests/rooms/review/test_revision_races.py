"""Decisions on one app racing each other: exactly one wins, the others are refused with the
reason. Real concurrency on PostgreSQL (row locks); SQLite serialises the same code."""

import threading

import pytest
from django.db import connection

from osfoundry.errors import Conflict
from rooms.launcher.tabs import rollback_app
from rooms.models import LauncherApp, Proposal, ProposalKey
from rooms.review.revisions import propose_update, revise_proposal
from rooms.runtime import verdicts
from rooms.services import approve_proposal
from tests.rooms.helpers import propose

pytestmark = pytest.mark.django_db(transaction=True)


def update(app, agent, files, marker):
    return propose_update(
        caller=agent,
        room_id=str(app.room_id),
        instance_id=str(app.pk),
        files={**files, "src/App.tsx": files["src/App.tsx"] + f"\n// {marker}\n"},
        idempotency_key=f"update-{marker}-000",
    ).proposal


def race(*actions):
    """Run the actions at once; each outcome is "ok" or the Conflict's code."""
    barrier = threading.Barrier(len(actions))
    outcomes = {}

    def run(name, action):
        try:
            barrier.wait()
            action()
            outcomes[name] = "ok"
        except Conflict as error:
            outcomes[name] = error.code
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=item) for item in enumerate(actions)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    return [outcomes[index] for index in range(len(actions))]


def test_two_updates_approved_at_once_one_wins(room, owner, agent, files):
    app = approve_proposal(owner=owner, proposal_id=propose(room, agent, files).pk)
    first, second = update(app, agent, files, "a"), update(app, agent, files, "b")
    outcomes = race(
        lambda: approve_proposal(owner=owner, proposal_id=first.pk),
        lambda: approve_proposal(owner=owner, proposal_id=second.pk),
    )
    assert sorted(outcomes) == ["ok", "stale_revision"]
    app.refresh_from_db()
    assert app.revision == 2 and app.revisions.count() == 2
    winner = first if outcomes[0] == "ok" else second
    assert app.proposal_id == winner.pk
    assert LauncherApp.objects.count() == 1


def test_a_rollback_racing_an_approval_one_wins(room, owner, agent, files):
    app = approve_proposal(owner=owner, proposal_id=propose(room, agent, files).pk)
    approve_proposal(owner=owner, proposal_id=update(app, agent, files, "v2").pk)
    pending = update(app, agent, files, "v3")
    outcomes = race(
        lambda: approve_proposal(owner=owner, proposal_id=pending.pk),
        lambda: rollback_app(
            owner=owner, room_id=room.pk, instance_id=app.pk, to_revision=1, expected_revision=2
        ),
    )
    assert sorted(outcomes) == ["ok", "stale_revision"]
    app.refresh_from_db()
    assert app.revision == 3 and app.revisions.count() == 3
    pending.refresh_from_db()
    assert pending.status == ("approved" if outcomes[0] == "ok" else "pending")


def test_a_proposal_approved_while_its_revision_is_checked_is_not_revised(
    room, owner, agent, files, monkeypatch
):
    first = propose(room, agent, files)
    real_check = verdicts.check_files

    def approved_meanwhile(checked_files):
        # The owner approves after revise_proposal read the proposal as pending, before the
        # revision is stored under the proposal's lock.
        approve_proposal(owner=owner, proposal_id=first.pk)
        return real_check(checked_files)

    monkeypatch.setattr(verdicts, "check_files", approved_meanwhile)
    with pytest.raises(Conflict) as caught:
        revise_proposal(
            caller=agent,
            proposal_id=str(first.pk),
            files={**files, "src/App.tsx": files["src/App.tsx"] + "\n// late\n"},
            idempotency_key="revise-late-0001",
        )
    assert (caught.value.code, caught.value.field) == ("already_decided", "proposal_id")
    assert caught.value.message == (
        "This proposal was approved; propose an update of its app instead (propose_room_app_update)"
    )
    assert list(Proposal.objects.values_list("pk", "status")) == [(first.pk, "approved")]
    assert not ProposalKey.objects.filter(operation="revise_proposal").exists()
