"""The owner's line comments of "Request changes": their limits, the problems a review is refused
for (each comment's first, every comment checked), and how the proposer reads them back."""

import pytest

from osfoundry.errors import Invalid
from rooms.events import room_events_after
from rooms.models import ReviewComment
from rooms.review.revisions import read_proposal, request_changes, revise_proposal
from tests.rooms.helpers import propose

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
