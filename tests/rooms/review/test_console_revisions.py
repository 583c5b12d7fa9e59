"""The console's side of revisions: update cards with their diff, Request changes, the app's
history and rollback, and the owner's tab actions."""

import json

import pytest
from django.urls import reverse

from rooms.launcher.tabs import rollback_app
from rooms.models import LauncherApp, Proposal, ReviewComment, RoomEvent
from rooms.review.cards import MAX_COMMENTS_JSON_CHARS
from rooms.review.revisions import propose_update, request_changes, revise_proposal
from rooms.services import approve_proposal
from tests.rooms.helpers import changed, propose


@pytest.fixture
def app(room, owner, agent, files):
    return approve_proposal(owner=owner, proposal_id=propose(room, agent, files).pk)


def update(app, agent, files, marker, key=None):
    return propose_update(
        caller=agent,
        room_id=str(app.room_id),
        instance_id=str(app.pk),
        files=changed(files, marker),
        idempotency_key=key or f"update-{marker}-000",
    ).proposal


def card(client, user, proposal):
    client.force_login(user)
    return client.get(reverse("rooms:proposal", args=[proposal.pk]))


def test_an_update_card_shows_the_diff_against_the_approved_revision(
    client, owner, agent, app, files
):
    proposal = update(app, agent, files, "v2")
    html = card(client, owner, proposal).content.decode()
    assert "Changes since the approved version (v1)" in html
    assert "1 file changed" in html and "1 unchanged file" in html
    assert 'data-status="modified"' in html and "// v2" in html
    assert "Approve as v2, replacing v1" in html
    assert 'name="base_revision" value="1"' in html
    assert "Request changes" in html and "data-commentable" in html
    assert f'data-review-key="app-{app.pk}"' in html  # Viewed marks live per app
    assert "Review all proposed files" not in html  # the diff is the review
    assert 'id="file-hashes"' in html


def test_a_stale_update_card_diffs_against_where_the_app_is_now(client, owner, agent, app, files):
    first = update(app, agent, files, "a")
    second = update(app, agent, files, "b")
    approve_proposal(owner=owner, proposal_id=first.pk)
    html = card(client, owner, second).content.decode()
    assert "Changes since the approved version (v2)" in html
    assert "It was proposed against v1" in html
    client.post(
        reverse("rooms:approve", args=[second.pk]),
        {"content_hash": second.content_hash, "base_revision": "1"},
    )
    second.refresh_from_db()
    assert second.is_pending  # decided against rev 1, which is gone: refused
    response = client.post(
        reverse("rooms:approve", args=[second.pk]),
        {"content_hash": second.content_hash, "base_revision": "2"},
    )
    assert response.status_code == 302
    assert LauncherApp.objects.get(pk=app.pk).revision == 3


def test_request_changes_from_the_card(client, owner, agent, app, files):
    proposal = update(app, agent, files, "v2")
    client.force_login(owner)
    comments = [{"path": "src/App.tsx", "line_start": 3, "line_end": 4, "body": "Use a hook"}]
    response = client.post(
        reverse("rooms:request_changes", args=[proposal.pk]),
        {
            "content_hash": proposal.content_hash,
            "summary": "Almost",
            "comments": json.dumps(comments),
        },
        follow=True,
    )
    html = response.content.decode()
    assert "Changes requested on “Standup timer” (1 comment)" in html
    assert "Waiting for the agent’s revision" in html
    assert "Use a hook" in html and "lines 3–4" in html
    assert "Summary: Almost" in html and "Reason:" not in html
    proposal.refresh_from_db()
    assert proposal.status == "changes_requested"
    assert (proposal.changes_summary, proposal.decline_reason) == ("Almost", "")
    assert ReviewComment.objects.get().body == "Use a hook"


