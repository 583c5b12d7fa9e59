"""Idempotency keys and content of updates and revisions (SPEC §4): a retry with the same key and
arguments gets the first card back; the same key with other arguments is refused; identical
content already pending is the same card, and only when it continues the same app or line.

Both hashes are stored (a key's request_hash, a card's content_hash, which agents also read back),
so what each one covers is a stored format: changed, it would turn retries of requests sent before
a deploy into "key reused" refusals and identical pending content into second cards."""

import pytest

from osfoundry.errors import Conflict
from osfoundry.idempotency import canonical_hash
from rooms.models import Proposal, ProposalKey
from rooms.review.revisions import read_proposal, revise_proposal
from rooms.services import approve_proposal, decline_proposal
from tests.rooms.helpers import changed, propose, update

REPLAY_NOTE = "Replay: this idempotency_key was already used with these arguments."
SAME_CARD_NOTE = "Identical content from you is already pending in this Room: same card."


@pytest.fixture
def apps(room, owner, agent, files):
    return [
        approve_proposal(owner=owner, proposal_id=propose(room, agent, files, key=k, name=n).pk)
        for k, n in [("key-app-0001", "Timer"), ("key-app-0002", "Board")]
    ]


def revise(agent, proposal, files, *, key="revise-0001", name=None):
    return revise_proposal(
        caller=agent, proposal_id=str(proposal.pk), files=files, idempotency_key=key, name=name
    )


def assert_key_reused(caught, key, proposal):
    assert (caught.value.code, caught.value.field) == ("idempotency_key_reused", "idempotency_key")
    assert caught.value.message.startswith(
        f"idempotency_key {key!r} was already used for a different request (proposal {proposal.pk})"
    )


def test_a_retried_update_gets_the_first_card_back_as_a_replay(apps, agent, files):
    first = update(apps[0], agent, changed(files, "v2"))
    retry = update(apps[0], agent, changed(files, "v2"))
    assert (retry.replay, retry.duplicate_of_pending) == (True, False)
    assert retry.proposal.pk == first.proposal.pk
    assert retry.as_dict()["note"] == REPLAY_NOTE and "note" not in first.as_dict()
    assert Proposal.objects.filter(app=apps[0], status="pending").count() == 1
    (key,) = ProposalKey.objects.filter(key="update-0001")
    assert (key.operation, key.proposal_id) == ("propose_update", first.proposal.pk)


def test_an_update_key_reused_for_another_app_is_refused(apps, agent, files):
    first = update(apps[0], agent, changed(files, "v2")).proposal
    with pytest.raises(Conflict) as caught:
        update(apps[1], agent, changed(files, "v2"), name="Timer")
    assert_key_reused(caught, "update-0001", first)
    assert not Proposal.objects.filter(app=apps[1], status="pending").exists()


def test_an_update_key_reused_with_another_name_is_refused(apps, agent, files):
    first = update(apps[0], agent, changed(files, "v2")).proposal
    with pytest.raises(Conflict) as caught:
        update(apps[0], agent, changed(files, "v2"), name="Timer v2")
    assert_key_reused(caught, "update-0001", first)
    assert list(Proposal.objects.filter(app=apps[0], status="pending")) == [first]


def test_a_fresh_key_for_an_update_already_pending_is_the_same_card(apps, agent, files):
    first = update(apps[0], agent, changed(files, "v2")).proposal
    again = update(apps[0], agent, changed(files, "v2"), key="update-0002")
    assert (again.replay, again.duplicate_of_pending) == (False, True)
    assert again.proposal.pk == first.pk and again.as_dict()["note"] == SAME_CARD_NOTE
    assert ProposalKey.objects.filter(proposal=first).count() == 2


def test_the_same_files_proposed_for_two_apps_are_two_cards(apps, agent, files):
    first = update(apps[0], agent, changed(files, "v2"), name="Shared")
    second = update(apps[1], agent, changed(files, "v2"), key="update-0002", name="Shared")
    assert second.is_new and second.proposal.pk != first.proposal.pk
    assert (first.proposal.app_id, second.proposal.app_id) == (apps[0].pk, apps[1].pk)


def test_an_update_proposed_again_after_its_app_moved_on_is_a_new_card(apps, owner, agent, files):
    stale = update(apps[0], agent, changed(files, "b"), key="update-000b").proposal
    approve_proposal(
        owner=owner, proposal_id=update(apps[0], agent, changed(files, "a")).proposal.pk
    )
    again = update(apps[0], agent, changed(files, "b"), key="update-000c")
    assert again.is_new and again.proposal.pk != stale.pk
    assert (stale.base_revision, again.proposal.base_revision) == (1, 2)


def test_an_update_is_not_the_same_card_as_a_new_app_with_its_files(apps, room, agent, files):
    new_app = propose(room, agent, changed(files, "v2"), key="key-new-0001", name="Timer")
    result = update(apps[0], agent, changed(files, "v2"))
    assert result.is_new and result.proposal.pk != new_app.pk
    assert result.proposal.app_id == apps[0].pk and new_app.app_id is None


