"""Updates of approved apps, revisions, "Request changes" and what the proposer reads back."""

import pytest

from osfoundry.errors import Conflict, Forbidden, Invalid, NotFound
from rooms.events import room_events_after
from rooms.models import AppRevision, LauncherApp, Proposal, ReviewComment
from rooms.review import revisions
from rooms.review.revisions import propose_update, read_proposal, request_changes, revise_proposal
from rooms.services import approve_proposal, decline_proposal
from tests.rooms.helpers import changed, propose, update


@pytest.fixture
def app(room, owner, agent, files):
    return approve_proposal(owner=owner, proposal_id=propose(room, agent, files).pk)


def test_an_update_names_its_app_and_base_revision(app, agent, files):
    result = update(app, agent, changed(files, "v2"))
    proposal = result.proposal
    assert result.is_new and proposal.is_pending
    assert proposal.app_id == app.pk and proposal.base_revision == 1
    assert proposal.name == app.name  # the name defaults to the app's
    data = result.as_dict()
    assert data["instance_id"] == str(app.pk) and data["base_revision"] == 1


def test_an_update_is_idempotent_and_collapses_identical_content(app, agent, files):
    first = update(app, agent, changed(files, "v2"))
    replay = update(app, agent, changed(files, "v2"))
    assert replay.replay and replay.proposal.pk == first.proposal.pk
    again = update(app, agent, changed(files, "v2"), key="update-0002")
    assert again.duplicate_of_pending and again.proposal.pk == first.proposal.pk
    assert Proposal.objects.filter(app=app, status="pending").count() == 1


def test_an_update_with_the_same_key_and_other_content_is_a_conflict(app, agent, files):
    update(app, agent, changed(files, "v2"))
    with pytest.raises(Conflict):
        update(app, agent, changed(files, "v3"))


def test_an_update_identical_to_the_current_revision_is_refused(app, agent, files):
    with pytest.raises(Invalid) as caught:
        update(app, agent, files)
    assert caught.value.field == "files"
    assert "identical to “Standup timer” v1; nothing to review" in caught.value.message
    assert not Proposal.objects.filter(app=app, status="pending").exists()


def test_an_update_obeys_the_snippet_rules_and_the_run_check(app, agent, files):
    with pytest.raises(Invalid) as caught:
        update(app, agent, {**files, "src/App.tsx": 'import pad from "left-pad";\n'})
    assert caught.value.code == "not_runnable"
    with pytest.raises(Invalid) as caught:
        update(app, agent, {"../evil.ts": "x"})
    assert caught.value.code == "invalid_files"
    assert not Proposal.objects.filter(app=app, status="pending").exists()


def test_strangers_and_unknown_apps_get_not_found(app, stranger, agent, files):
    with pytest.raises(NotFound):
        update(app, stranger, changed(files, "v2"))
    with pytest.raises(NotFound) as caught:
        propose_update(
            caller=agent,
            room_id=str(app.room_id),
            instance_id="00000000-0000-0000-0000-000000000000",
            files=changed(files, "v2"),
            idempotency_key="update-0001",
        )
    assert caught.value.field == "instance_id"


def test_approving_an_update_replaces_the_app_in_place(app, owner, agent, files):
    proposal = update(app, agent, changed(files, "v2"), name="Timer v2").proposal
    approved = approve_proposal(owner=owner, proposal_id=proposal.pk)
    assert approved.pk == app.pk
    app.refresh_from_db()
    assert (app.revision, app.position, app.name) == (2, 0, "Timer v2")
    assert app.proposal_id == proposal.pk
    assert LauncherApp.objects.filter(room=app.room).count() == 1  # no second tab
    assert list(app.revisions.order_by("number").values_list("number", "proposal_id")) == [
        (1, app.revisions.get(number=1).proposal_id),
        (2, proposal.pk),
    ]
    types = [e["type"] for e in room_events_after(owner, app.room_id)["events"]]
    assert types[-2:] == ["proposal.approved", "app.updated"]
    updated = room_events_after(owner, app.room_id)["events"][-1]
    assert updated["instance_id"] == str(app.pk) and updated["revision"] == 2