@pytest.mark.parametrize(
    ("comments", "expected"),
    [
        ("{not json", "comments: not valid JSON"),
        ('{"a": 1}', "comments: must be a list"),
        ('[{"path": "x.ts", "line_start": 1, "line_end": 1, "body": "b"}]', "not a file"),
        ("", "summary: say what to change"),
    ],
)
def test_a_bad_review_is_shown_on_the_card_and_stores_nothing(
    client, owner, agent, app, files, comments, expected
):
    proposal = update(app, agent, files, "v2")
    client.force_login(owner)
    response = client.post(
        reverse("rooms:request_changes", args=[proposal.pk]),
        {"content_hash": proposal.content_hash, "summary": "", "comments": comments},
    )
    assert response.status_code == 400
    assert expected in response.content.decode()
    proposal.refresh_from_db()
    assert proposal.is_pending and not ReviewComment.objects.exists()


def test_deeply_nested_comments_are_a_form_error_and_store_nothing(
    client, owner, agent, app, files
):
    # Nested past the parser's recursion limit: json.loads raised RecursionError, a 500.
    proposal = update(app, agent, files, "v2")
    client.force_login(owner)
    response = client.post(
        reverse("rooms:request_changes", args=[proposal.pk]),
        {"content_hash": proposal.content_hash, "summary": "Almost", "comments": "[" * 100_000},
    )
    assert response.status_code == 400
    assert response.context["decision_error"] == (
        "comments: JSON nested too deeply; reload the card and comment again"
    )
    assert "Almost" in response.content.decode()  # the summary is kept for the next press
    proposal.refresh_from_db()
    assert proposal.is_pending and not ReviewComment.objects.exists()


def test_comments_longer_than_any_review_are_refused_before_they_are_parsed(
    client, owner, agent, app, files
):
    proposal = update(app, agent, files, "v2")
    client.force_login(owner)
    comments = json.dumps(["x" * MAX_COMMENTS_JSON_CHARS])
    response = client.post(
        reverse("rooms:request_changes", args=[proposal.pk]),
        {"content_hash": proposal.content_hash, "summary": "", "comments": comments},
    )
    assert response.status_code == 400
    assert response.context["decision_error"] == (
        f"comments: {len(comments):,} characters, at most {MAX_COMMENTS_JSON_CHARS:,}; "
        "send the rest with the next review"
    )
    proposal.refresh_from_db()
    assert proposal.is_pending and not ReviewComment.objects.exists()


NUL_IN_TEXT = "control character U+0000 (NULL) is invisible where it is shown"
OVERRIDE_IN_TEXT = (
    "bidirectional control U+202E (RIGHT-TO-LEFT OVERRIDE) can make the text around it read "
    "differently than it is"
)


@pytest.mark.parametrize(
    ("summary", "body", "message"),
    [
        (
            "Use a\nhook\x00",
            "ok",
            f"summary: line 2, column 5: {NUL_IN_TEXT}; remove it from the summary",
        ),
        (
            "Use \u202ea hook",
            "ok",
            f"summary: column 5: {OVERRIDE_IN_TEXT}; remove it from the summary",
        ),
        ("", "a\x00b", f"comments[0].body: column 2: {NUL_IN_TEXT}; remove it from the comment"),
        (
            "",
            "see \u202e",
            f"comments[0].body: column 5: {OVERRIDE_IN_TEXT}; remove it from the comment",
        ),
    ],
    ids=["nul-in-summary", "override-in-summary", "nul-in-comment", "override-in-comment"],
)
def test_a_review_with_a_nul_or_a_bidirectional_control_is_a_form_error_naming_the_field(
    client, owner, agent, app, files, summary, body, message
):
    proposal = update(app, agent, files, "v2")
    client.force_login(owner)
    comments = [{"path": "src/App.tsx", "line_start": 1, "line_end": 1, "body": body}]
    response = client.post(
        reverse("rooms:request_changes", args=[proposal.pk]),
        {
            "content_hash": proposal.content_hash,
            "summary": summary,
            "comments": json.dumps(comments),
        },
    )
    assert response.status_code == 400
    assert response.context["decision_error"] == message
    assert message in response.content.decode()
    proposal.refresh_from_db()
    assert proposal.is_pending and not ReviewComment.objects.exists()


