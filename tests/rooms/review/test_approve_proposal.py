import threading

import pytest
from django.db import connection
from django.utils import timezone

from osfoundry.errors import Conflict, NotFound
from rooms.launcher import tabs
from rooms.models import LauncherApp, Proposal
from rooms.review.revisions import propose_update
from rooms.runtime import verdicts
from rooms.runtime.runnable import RunCheck
from rooms.services import approve_proposal, decline_proposal, propose_snippet


@pytest.fixture
def proposal_factory(room, agent, files):
    def create(name="Standup timer", key=None):
        return propose_snippet(
            caller=agent,
            room_id=str(room.pk),
            name=name,
            files={**files, "src/name.ts": f"export const name = {name!r};"},
            idempotency_key=key or f"key-{name}-0001",
        ).proposal

    return create


def test_approval_appends_the_app_to_the_end_of_the_tab_bar(owner, proposal_factory):
    first, second = proposal_factory("One"), proposal_factory("Two")
    app_two = approve_proposal(owner=owner, proposal_id=second.pk)
    app_one = approve_proposal(owner=owner, proposal_id=first.pk)
    assert (app_two.position, app_one.position) == (0, 1)
    assert [a.name for a in LauncherApp.objects.order_by("position")] == ["Two", "One"]


def test_approval_records_who_and_when(owner, proposal_factory):
    proposal = proposal_factory()
    app = approve_proposal(owner=owner, proposal_id=proposal.pk, content_hash=proposal.content_hash)
    proposal.refresh_from_db()
    assert proposal.status == Proposal.Status.APPROVED
    assert proposal.decided_by == owner and proposal.decided_at is not None
    assert app.proposal == proposal and app.name == proposal.name


def test_a_second_approval_is_a_clear_conflict(owner, proposal_factory):
    proposal = proposal_factory()
    approve_proposal(owner=owner, proposal_id=proposal.pk)
    with pytest.raises(Conflict) as error:
        approve_proposal(owner=owner, proposal_id=proposal.pk)
    assert error.value.code == "already_decided"
    assert "already approved by owner" in error.value.message
    assert LauncherApp.objects.count() == 1


def test_declining_an_approved_proposal_is_a_conflict(owner, proposal_factory):
    proposal = proposal_factory()
    approve_proposal(owner=owner, proposal_id=proposal.pk)
    with pytest.raises(Conflict):
        decline_proposal(owner=owner, proposal_id=proposal.pk)
    proposal.refresh_from_db()
    assert proposal.status == Proposal.Status.APPROVED


def test_a_stale_card_cannot_approve(owner, proposal_factory):
    proposal = proposal_factory()
    with pytest.raises(Conflict) as error:
        approve_proposal(owner=owner, proposal_id=proposal.pk, content_hash="0" * 64)
    assert error.value.code == "stale_card"
    proposal.refresh_from_db()
    assert proposal.is_pending
    assert not LauncherApp.objects.exists()


def test_members_and_strangers_cannot_approve(member, stranger, proposal_factory):
    proposal = proposal_factory()
    for user in (member, stranger):
        with pytest.raises(NotFound):
            approve_proposal(owner=user, proposal_id=proposal.pk)
    proposal.refresh_from_db()
    assert proposal.is_pending


def test_the_proposer_cannot_approve_its_own_proposal(agent, proposal_factory):
    # The agent is a member, so it gets the member's answer: the card does not exist for it.
    proposal = proposal_factory()
    with pytest.raises(NotFound) as refused:
        approve_proposal(owner=agent, proposal_id=proposal.pk)
    assert refused.value.message == f"Proposal {str(proposal.pk)!r} not found"
    assert not LauncherApp.objects.exists()


def test_unknown_proposal_is_not_found(owner):
    with pytest.raises(NotFound):
        approve_proposal(owner=owner, proposal_id="not-a-uuid")