def test_an_update_of_an_app_that_moved_on_is_refused(app, owner, agent, files):
    first = update(app, agent, changed(files, "a"), key="update-000a").proposal
    second = update(app, agent, changed(files, "b"), key="update-000b").proposal
    approve_proposal(owner=owner, proposal_id=first.pk)
    with pytest.raises(Conflict) as caught:
        approve_proposal(owner=owner, proposal_id=second.pk)
    assert caught.value.code == "stale_revision"
    assert "moved on to v2 since you read v1" in caught.value.message
    second.refresh_from_db()
    assert second.is_pending
    # Reviewed against where the app is now (the card's diff), the decision stands.
    approve_proposal(owner=owner, proposal_id=second.pk, base_revision=2)
    app.refresh_from_db()
    assert app.revision == 3 and app.proposal_id == second.pk


def test_request_changes_records_comments_and_an_event(app, owner, agent, files):
    proposal = update(app, agent, changed(files, "v2")).proposal
    comments = [
        {"path": "src/App.tsx", "line_start": 5, "line_end": 5, "body": "Name this constant"},
        {"path": "src/App.tsx", "line_start": 1, "line_end": 2, "body": "Import order"},
    ]
    request_changes(owner=owner, proposal_id=proposal.pk, summary="Two nits", comments=comments)
    proposal.refresh_from_db()
    assert proposal.status == "changes_requested" and proposal.decided_by == owner
    assert proposal.changes_summary == "Two nits" and proposal.decline_reason == ""
    assert ReviewComment.objects.filter(proposal=proposal).count() == 2
    event = room_events_after(owner, app.room_id)["events"][-1]
    assert event["type"] == "proposal.changes_requested"
    assert event["comment_count"] == 2 and event["reason"] == "Two nits"
    # Not in the launcher: the app still runs rev 1.
    app.refresh_from_db()
    assert app.revision == 1


@pytest.mark.parametrize(
    ("comments", "summary", "expected"),
    [
        ([], "", "summary: say what to change"),
        ([{"path": "nope.ts", "line_start": 1, "line_end": 1, "body": "x"}], "", "not a file"),
        ([{"path": "src/App.tsx", "line_start": 0, "line_end": 1, "body": "x"}], "", "within 1–"),
        ([{"path": "src/App.tsx", "line_start": 3, "line_end": 2, "body": "x"}], "", "within 1–"),
        ([{"path": "src/App.tsx", "line_start": 1, "line_end": 1, "body": " "}], "", "body"),
        (["not an object"], "", "must be an object"),
        ([], "x" * 1001, "summary: at most 1,000"),
    ],
)
def test_bad_reviews_are_refused_and_store_nothing(
    app, owner, agent, files, comments, summary, expected
):
    proposal = update(app, agent, changed(files, "v2")).proposal
    with pytest.raises(Invalid) as caught:
        request_changes(owner=owner, proposal_id=proposal.pk, summary=summary, comments=comments)
    assert expected in caught.value.message
    proposal.refresh_from_db()
    assert proposal.is_pending and not ReviewComment.objects.exists()


def test_only_the_owner_requests_changes(app, member, stranger, agent, files):
    proposal = update(app, agent, changed(files, "v2")).proposal
    app.room.members.remove(agent)
    with pytest.raises(Forbidden):
        request_changes(owner=agent, proposal_id=proposal.pk, summary="mine")
    for other in (member, stranger):
        with pytest.raises(NotFound):
            request_changes(owner=other, proposal_id=proposal.pk, summary="not yours")
    proposal.refresh_from_db()
    assert proposal.is_pending