def test_members_cannot_request_changes(client, member, agent, app, files):
    proposal = update(app, agent, files, "v2")
    client.force_login(member)
    response = client.post(
        reverse("rooms:request_changes", args=[proposal.pk]),
        {"content_hash": proposal.content_hash, "summary": "no"},
    )
    assert response.status_code == 404
    proposal.refresh_from_db()
    assert proposal.is_pending


def test_a_revised_card_shows_changes_since_the_last_review(client, owner, agent, app, files):
    proposal = update(app, agent, files, "v2")
    request_changes(
        owner=owner,
        proposal_id=proposal.pk,
        comments=[{"path": "src/App.tsx", "line_start": 1, "line_end": 1, "body": "hmm"}],
    )
    revision = revise_proposal(
        caller=agent,
        proposal_id=str(proposal.pk),
        files=changed(files, "v3"),
        idempotency_key="revise-0001",
    ).proposal
    html = card(client, owner, revision).content.decode()
    assert "Changes since your last review (revision 1)" in html
    assert "Changes since the approved version (v1)" in html
    assert "Revisions:" in html and "1 · changes requested" in html
    assert "Review comments (1)" in html and "hmm" in html
    old = card(client, owner, proposal).content.decode()
    assert "Waiting for the agent’s revision" not in old
    assert "Go to the latest revision (2, pending)" in old
    superseded_first = propose(app.room, agent, changed(files, "new"), key="key-new-0001")
    newer = revise_proposal(
        caller=agent,
        proposal_id=str(superseded_first.pk),
        files=changed(files, "newer"),
        idempotency_key="revise-0002",
    ).proposal
    page = card(client, owner, superseded_first).content.decode()
    assert "Superseded</span>: a later revision took its place" in page
    assert reverse("rooms:proposal", args=[newer.pk]) in page


def test_history_lists_revisions_and_the_owner_rolls_back(client, owner, member, agent, app, files):
    approve_proposal(owner=owner, proposal_id=update(app, agent, files, "v2").pk)
    url = reverse("rooms:revisions", args=[app.room_id, app.pk])
    client.force_login(member)
    member_html = client.get(url).content.decode()
    assert "v2" in member_html and "current" in member_html
    assert "Roll back" not in member_html
    client.force_login(owner)
    html = client.get(url).content.decode()
    assert "Roll back to v1" in html
    response = client.post(
        reverse("rooms:rollback", args=[app.room_id, app.pk]),
        {"to_revision": "1", "expected_revision": "2"},
        follow=True,
    )
    assert "Rolled back: “Standup timer” is now v3, the content of v1." in (
        response.content.decode()
    )
    stale = client.post(
        reverse("rooms:rollback", args=[app.room_id, app.pk]),
        {"to_revision": "1", "expected_revision": "2"},
        follow=True,
    )
    assert "moved on to v3" in stale.content.decode()
    assert client.post(reverse("rooms:rollback", args=[app.room_id, app.pk]), {}).status_code == 400
    assert LauncherApp.objects.get(pk=app.pk).revision == 3


def test_a_rollback_is_attributed_to_the_owner_who_made_it(client, owner, agent, app, files):
    approve_proposal(owner=owner, proposal_id=update(app, agent, files, "v2").pk)
    rollback_app(
        owner=owner, room_id=app.room_id, instance_id=app.pk, to_revision=1, expected_revision=2
    )
    client.force_login(owner)
    history = client.get(reverse("rooms:revisions", args=[app.room_id, app.pk])).content.decode()
    row = history[history.index('data-revision="3"') :].split("</tr>")[0]
    assert 'owner</bdi> <span class="muted small">rolled back to v1</span>' in row
    assert 'class="agent"' not in row
    page = client.get(reverse("rooms:revision", args=[app.room_id, app.pk, 3])).content.decode()
    assert "<dt>Rolled back by</dt><dd><bdi>owner</bdi>, to the content of v1" in page
    event = RoomEvent.objects.filter(type="app.rolled_back").get().payload
    assert event["by"] == "owner"
    created, updated = (
        RoomEvent.objects.get(type=kind).payload for kind in ("app.created", "app.updated")
    )
    assert created["by"] == updated["by"] == "owner"


