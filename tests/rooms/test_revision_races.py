"""Decisions on one app racing each other: exactly one wins, the others are refused with the
reason. Real concurrency on PostgreSQL (row locks); SQLite serialises the same code."""

import threading

import pytest
from django.db import connection

from osfoundry.errors import Conflict
from rooms.models import LauncherApp
from rooms.revisions import propose_update
from rooms.services import approve_proposal
from rooms.tabs import rollback_app
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
