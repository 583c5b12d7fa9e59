"""SPEC §4: a retry never creates a second card, whatever key style the client uses."""

import threading

import pytest
from django.db import IntegrityError, connection

from osfoundry.errors import Conflict
from osfoundry.idempotency import INSERT_ATTEMPTS
from rooms.models import Proposal, ProposalKey, RoomEvent
from rooms.services import proposal_request, propose_repo_version, propose_snippet
from tests.rooms.helpers import APP


def propose(room, agent, files, key, name="Standup timer"):
    return propose_snippet(
        caller=agent, room_id=str(room.pk), name=name, files=files, idempotency_key=key
    )


def test_same_key_same_arguments_is_a_replay(room, agent, files):
    first = propose(room, agent, files, "key-000001")
    again = propose(room, agent, files, "key-000001")
    assert again.replay and not first.replay
    assert again.proposal.pk == first.proposal.pk
    assert Proposal.objects.count() == 1
    assert RoomEvent.objects.count() == 1


def test_same_key_different_arguments_is_refused(room, agent, files):
    first = propose(room, agent, files, "key-000001")
    with pytest.raises(Conflict) as error:
        propose(room, agent, {**files, "src/extra.ts": "x"}, "key-000001")
    assert error.value.code == "idempotency_key_reused"
    assert error.value.field == "idempotency_key"
    assert error.value.message == (
        f"idempotency_key 'key-000001' was already used for a different request (proposal "
        f"{first.proposal.pk}); use a new key for new content, or resend the original "
        "arguments to get the original result"
    )
    assert Proposal.objects.count() == 1


def test_the_same_arguments_in_another_key_order_are_a_replay(room, agent, files):
    # JSON objects have no order: a client that rebuilds its files map differently on a retry
    # still sends the same request.
    first = propose(room, agent, files, "key-000001")
    again = propose(room, agent, dict(reversed(list(files.items()))), "key-000001")
    assert list(files) != list(dict(reversed(list(files.items()))))
    assert again.replay and again.proposal.pk == first.proposal.pk


def test_keys_are_scoped_per_caller(room, agent, member, files):
    propose(room, agent, files, "key-000001")
    other = propose(room, member, files, "key-000001")
    assert not other.replay
    assert Proposal.objects.count() == 2


def test_keys_are_scoped_per_operation(room, agent, files, project):
    from rooms.models import Repository, RepositoryVersion

    repo = Repository.objects.create(project=project, name="r")
    version = RepositoryVersion.objects.create(
        repository=repo, commit_hash="a" * 40, files={"src/App.tsx": APP}
    )
    propose(room, agent, files, "key-000001")
    result = propose_repo_version(
        caller=agent,
        room_id=str(room.pk),
        name="Repo app",
        repository_id=str(repo.pk),
        version_id=str(version.pk),
        idempotency_key="key-000001",
    )
    assert not result.replay
    assert Proposal.objects.count() == 2


def test_identical_pending_content_with_a_fresh_key_returns_the_same_card(room, agent, files):
    first = propose(room, agent, files, "random-key-1")
    second = propose(room, agent, files, "random-key-2")
    assert second.duplicate_of_pending and not second.replay
    assert second.proposal.pk == first.proposal.pk
    assert Proposal.objects.count() == 1
    # The fresh key is remembered: retrying it later replays even after a decision.
    assert ProposalKey.objects.filter(proposal=first.proposal).count() == 2


def test_the_answer_says_whether_it_is_new_a_replay_or_the_pending_card(room, agent, files):
    def told(result):
        data = result.as_dict()
        return data["replay"], data["duplicate_of_pending"], data["warnings"], data.get("note")

    first = propose(room, agent, files, "random-key-1")
    assert told(first) == (False, False, [], None)
    assert told(propose(room, agent, files, "random-key-1")) == (
        True,
        False,
        [],
        "Replay: this idempotency_key was already used with these arguments.",
    )
    assert told(propose(room, agent, files, "random-key-2")) == (
        False,
        True,
        [],
        "Identical content from you is already pending in this Room: same card.",
    )