@pytest.mark.parametrize("number", ["²", "1" * 5000], ids=["superscript-two", "5000-digits"])
def test_a_rollback_to_what_is_not_a_whole_number_is_a_400_not_a_500(
    client, owner, agent, app, files, number
):
    # str.isdigit() took both, and int() refused them.
    approve_proposal(owner=owner, proposal_id=update(app, agent, files, "v2").pk)
    client.force_login(owner)
    response = client.post(
        reverse("rooms:rollback", args=[app.room_id, app.pk]),
        {"to_revision": number, "expected_revision": "2"},
    )
    assert response.status_code == 400
    assert response.content == b"to_revision and expected_revision: whole numbers"
    assert LauncherApp.objects.get(pk=app.pk).revision == 2


def test_a_revision_page_is_read_only_with_its_diff(client, owner, member, agent, app, files):
    approve_proposal(owner=owner, proposal_id=update(app, agent, files, "v2").pk)
    client.force_login(member)
    first = client.get(reverse("rooms:revision", args=[app.room_id, app.pk, 1])).content.decode()
    assert "Changes from v1 to v2" in first and "// v2" in first
    latest = client.get(reverse("rooms:revision", args=[app.room_id, app.pk, 2]))
    assert "It is the current version." in latest.content.decode()
    assert client.get(reverse("rooms:revision", args=[app.room_id, app.pk, 9])).status_code == 404


def test_the_only_revision_has_no_diff(client, member, app):
    client.force_login(member)
    html = client.get(reverse("rooms:revision", args=[app.room_id, app.pk, 1])).content.decode()
    assert "It is the current version." in html
    assert "Changes from v" not in html and "// v2" not in html


def test_strangers_see_no_history(client, stranger, app):
    client.force_login(stranger)
    assert client.get(reverse("rooms:revisions", args=[app.room_id, app.pk])).status_code == 404
    assert client.get(reverse("rooms:revision", args=[app.room_id, app.pk, 1])).status_code == 404


def test_tab_actions_from_the_room_page(client, owner, member, room, app):
    client.force_login(owner)
    page = client.get(reverse("rooms:room", args=[room.pk])).content.decode()
    assert 'data-tab-action="remove"' in page and 'data-tab-action="rename"' in page
    action = reverse("rooms:tab_action", args=[room.pk, app.pk, "rename"])
    response = client.post(action, {"name": "Focus timer"}, follow=True)
    assert "Renamed the tab to “Focus timer”." in response.content.decode()
    bad = client.post(action, {"name": ""}, follow=True)
    assert "name: give the tab a short title" in bad.content.decode()
    removed = client.post(
        reverse("rooms:tab_action", args=[room.pk, app.pk, "remove"]), follow=True
    ).content.decode()
    assert "left the launcher" in removed and "Removed tabs" in removed
    assert LauncherApp.objects.get(pk=app.pk).is_removed
    assert client.get(reverse("rooms:app", args=[room.pk, app.pk])).status_code == 404
    client.post(reverse("rooms:tab_action", args=[room.pk, app.pk, "restore"]))
    assert not LauncherApp.objects.get(pk=app.pk).is_removed
    assert (
        client.post(reverse("rooms:tab_action", args=[room.pk, app.pk, "fly"])).status_code == 404
    )
    client.force_login(member)
    refused = client.post(
        reverse("rooms:tab_action", args=[room.pk, app.pk, "remove"]), follow=True
    )
    assert "Only the Room owner can remove a tab" in refused.content.decode()
    assert not LauncherApp.objects.get(pk=app.pk).is_removed


