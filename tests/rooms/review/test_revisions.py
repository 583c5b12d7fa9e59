"""Updates of approved apps, revisions, "Request changes" and what the proposer reads back
(rooms/review/revisions.py): each rule, and each refusal word for word (its field, its code, how
to go on, nothing stored); the owner's line comments, their limits, the problems a review is
refused for (each comment's first, every comment checked), and how the proposer reads them."""

import pytest

from osfoundry.errors import Conflict, Forbidden, Invalid, NotFound, Unavailable
from rooms.events import room_events_after
from rooms.models import (
    AppRevision,
    LauncherApp,
    Proposal,
    ProposalKey,
    ReviewComment,
    Room,
)
from rooms.review import revisions
from rooms.review.revisions import propose_update, read_proposal, request_changes, revise_proposal
from rooms.services import approve_proposal, decline_proposal
from tests.rooms.helpers import changed, propose, propose_version, stored_version, update


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


# What updates, revisions and Request changes refuse, word for word.


@pytest.fixture
def repo_proposal(room, agent, files):
    version = stored_version(room.project, files, "a" * 40)
    return propose_version(room, agent, version, "repo-key-0001", name="Timer from repo")


def revise(caller, proposal, files, key="revise-0001"):
    return revise_proposal(
        caller=caller, proposal_id=str(proposal.pk), files=files, idempotency_key=key
    )


def test_a_repository_app_is_not_updated_with_files(room, owner, agent, files, repo_proposal):
    app = approve_proposal(owner=owner, proposal_id=repo_proposal.pk)
    with pytest.raises(Invalid) as caught:
        update(app, agent, changed(files, "v2"))
    assert (caught.value.code, caught.value.field) == ("invalid", "instance_id")
    assert caught.value.message == (
        "instance_id: a repository app is updated by proposing a new pinned version "
        "(propose_room_repo_app)"
    )
    assert list(Proposal.objects.values_list("status", flat=True)) == ["approved"]
    assert not ProposalKey.objects.filter(operation="propose_update").exists()


def test_an_update_identical_to_the_running_revision_is_refused_as_unchanged(
    room, owner, agent, files
):
    app = approve_proposal(owner=owner, proposal_id=propose(room, agent, files).pk)
    with pytest.raises(Invalid) as caught:
        update(app, agent, files)
    assert (caught.value.code, caught.value.field) == ("unchanged", "files")
    assert caught.value.message == ("files: identical to “Standup timer” v1; nothing to review")
    assert not Proposal.objects.filter(app=app, status="pending").exists()


def test_the_owner_cannot_revise_the_agents_proposal(room, owner, agent, files):
    proposal = propose(room, agent, files)
    with pytest.raises(NotFound) as caught:
        revise(owner, proposal, changed(files, "mine"))
    assert (caught.value.code, caught.value.field) == ("not_found", "proposal_id")
    # The same answer as for a proposal that does not exist: nothing is given away.
    assert caught.value.message == f"Proposal {str(proposal.pk)!r} not found"
    assert list(Proposal.objects.values_list("pk", "status")) == [(proposal.pk, "pending")]


def turn_local(room):
    """What the admin can do to a cloud Room that already has proposals and apps."""
    room.kind = Room.Kind.LOCAL
    room.save(update_fields=["kind"])


def assert_local_room_refused(caught):
    assert (caught.value.code, caught.value.field) == ("local_room", "room_id")
    assert caught.value.message == "Local Rooms are unavailable"


def test_a_proposal_in_a_room_turned_local_is_not_revised(room, agent, files):
    proposal = propose(room, agent, files)
    turn_local(room)
    with pytest.raises(Unavailable) as caught:
        revise(agent, proposal, changed(files, "v2"))
    assert_local_room_refused(caught)
    assert list(Proposal.objects.values_list("pk", "status")) == [(proposal.pk, "pending")]
    assert not ProposalKey.objects.filter(operation="revise_proposal").exists()


def test_an_app_in_a_room_turned_local_is_not_updated(room, owner, agent, files):
    app = approve_proposal(owner=owner, proposal_id=propose(room, agent, files).pk)
    turn_local(room)
    with pytest.raises(Unavailable) as caught:
        update(app, agent, changed(files, "v2"))
    assert_local_room_refused(caught)
    assert list(Proposal.objects.values_list("status", flat=True)) == ["approved"]


def test_a_repository_proposal_is_not_revised(agent, files, repo_proposal):
    with pytest.raises(Invalid) as caught:
        revise(agent, repo_proposal, changed(files, "v2"))
    assert (caught.value.code, caught.value.field) == ("invalid", "proposal_id")
    assert caught.value.message == (
        "proposal_id: a repository proposal is revised by pushing the changes and proposing "
        "the new pinned version to the same Room (propose_room_repo_app)"
    )
    assert list(Proposal.objects.values_list("status", flat=True)) == ["pending"]