def test_identical_content_after_a_decision_is_a_new_card(room, owner, agent, files):
    from rooms.services import decline_proposal

    first = propose(room, agent, files, "random-key-1")
    decline_proposal(owner=owner, proposal_id=first.proposal.pk)
    second = propose(room, agent, files, "random-key-2")
    assert second.proposal.pk != first.proposal.pk
    assert second.proposal.is_pending


def test_changed_content_is_a_new_card(room, agent, files):
    first = propose(room, agent, files, "random-key-1")
    second = propose(room, agent, {**files, "src/styles.css": "p{}"}, "random-key-2")
    assert second.proposal.pk != first.proposal.pk


def run_concurrently(count, fn):
    barrier = threading.Barrier(count)
    results, errors = [], []

    def worker(i):
        try:
            barrier.wait()
            results.append(fn(i))
        except Exception as error:  # collected and asserted below
            errors.append(error)
        finally:
            connection.close()

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    return results, errors


@pytest.mark.django_db(transaction=True)
def test_concurrent_requests_with_one_key_store_one_row(room, agent, files):
    results, errors = run_concurrently(8, lambda i: propose(room, agent, files, "same-key-01"))
    assert errors == []
    assert len({r.proposal.pk for r in results}) == 1
    assert sum(not r.replay for r in results) == 1
    assert Proposal.objects.count() == 1
    assert ProposalKey.objects.count() == 1
    assert RoomEvent.objects.count() == 1


@pytest.mark.django_db(transaction=True)
def test_concurrent_fresh_keys_with_identical_content_store_one_card(room, agent, files):
    results, errors = run_concurrently(8, lambda i: propose(room, agent, files, f"fresh-key-{i}"))
    assert errors == []
    assert len({r.proposal.pk for r in results}) == 1
    assert Proposal.objects.count() == 1
    assert ProposalKey.objects.count() == 8


def test_old_keys_of_decided_proposals_are_purged(room, owner, agent, files):
    from datetime import timedelta

    from django.utils import timezone

    from osfoundry.idempotency import purge_expired_keys
    from rooms.services import decline_proposal

    decided = propose(room, agent, files, "old-key-001").proposal
    decline_proposal(owner=owner, proposal_id=decided.pk)
    pending = propose(room, agent, {**files, "src/x.ts": "1"}, "old-key-002").proposal
    ProposalKey.objects.update(created_at=timezone.now() - timedelta(days=31))
    assert purge_expired_keys(older_than_days=30)["proposal key"] == 1
    assert list(ProposalKey.objects.values_list("key", flat=True)) == ["old-key-002"]
    assert Proposal.objects.filter(pk__in=[decided.pk, pending.pk]).count() == 2


def test_a_failed_insert_whose_key_row_is_gone_is_tried_again(room, agent, files):
    # The unique constraint stopped us, but the twin that held it rolled back: nothing to
    # replay, so the next pass stores ours.
    first = propose(room, agent, files, "twin-key-01").proposal
    request = proposal_request(agent, "propose_snippet", "twin-key-02", {"name": "x"})
    attempts = []

    def insert():
        attempts.append(len(attempts) + 1)
        if len(attempts) == 1:
            raise IntegrityError("UNIQUE constraint failed: the twin's row, since rolled back")
        request.record(first)
        return "stored"

    assert request.store(insert, replay=lambda previous: "replayed") == "stored"
    assert attempts == [1, 2]
    assert ProposalKey.objects.get(key="twin-key-02").proposal == first


def test_an_insert_that_never_gets_past_the_constraint_is_refused_as_busy(room, agent):
    request = proposal_request(agent, "propose_snippet", "busy-key-01", {"name": "x"})
    attempts = []

    def insert():
        attempts.append(1)
        raise IntegrityError("UNIQUE constraint failed")

    with pytest.raises(Conflict) as refused:
        request.store(insert, replay=lambda previous: "replayed")
    assert refused.value.code == "busy"
    assert refused.value.message == (
        "Too many concurrent requests with this key or content; retry in a moment"
    )
    assert len(attempts) == INSERT_ATTEMPTS
    assert not ProposalKey.objects.filter(key="busy-key-01").exists()