@pytest.mark.django_db(transaction=True)
def test_concurrent_approvals_create_one_app(owner, proposal_factory):
    proposal = proposal_factory()
    barrier = threading.Barrier(6)
    outcomes = []

    def approve():
        try:
            barrier.wait()
            approve_proposal(owner=owner, proposal_id=proposal.pk)
            outcomes.append("approved")
        except Conflict:
            outcomes.append("conflict")
        finally:
            connection.close()

    threads = [threading.Thread(target=approve) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert sorted(outcomes) == ["approved"] + ["conflict"] * 5
    assert LauncherApp.objects.count() == 1


@pytest.mark.django_db(transaction=True)
def test_concurrent_approvals_of_different_proposals_get_distinct_positions(
    owner, proposal_factory
):
    proposals = [proposal_factory(f"App {i}") for i in range(5)]
    barrier = threading.Barrier(5)

    def approve(proposal):
        try:
            barrier.wait()
            approve_proposal(owner=owner, proposal_id=proposal.pk)
        finally:
            connection.close()

    threads = [threading.Thread(target=approve, args=(p,)) for p in proposals]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    positions = sorted(LauncherApp.objects.values_list("position", flat=True))
    assert positions == [0, 1, 2, 3, 4]


def test_approving_a_proposal_that_does_not_exist_is_not_found(owner, db):
    missing = "00000000-0000-0000-0000-000000000000"
    with pytest.raises(NotFound) as error:
        approve_proposal(owner=owner, proposal_id=missing)
    assert (error.value.field, error.value.message) == (
        "proposal_id",
        f"Proposal '{missing}' not found",
    )
    assert not LauncherApp.objects.exists()


def test_approval_links_the_proposal_to_its_new_app(owner, proposal_factory):
    proposal = proposal_factory()
    app = approve_proposal(owner=owner, proposal_id=proposal.pk)
    proposal.refresh_from_db()
    assert proposal.app_id == app.pk and proposal.as_dict()["instance_id"] == str(app.pk)


def test_adding_an_app_links_the_proposal_in_hand_too(owner, proposal_factory):
    proposal = proposal_factory()
    now = timezone.now()
    app = tabs.add_app(proposal, owner=owner, at=now)
    assert proposal.app is app and Proposal.objects.get(pk=proposal.pk).app_id == app.pk
    assert (app.position, app.build_updated_at, app.build_updated_by) == (0, now, owner)


def test_the_build_state_is_dated_by_the_decision_that_set_it(owner, agent, proposal_factory):
    proposal = proposal_factory()
    app = approve_proposal(owner=owner, proposal_id=proposal.pk)
    proposal.refresh_from_db()
    app.refresh_from_db()
    assert (app.build_updated_at, app.build_updated_by) == (proposal.decided_at, owner)
    update = propose_update(
        caller=agent,
        room_id=str(app.room_id),
        instance_id=str(app.pk),
        files={**proposal.files, "src/App.tsx": proposal.files["src/App.tsx"] + "// v2\n"},
        idempotency_key="update-0001",
    ).proposal
    approve_proposal(owner=owner, proposal_id=update.pk)
    update.refresh_from_db()
    app.refresh_from_db()
    assert app.build_updated_at == update.decided_at > proposal.decided_at
    assert (app.build_state, app.build_updated_by) == ("ready", owner)


def test_a_long_check_summary_is_cut_to_what_the_tab_keeps(owner, proposal_factory):
    proposal = proposal_factory()
    # A stored verdict naming a file never loaded, at length.
    check = RunCheck(loaded=["src/App.tsx"], unused=["src/" + "r" * 600 + ".ts"])
    Proposal.objects.filter(pk=proposal.pk).update(**verdicts.stored_fields(check))
    app = approve_proposal(owner=owner, proposal_id=proposal.pk)
    app.refresh_from_db()
    assert (
        app.build_detail
        == (
            "Checked when proposed: src/App.tsx and the 0 files it loads. Never loaded, so never "
            "run: src/" + "r" * 600
        )[:500]
    )
    assert len(app.build_detail) == 500 and app.build_detail.endswith("r")