def test_a_retried_revision_gets_the_first_revision_back_as_a_replay(room, agent, files):
    proposal = propose(room, agent, files)
    first = revise(agent, proposal, changed(files, "v2"))
    retry = revise(agent, proposal, changed(files, "v2"))
    assert retry.replay and retry.proposal.pk == first.proposal.pk
    assert retry.as_dict()["note"] == REPLAY_NOTE
    assert Proposal.objects.filter(previous=proposal).count() == 1
    (key,) = ProposalKey.objects.filter(key="revise-0001")
    assert (key.operation, key.proposal_id) == ("revise_proposal", first.proposal.pk)


def test_a_revision_key_reused_for_another_proposal_is_refused(room, agent, files):
    timer = propose(room, agent, files, key="key-line-0001", name="Timer")
    board = propose(room, agent, files, key="key-line-0002", name="Board")
    first = revise(agent, timer, changed(files, "v2"), name="Same").proposal
    with pytest.raises(Conflict) as caught:
        revise(agent, board, changed(files, "v2"), name="Same")
    assert_key_reused(caught, "revise-0001", first)
    board.refresh_from_db()
    assert board.is_pending and not Proposal.objects.filter(previous=board).exists()


def test_one_key_serves_a_new_app_an_update_and_a_revision_apart(apps, room, agent, files):
    key = "one-key-0001"
    snippet = propose(room, agent, changed(files, "new"), key=key, name="Poll")
    updated = update(apps[0], agent, changed(files, "v2"), key=key)
    revised = revise(agent, snippet, changed(files, "poll v2"), key=key)
    assert updated.is_new and revised.is_new
    assert len({snippet.pk, updated.proposal.pk, revised.proposal.pk}) == 3
    assert sorted(ProposalKey.objects.filter(key=key).values_list("operation", flat=True)) == [
        "propose_snippet",
        "propose_update",
        "revise_proposal",
    ]


def test_two_lines_revised_to_the_same_content_stay_two_lines(room, owner, agent, files):
    timer = propose(room, agent, files, key="key-line-0001", name="Timer")
    board = propose(room, agent, files, key="key-line-0002", name="Board")
    for proposal in (timer, board):
        decline_proposal(owner=owner, proposal_id=proposal.pk, reason="not yet")
    first = revise(agent, timer, changed(files, "v2"), name="Same")
    second = revise(agent, board, changed(files, "v2"), key="revise-0002", name="Same")
    assert second.is_new and second.proposal.pk != first.proposal.pk
    assert second.proposal.previous_id == board.pk and first.proposal.previous_id == timer.pk


def key_hash(key, operation):
    return ProposalKey.objects.get(key=key, operation=operation).request_hash


def test_an_updates_key_and_content_hash_name_the_app_and_its_revision(apps, agent, files):
    v2 = changed(files, "v2")
    result = update(apps[0], agent, v2, name="Timer v2")
    app = str(apps[0].pk)
    assert key_hash("update-0001", "propose_update") == canonical_hash(
        {
            "op": "update",
            "room_id": str(apps[0].room_id),
            "instance_id": app,
            "name": "Timer v2",
            "files": v2,
        }
    )
    content = {"kind": "snippet", "name": "Timer v2", "files": v2}
    expected = canonical_hash(content | {"update_of": app, "base_revision": 1})
    assert result.proposal.content_hash == expected
    assert result.as_dict()["content_hash"] == expected


def test_a_revisions_key_and_content_hash_name_its_line_and_iteration(room, agent, files):
    root = propose(room, agent, files)
    second = revise(agent, root, changed(files, "v2")).proposal
    v3 = changed(files, "v3")
    third = revise(agent, second, v3, key="revise-0002", name="Timer v3").proposal
    assert key_hash("revise-0002", "revise_proposal") == canonical_hash(
        {"op": "revise", "proposal_id": str(second.pk), "name": "Timer v3", "files": v3}
    )
    # The line is named by its first proposal, however many revisions it has.
    assert third.content_hash == canonical_hash(
        {"kind": "snippet", "name": "Timer v3", "files": v3}
        | {"revision_of": str(root.pk), "iteration": 3}
    )


def test_a_revision_of_an_update_still_names_the_app_and_its_revision(apps, agent, files):
    first = update(apps[0], agent, changed(files, "v2")).proposal
    v3 = changed(files, "v3")
    revision = revise(agent, first, v3).proposal
    line = {"revision_of": str(first.pk), "iteration": 2}
    target = {"update_of": str(apps[0].pk), "base_revision": 1}
    assert revision.content_hash == canonical_hash(
        {"kind": "snippet", "name": "Timer", "files": v3} | line | target
    )


def test_a_revision_takes_the_name_it_is_given_or_keeps_its_own(room, agent, files):
    root = propose(room, agent, files, name="Timer")
    renamed = revise(agent, root, changed(files, "v2"), name="Standup timer").proposal
    kept = revise(agent, renamed, changed(files, "v3"), key="revise-0002").proposal
    assert (renamed.name, kept.name) == ("Standup timer", "Standup timer")
    assert read_proposal(agent, kept.pk)["name"] == "Standup timer"