def test_a_revision_continues_the_line_and_outdates_changed_lines(app, owner, agent, files):
    v2 = changed(files, "v2")
    proposal = update(app, agent, v2).proposal
    lines = v2["src/App.tsx"].split("\n")
    last = len(lines) - 1  # the "// v2" line
    request_changes(
        owner=owner,
        proposal_id=proposal.pk,
        comments=[
            {"path": "src/App.tsx", "line_start": 1, "line_end": 1, "body": "keep"},
            {"path": "src/App.tsx", "line_start": last, "line_end": last, "body": "rename"},
        ],
    )
    v3 = {**v2, "src/App.tsx": v2["src/App.tsx"].replace("// v2", "// v3")}
    result = revise_proposal(
        caller=agent, proposal_id=str(proposal.pk), files=v3, idempotency_key="revise-0001"
    )
    revision = result.proposal
    assert revision.previous_id == proposal.pk and revision.iteration == 2
    assert revision.app_id == app.pk and revision.base_revision == 1 and revision.is_pending
    review = read_proposal(agent, revision.pk)
    assert [(c["line_start"], c["outdated"]) for c in review["comments"]] == [
        (1, False),
        (last, True),
    ]
    assert [r["status"] for r in review["revisions"]] == ["changes_requested", "pending"]
    assert review["latest_proposal_id"] == str(revision.pk)
    # The earlier revision's read says where the line went, and its decision.
    earlier = read_proposal(agent, proposal.pk)
    assert earlier["decision"]["status"] == "changes_requested"
    assert earlier["decision"]["by"] == "owner"
    assert earlier["latest_proposal_id"] == str(revision.pk)


def test_a_pending_proposal_revised_leaves_the_inbox(room, owner, agent, files):
    first = propose(room, agent, files)
    revision = revise_proposal(
        caller=agent,
        proposal_id=str(first.pk),
        files=changed(files, "again"),
        idempotency_key="revise-0001",
    ).proposal
    first.refresh_from_db()
    assert first.status == "superseded"
    assert list(Proposal.objects.pending().filter(room=room)) == [revision]
    event = room_events_after(owner, room.pk)["events"][-1]
    assert event["previous_proposal_id"] == str(first.pk)


def test_only_the_latest_revision_of_ones_own_open_proposal_is_revised(
    room, owner, agent, member, files
):
    first = propose(room, agent, files)
    revise_proposal(
        caller=agent,
        proposal_id=str(first.pk),
        files=changed(files, "2"),
        idempotency_key="rev-0002",
    )
    with pytest.raises(Conflict) as caught:
        revise_proposal(
            caller=agent,
            proposal_id=str(first.pk),
            files=changed(files, "3"),
            idempotency_key="rev-0003",
        )
    assert caught.value.code == "already_revised"
    with pytest.raises(NotFound):
        revise_proposal(
            caller=member,
            proposal_id=str(first.pk),
            files=changed(files, "4"),
            idempotency_key="rev-0004",
        )
    with pytest.raises(Invalid) as caught:
        latest = Proposal.objects.get(previous=first)
        revise_proposal(
            caller=agent, proposal_id=str(latest.pk), files=latest.files, idempotency_key="rev-5"
        )
    assert "identical to revision 2" in caught.value.message


def test_revising_an_earlier_revision_names_the_latest_one(room, agent, files):
    first = propose(room, agent, files)
    second = revise_proposal(
        caller=agent, proposal_id=str(first.pk), files=changed(files, "2"), idempotency_key="rev-2"
    ).proposal
    third = revise_proposal(
        caller=agent, proposal_id=str(second.pk), files=changed(files, "3"), idempotency_key="rev-3"
    ).proposal
    propose(room, agent, changed(files, "another app"), key="other-0001")  # a line of its own
    with pytest.raises(Conflict) as caught:
        revise_proposal(
            caller=agent,
            proposal_id=str(first.pk),
            files=changed(files, "4"),
            idempotency_key="rev-4",
        )
    assert (caught.value.code, caught.value.field) == ("already_revised", "proposal_id")
    assert caught.value.message == (
        f"Proposal {str(first.pk)!r} was already revised; revise its latest revision, "
        f"{str(third.pk)!r}"
    )
    assert Proposal.objects.filter(previous=third).count() == 0