def test_an_approved_proposal_is_refused_with_the_way_to_go_on(room, owner, agent, files):
    proposal = propose(room, agent, files)
    approve_proposal(owner=owner, proposal_id=proposal.pk)
    with pytest.raises(Conflict) as caught:
        revise(agent, proposal, changed(files, "late"))
    assert (caught.value.code, caught.value.field) == ("already_decided", "proposal_id")
    assert caught.value.message == (
        "This proposal was already approved; propose an update of its app instead"
    )
    assert Proposal.objects.count() == 1


def test_a_revision_identical_to_the_one_it_revises_is_refused(room, agent, files):
    proposal = propose(room, agent, files)
    with pytest.raises(Invalid) as caught:
        revise(agent, proposal, files)
    assert (caught.value.code, caught.value.field) == ("unchanged", "files")
    assert caught.value.message == "files: identical to revision 1; nothing to review"
    proposal.refresh_from_db()
    assert proposal.is_pending


def test_a_comment_on_a_repository_file_the_room_does_not_run_is_refused(owner, repo_proposal):
    # A repository card reviews what the Room runs (src/): a comment points into those files.
    comment = {"path": "README.md", "line_start": 1, "line_end": 1, "body": "Say more"}
    with pytest.raises(Invalid) as caught:
        request_changes(owner=owner, proposal_id=repo_proposal.pk, comments=[comment])
    assert (caught.value.code, caught.value.field) == ("invalid", "comments")
    assert caught.value.message == "comments[0].path: 'README.md' is not a file of this proposal"
    repo_proposal.refresh_from_db()
    assert repo_proposal.is_pending and repo_proposal.changes_summary == ""
    assert not ReviewComment.objects.exists()


def test_a_summary_of_exactly_one_thousand_characters_is_taken(room, owner, agent, files):
    proposal = propose(room, agent, files)
    request_changes(owner=owner, proposal_id=proposal.pk, summary=" " + "s" * 1000 + " ")
    proposal.refresh_from_db()
    assert proposal.status == "changes_requested" and proposal.changes_summary == "s" * 1000


def test_a_longer_summary_is_refused_naming_its_field(room, owner, agent, files):
    proposal = propose(room, agent, files)
    with pytest.raises(Invalid) as caught:
        request_changes(owner=owner, proposal_id=proposal.pk, summary="s" * 1001)
    assert (caught.value.field, caught.value.message) == (
        "summary",
        "summary: at most 1,000 characters",
    )
    proposal.refresh_from_db()
    assert proposal.is_pending


def test_a_review_with_nothing_to_say_is_refused_naming_the_summary(room, owner, agent, files):
    proposal = propose(room, agent, files)
    with pytest.raises(Invalid) as caught:
        request_changes(owner=owner, proposal_id=proposal.pk, summary="   ", comments=[])
    assert (caught.value.field, caught.value.message) == (
        "summary",
        "summary: say what to change, or comment on a line of the card",
    )
    proposal.refresh_from_db()
    assert proposal.is_pending and not ReviewComment.objects.exists()


# The owner's line comments.

APP = "src/App.tsx"


@pytest.fixture
def proposal(room, agent, files):
    return propose(room, agent, files)


def lines_of(proposal):
    return proposal.files[APP].count("\n") + 1


def comment(line_start=1, line_end=None, body="Rename this", path=APP):
    found = {"path": path, "line_start": line_start, "body": body}
    return found if line_end is None else found | {"line_end": line_end}


def review(owner, proposal, comments, summary=""):
    return request_changes(owner=owner, proposal_id=proposal.pk, summary=summary, comments=comments)


def refusal(owner, proposal, comments):
    with pytest.raises(Invalid) as caught:
        review(owner, proposal, comments)
    assert caught.value.field == "comments"
    proposal.refresh_from_db()
    assert proposal.is_pending and not ReviewComment.objects.exists()
    return caught.value.message


def test_two_hundred_comments_are_taken(owner, proposal):
    review(owner, proposal, [comment(body=f"nit {n}") for n in range(200)])
    assert ReviewComment.objects.filter(proposal=proposal).count() == 200
    event = room_events_after(owner, proposal.room_id)["events"][-1]
    assert (event["type"], event["comment_count"]) == ("proposal.changes_requested", 200)


def test_two_hundred_and_one_comments_are_refused_whole(owner, proposal):
    message = refusal(owner, proposal, [comment()] * 201)
    assert message == "comments: at most 200; send the rest with the next review"


