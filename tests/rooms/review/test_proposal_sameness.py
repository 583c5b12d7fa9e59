"""What makes two proposals the same: the key's arguments (a retry) and the card's content (a
duplicate of what is pending). Every argument counts: a name or a Room that differs makes a
reused key a conflict and identical files a new card."""

import pytest

from osfoundry.errors import Conflict
from rooms.models import Proposal
from rooms.runtime import verdicts
from rooms.services import approve_proposal, propose_snippet


def propose(room, agent, files, key, name="Standup timer"):
    return propose_snippet(
        caller=agent, room_id=str(room.pk), name=name, files=files, idempotency_key=key
    )


def test_a_key_reused_under_another_name_is_a_conflict(room, agent, files):
    first = propose(room, agent, files, "key-000001", name="Standup timer")
    with pytest.raises(Conflict) as error:
        propose(room, agent, files, "key-000001", name="Standup clock")
    assert error.value.code == "idempotency_key_reused"
    assert str(first.proposal.pk) in error.value.message
    assert list(Proposal.objects.values_list("name", flat=True)) == ["Standup timer"]


def test_a_key_reused_in_another_room_is_a_conflict(room, room_factory, agent, files):
    other = room_factory(name="Team Heron", members=[agent])
    propose(room, agent, files, "key-000001")
    with pytest.raises(Conflict) as error:
        propose(other, agent, files, "key-000001")
    assert error.value.code == "idempotency_key_reused"
    assert not other.proposals.exists()


def test_the_same_files_under_another_name_are_a_new_card(room, agent, files):
    first = propose(room, agent, files, "key-000001", name="Standup timer")
    second = propose(room, agent, files, "key-000002", name="Standup clock")
    assert second.is_new and second.proposal.pk != first.proposal.pk
    assert first.proposal.content_hash != second.proposal.content_hash
    assert Proposal.objects.pending().count() == 2


def test_the_same_content_in_another_room_is_a_new_card_there(room, room_factory, agent, files):
    other = room_factory(name="Team Heron", members=[agent])
    first = propose(room, agent, files, "key-000001")
    second = propose(other, agent, files, "key-000002")
    assert second.is_new and second.proposal.room == other
    assert first.proposal.content_hash == second.proposal.content_hash  # same content, two Rooms


def test_the_card_counts_files_and_utf8_bytes(room, agent):
    files = {"src/App.tsx": "export default () => 'é';", "src/b.css": "p{}"}
    proposal = propose(room, agent, files, "key-000001").proposal
    proposal.refresh_from_db()
    assert (proposal.file_count, proposal.total_bytes) == (2, 26 + 3)


def test_a_long_summary_is_cut_to_what_the_tab_keeps(room, owner, agent, files):
    # Ten files the entry never loads, each named at length: the sentence runs past 500.
    unused = {f"src/{'n' * 60}{i}.ts": "export const x = 1;" for i in range(10)}
    proposal = propose(room, agent, {**files, **unused}, "key-000001").proposal
    proposal.refresh_from_db()
    summary = verdicts.summary(verdicts.of(proposal))  # the card's, whole
    assert summary.startswith("src/App.tsx and the ") and len(summary) > 500
    assert all(path in summary for path in unused)
    app = approve_proposal(owner=owner, proposal_id=proposal.pk)
    assert app.build_detail == f"Checked when proposed: {summary}"[:500]