def test_a_proposal_approved_while_it_was_revised_is_refused_under_the_lock(
    room, owner, agent, files, monkeypatch
):
    first = propose(room, agent, files)
    seen_pending = Proposal.objects.get(pk=first.pk)  # what the revision read before the lock
    approve_proposal(owner=owner, proposal_id=first.pk)
    monkeypatch.setattr(revisions, "get_proposal_for_user", lambda caller, pk: seen_pending)
    with pytest.raises(Conflict) as caught:
        revise_proposal(
            caller=agent,
            proposal_id=str(first.pk),
            files=changed(files, "late"),
            idempotency_key="rev-1",
        )
    assert (caught.value.code, caught.value.field) == ("already_decided", "proposal_id")
    assert caught.value.message == (
        "This proposal was approved; propose an update of its app instead (propose_room_app_update)"
    )
    assert list(Proposal.objects.values_list("pk", "status")) == [(first.pk, "approved")]


def test_an_approved_proposal_is_not_revised(app, agent, files):
    with pytest.raises(Conflict) as caught:
        revise_proposal(
            caller=agent,
            proposal_id=str(app.proposal_id),
            files=changed(files, "late"),
            idempotency_key="revise-0001",
        )
    assert "propose an update of its app instead" in caught.value.message


def test_a_declined_line_can_continue(room, owner, agent, files):
    first = propose(room, agent, files)
    decline_proposal(owner=owner, proposal_id=first.pk, reason="colours")
    revision = revise_proposal(
        caller=agent,
        proposal_id=str(first.pk),
        files=changed(files, "b"),
        idempotency_key="rev-0001",
    ).proposal
    first.refresh_from_db()
    assert first.status == "declined" and revision.is_pending


def test_read_proposal_is_for_the_proposer_and_the_owner_only(app, owner, member, agent, files):
    proposal = update(app, agent, changed(files, "v2")).proposal
    assert read_proposal(owner, proposal.pk)["status"] == "pending"
    assert read_proposal(agent, proposal.pk)["decision"] is None
    with pytest.raises(NotFound):
        read_proposal(member, proposal.pk)


def test_the_first_revision_of_existing_apps_is_recorded(app):
    (revision,) = AppRevision.objects.filter(app=app)
    assert revision.number == 1 and revision.proposal_id == app.proposal_id


def test_a_superseded_revision_cannot_be_decided(room, owner, agent, files):
    first = propose(room, agent, files)
    revise_proposal(
        caller=agent,
        proposal_id=str(first.pk),
        files=changed(files, "b"),
        idempotency_key="rev-0001",
    )
    for decide in (approve_proposal, decline_proposal, request_changes):
        with pytest.raises(Conflict) as caught:
            decide(owner=owner, proposal_id=first.pk)
        assert caught.value.code == "superseded"
    first.refresh_from_db()
    assert first.status == "superseded" and not LauncherApp.objects.exists()


def test_too_many_comments_are_refused(app, owner, agent, files):
    proposal = update(app, agent, changed(files, "v2")).proposal
    comment = {"path": "src/App.tsx", "line_start": 1, "line_end": 1, "body": "x"}
    with pytest.raises(Invalid) as caught:
        request_changes(owner=owner, proposal_id=proposal.pk, comments=[comment] * 201)
    assert "comments: at most 200" in caught.value.message


def test_a_comment_on_a_file_the_next_revision_removed_is_outdated(room, owner, agent, files):
    extra = {**files, "src/util.ts": "export const step = 1;\n"}
    first = propose(room, agent, extra, key="key-util-001")
    request_changes(
        owner=owner,
        proposal_id=first.pk,
        comments=[{"path": "src/util.ts", "line_start": 1, "line_end": 1, "body": "drop it"}],
    )
    revise_proposal(
        caller=agent, proposal_id=str(first.pk), files=files, idempotency_key="rev-util-01"
    )
    (comment,) = read_proposal(agent, first.pk)["comments"]
    assert comment["outdated"] is True