@pytest.mark.parametrize(
    ("name", "problem"),
    [
        ("Focus\x00", "column 6: control character U+0000 (NULL) has no place in a one-line value"),
        (
            "Focus \u202etimer",
            "column 7: bidirectional control U+202E (RIGHT-TO-LEFT OVERRIDE) can make the text "
            "around it read differently than it is",
        ),
    ],
    ids=["nul", "right-to-left-override"],
)
def test_a_tab_name_follows_the_app_name_rules_on_the_room_page(
    client, owner, room, app, name, problem
):
    client.force_login(owner)
    action = reverse("rooms:tab_action", args=[room.pk, app.pk, "rename"])
    response = client.post(action, {"name": name}, follow=True)
    assert response.redirect_chain == [(reverse("rooms:room", args=[room.pk]), 302)]
    assert f"name: {problem}; remove it from the name" in response.content.decode()
    app.refresh_from_db()
    assert app.name == "Standup timer"


def test_moving_a_tab_returns_to_the_page_it_was_posted_from(client, owner, room, agent, app):
    poll = {"src/App.tsx": "export default function App() {\n  return <p>Poll</p>;\n}\n"}
    second = approve_proposal(
        owner=owner, proposal_id=propose(room, agent, poll, key="k-2", name="Poll").pk
    )
    client.force_login(owner)
    here = reverse("rooms:app", args=[room.pk, second.pk])
    left = reverse("rooms:tab_action", args=[room.pk, second.pk, "move-left"])
    moved = client.post(left, {"next": here})
    assert moved.status_code == 302 and moved["Location"] == here
    assert list(room.apps.order_by("position").values_list("pk", flat=True)) == [second.pk, app.pk]
    # Another site's address ("//host" keeps the scheme) is never a place to return to.
    right = reverse("rooms:tab_action", args=[room.pk, second.pk, "move-right"])
    back = client.post(right, {"next": "//evil.example/rooms/"}, follow=True)
    assert back.redirect_chain == [(reverse("rooms:room", args=[room.pk]), 302)]
    assert "Moved “Poll” right." in back.content.decode()
    assert list(room.apps.order_by("position").values_list("pk", flat=True)) == [app.pk, second.pk]


def test_a_tab_is_an_address(client, member, room, app):
    client.force_login(member)
    response = client.get(reverse("rooms:app", args=[room.pk, app.pk]))
    html = response.content.decode()
    assert response.status_code == 200
    assert f'data-open-instance-id="{app.pk}"' in html
    assert f'href="{reverse("rooms:app", args=[room.pk, app.pk])}"' in html
    assert Proposal.objects.filter(app=app).count() == 1


def test_unchanged_files_are_fetched_when_opened(
    client, owner, member, stranger, agent, app, files
):
    proposal = update(app, agent, files, "v2")
    html = card(client, owner, proposal).content.decode()
    file_url = reverse("rooms:proposal_file", args=[proposal.pk])
    assert f'data-load-url="{file_url}?path=src/styles.css"' in html
    assert "rooms/diff.js" in html
    approve_proposal(owner=owner, proposal_id=proposal.pk)
    url = reverse("rooms:revision_file", args=[app.room_id, app.pk, 1])
    client.force_login(member)
    page = client.get(reverse("rooms:revision", args=[app.room_id, app.pk, 1])).content.decode()
    assert f'data-load-url="{url}?path=src/styles.css"' in page
    response = client.get(url, {"path": "src/styles.css"})
    assert response.status_code == 200 and '<div class="hl">' in response.content.decode()
    assert client.get(url, {"path": "nope.css"}).status_code == 404
    client.force_login(stranger)
    assert client.get(url, {"path": "src/styles.css"}).status_code == 404
