"""Request changes on a repository proposal: the owner comments on the lines of the files the
Room would run (src/), the agent reads the review (read_room_proposal, its task's completion),
pushes a fix and proposes the new pinned version, which continues the same card as revision 2."""

import asyncio
import json

import pytest
from django.test import Client
from django.urls import reverse

from osfoundry.errors import Invalid
from rooms import events
from rooms.models import Proposal, ProposalTask, ReviewComment, RoomEvent
from rooms.review.revisions import read_proposal, request_changes
from tests.mcpclient import call_tool
from tests.mcptasks import listening, propose_as_task, tasks_client
from tests.rooms.helpers import pin, propose_version

COMMENT = {"path": "src/App.tsx", "line_start": 2, "line_end": 3, "body": "Import the tokens"}


def version_of(repository, files, commit):
    return pin(repository, files | {"README.md": "x"}, commit)


def fixed(files):
    return {**files, "src/App.tsx": files["src/App.tsx"] + "\n// tokens imported\n"}


def test_the_owner_requests_changes_on_a_repository_proposal_line_by_line(
    room, owner, agent, repository, files, django_capture_on_commit_callbacks
):
    proposal = propose_version(room, agent, version_of(repository, files, "a"), "repo-key-1")
    with django_capture_on_commit_callbacks(execute=True):
        sent_back = request_changes(
            owner=owner,
            proposal_id=proposal.pk,
            content_hash=proposal.content_hash,
            summary="Almost",
            comments=[COMMENT],
        )
    assert sent_back.status == Proposal.Status.CHANGES_REQUESTED
    assert (sent_back.decided_by, sent_back.changes_summary) == (owner, "Almost")
    (comment,) = ReviewComment.objects.filter(proposal=proposal)
    assert (comment.path, comment.line_start, comment.line_end) == ("src/App.tsx", 2, 3)
    event = RoomEvent.objects.filter(room=room).latest("sequence")
    assert event.type == events.PROPOSAL_CHANGES_REQUESTED
    assert event.payload["comment_count"] == 1 and event.payload["reason"] == "Almost"

    review = read_proposal(agent, proposal.pk)
    assert review["status"] == "changes_requested"
    assert [(c["path"], c["body"], c["outdated"]) for c in review["comments"]] == [
        ("src/App.tsx", "Import the tokens", False)
    ]
    assert review["next_step"] == (
        "Push the changes to the repository timer, then propose the new pinned version to this "
        f"Room with propose_room_repo_app (REST: POST /api/v1/rooms/{room.pk}/proposals/repo): "
        "it continues this card as revision 2."
    )


def test_the_next_version_continues_the_card_as_its_second_revision(
    client, room, owner, agent, repository, files
):
    first = propose_version(room, agent, version_of(repository, files, "a"), "repo-key-1")
    request_changes(owner=owner, proposal_id=first.pk, summary="", comments=[COMMENT])
    second = propose_version(room, agent, version_of(repository, fixed(files), "b"), "repo-key-2")
    assert second.previous_id == first.pk and second.iteration == 2 and second.is_pending
    first.refresh_from_db()
    assert first.status == Proposal.Status.CHANGES_REQUESTED  # its decision stays on record
    assert "next_step" not in read_proposal(agent, first.pk)  # answered

    client.force_login(owner)
    html = client.get(reverse("rooms:proposal", args=[second.pk])).content.decode()
    assert "Changes since your last review (revision 1, aaaaaaaaaaaa)" in html
    assert "Revisions:" in html and "1 · changes requested" in html
    assert "Review comments (1)" in html and "Import the tokens" in html
    # Lines 2–3 read the same in revision 2: the comment sits beside them on this card.
    assert 'data-on-card data-author="owner"' in html
    old = client.get(reverse("rooms:proposal", args=[first.pk])).content.decode()
    assert "Go to the latest revision (2, pending)" in old


def test_the_same_version_again_is_refused_while_changes_are_requested(
    room, owner, agent, repository, files
):
    version = version_of(repository, files, "a")
    first = propose_version(room, agent, version, "repo-key-1")
    request_changes(owner=owner, proposal_id=first.pk, summary="Smaller, please")
    with pytest.raises(Invalid) as caught:
        propose_version(room, agent, version, "repo-key-2")
    assert (caught.value.code, caught.value.field) == ("unchanged", "version_id")
    assert caught.value.message == (
        "version_id: revision 1 of “Timer” is this version, and its owner requested changes; "
        "push a new commit and propose that version"
    )
    assert Proposal.objects.count() == 1