def test_a_comment_of_five_thousand_characters_is_taken(owner, proposal):
    review(owner, proposal, [comment(body="b" * 5000)])
    assert ReviewComment.objects.get().body == "b" * 5000


def test_a_longer_comment_is_refused(owner, proposal):
    message = refusal(owner, proposal, [comment(body="b" * 5001)])
    assert message == "comments[0].body: write 1–5,000 characters"


def test_a_comment_is_stored_trimmed(owner, proposal):
    review(owner, proposal, [comment(body="  Rename this \n")])
    assert ReviewComment.objects.get().body == "Rename this"


def test_a_comment_without_an_end_line_is_on_its_start_line(owner, proposal):
    review(owner, proposal, [comment(line_start=3)])
    stored = ReviewComment.objects.get()
    assert (stored.line_start, stored.line_end) == (3, 3)


def test_a_comment_may_cover_the_last_line_and_no_further(owner, proposal):
    last = lines_of(proposal)
    message = refusal(owner, proposal, [comment(line_start=last, line_end=last + 1)])
    assert message == f"comments[0]: lines {last}–{last + 1} are not within 1–{last} of {APP}"
    review(owner, proposal, [comment(line_start=1, line_end=last)])
    stored = ReviewComment.objects.get()
    assert (stored.line_start, stored.line_end) == (1, last)


def test_each_comment_reports_its_first_problem_and_every_comment_is_checked(owner, proposal):
    last = lines_of(proposal)
    message = refusal(
        owner,
        proposal,
        [
            comment(path="nope.ts", line_start=0, body=""),
            ["not", "an", "object"],
            comment(line_start=2),
            comment(line_start=0, line_end=1, body=""),
            comment(line_start="1", line_end=1, body="x"),
            comment(line_start=1, line_end=2.0),
            comment(body=" "),
            comment(path=["src", "App.tsx"]),
        ],
    )
    assert message.split("; ") == [
        "comments[0].path: 'nope.ts' is not a file of this proposal",
        "comments[1]: must be an object with path, line_start, line_end, body",
        f"comments[3]: lines 0–1 are not within 1–{last} of {APP}",
        f"comments[4]: lines '1'–1 are not within 1–{last} of {APP}",
        f"comments[5]: lines 1–2.0 are not within 1–{last} of {APP}",
        "comments[6].body: write 1–5,000 characters",
        "comments[7].path: ['src', 'App.tsx'] is not a file of this proposal",
    ]


def test_the_proposer_reads_each_comment_whole(owner, agent, proposal):
    review(owner, proposal, [comment(line_start=2, line_end=4, body="Split this")], "One thing")
    proposal.refresh_from_db()
    data = read_proposal(agent, proposal.pk)
    (stored,) = ReviewComment.objects.all()
    assert data["comments"] == [
        {
            "proposal_id": str(proposal.pk),
            "revision": 1,
            "path": APP,
            "line_start": 2,
            "line_end": 4,
            "body": "Split this",
            "author": "owner",
            "created_at": stored.created_at.isoformat(),
            "outdated": False,
        }
    ]
    assert data["decision"] == {
        "status": "changes_requested",
        "by": "owner",
        "at": proposal.decided_at.isoformat(),
        "reason": "One thing",
    }
    # The summary is read under its own name; a change request is no decline.
    assert data["changes_summary"] == "One thing" and data["decline_reason"] is None
    assert data["revisions"] == [
        {"proposal_id": str(proposal.pk), "revision": 1, "status": "changes_requested"}
    ]
    assert data["latest_proposal_id"] == str(proposal.pk)
    assert data["proposal_id"] == str(proposal.pk) and "files" not in data


def test_a_review_without_a_summary_reads_as_no_reason(owner, agent, proposal):
    review(owner, proposal, [comment()])
    assert read_proposal(agent, proposal.pk)["decision"]["reason"] is None


def test_comments_read_in_the_order_they_were_written_across_revisions(
    owner, agent, files, proposal
):
    review(owner, proposal, [comment(line_start=5, body="first"), comment(body="second")])
    revised = {**files, APP: files[APP] + "// v2\n"}
    revision = revise_proposal(
        caller=agent, proposal_id=str(proposal.pk), files=revised, idempotency_key="revise-0001"
    ).proposal
    review(owner, revision, [comment(line_start=2, path=APP, body="third")])
    data = read_proposal(agent, proposal.pk)
    assert [(c["revision"], c["line_start"], c["body"]) for c in data["comments"]] == [
        (1, 5, "first"),
        (1, 1, "second"),
        (2, 2, "third"),
    ]
    assert [(r["revision"], r["status"]) for r in data["revisions"]] == [
        (1, "changes_requested"),
        (2, "changes_requested"),
    ]
    assert data["latest_proposal_id"] == str(revision.pk)