def test_another_agents_version_starts_a_card_of_its_own(
    room, owner, agent, member, repository, files
):
    first = propose_version(room, agent, version_of(repository, files, "a"), "repo-key-1")
    request_changes(owner=owner, proposal_id=first.pk, summary="Smaller, please")
    room.project.members.add(member)
    other = propose_version(room, member, version_of(repository, fixed(files), "b"), "repo-key-2")
    assert other.previous_id is None and other.iteration == 1


def test_a_repository_card_sends_its_line_comments_as_the_snippet_card_does(
    client, room, owner, agent, repository, files
):
    proposal = propose_version(room, agent, version_of(repository, files, "a"), "repo-key-1")
    client.force_login(owner)
    response = client.post(
        reverse("rooms:request_changes", args=[proposal.pk]),
        {
            "content_hash": proposal.content_hash,
            "summary": "See the comment",
            "comments": json.dumps([COMMENT]),
        },
    )
    assert response.status_code == 302
    proposal.refresh_from_db()
    assert proposal.status == Proposal.Status.CHANGES_REQUESTED
    assert proposal.comments.count() == 1
    # A comment on a file the Room does not run is refused with the field, and nothing stored.
    other = propose_version(room, agent, version_of(repository, fixed(files), "b"), "repo-key-2")
    refused = client.post(
        reverse("rooms:request_changes", args=[other.pk]),
        {
            "content_hash": other.content_hash,
            "comments": json.dumps([COMMENT | {"path": "README.md", "line_end": 2}]),
        },
    )
    assert refused.status_code == 400
    assert "comments[0].path: &#x27;README.md&#x27; is not a file of this proposal" in (
        refused.content.decode()
    )
    other.refresh_from_db()
    assert other.is_pending and not other.comments.exists()


def test_the_agent_reads_the_review_over_mcp_and_answers_with_the_next_version(
    asgi_server, room, owner, agent, repository, files, token_factory
):
    token = token_factory(agent)
    first = propose_version(room, agent, version_of(repository, files, "a"), "repo-key-1")
    request_changes(owner=owner, proposal_id=first.pk, summary="One thing", comments=[COMMENT])
    review = call_tool(
        asgi_server.mcp_url, token, "read_room_proposal", {"proposal_id": str(first.pk)}
    ).structured_content
    assert review["status"] == "changes_requested" and review["kind"] == "repo"
    assert review["decision"]["reason"] == "One thing"
    assert [c["body"] for c in review["comments"]] == ["Import the tokens"]
    assert "propose_room_repo_app" in review["next_step"]

    second = version_of(repository, fixed(files), "b")
    answer = call_tool(
        asgi_server.mcp_url,
        token,
        "propose_room_repo_app",
        {
            "room_id": str(room.pk),
            "name": "Timer",
            "repository_id": str(repository.pk),
            "version_id": str(second.pk),
            "idempotency_key": "repo-key-2",
        },
    ).structured_content
    assert answer["previous_proposal_id"] == str(first.pk) and answer["revision"] == 2


def test_requested_changes_complete_a_repository_proposals_task_with_the_way_to_answer(
    asgi_server, room, owner, agent, repository, files, token_factory
):
    token = token_factory(agent)
    version = version_of(repository, files, "a")
    arguments = {
        "room_id": str(room.pk),
        "name": "Timer",
        "repository_id": str(repository.pk),
        "version_id": str(version.pk),
        "idempotency_key": "repo-task-0001",
    }

    def decide(task_id):
        proposal = ProposalTask.objects.select_related("proposal").get(pk=task_id).proposal
        console = Client()
        console.force_login(owner)
        response = console.post(
            reverse("rooms:request_changes", args=[proposal.pk]),
            {
                "content_hash": proposal.content_hash,
                "summary": "Tokens",
                "comments": json.dumps([COMMENT]),
            },
        )
        assert response.status_code == 302

    async def scenario():
        async with tasks_client(asgi_server.mcp_url, token) as (client, extension):
            created = await propose_as_task(client, "propose_room_repo_app", arguments)
            async with listening(client.session, extension, [created.task_id]):
                await asyncio.to_thread(decide, created.task_id)
                return await extension.notices.get()

    notice = asyncio.run(asyncio.wait_for(scenario(), 60))
    assert notice.status == "completed"
    data = notice.result["structuredContent"]
    assert data["status"] == "changes_requested"
    assert [c["path"] for c in data["comments"]] == ["src/App.tsx"]
    assert notice.status_message == (
        "owner requested changes (1 line comments in comments): Tokens. Push the changes, then "
        "propose the new pinned version to this Room with propose_room_repo_app: it continues "
        "this card; the revision is a task of its own."
    )
