"""Django admin: Rooms with members inline, read-only proposals with a highlighted preview."""

import pytest
from django.urls import reverse

from rooms.models import LauncherApp, Proposal, Repository, RepositoryVersion, RoomEvent
from rooms.services import approve_proposal, propose_repo_version, propose_snippet
from tests.rooms.helpers import APP, propose, stored_unchecked


def test_room_admin_searches_and_edits_members_inline(admin_client, room, member):
    response = admin_client.get(reverse("admin:rooms_room_changelist"), {"q": "member"})
    assert response.status_code == 200
    assert "Team Falcon" in response.content.decode()
    page = admin_client.get(reverse("admin:rooms_room_change", args=[room.pk])).content.decode()
    assert "Room_members-TOTAL_FORMS" in page


def test_proposal_admin_is_read_only_with_a_highlighted_preview(admin_client, room, agent, files):
    evil = {**files, "src/<b>x</b>.ts": "const x = '<script>alert(1)</script>';\n"}
    proposal = propose(room, agent, evil)
    response = admin_client.get(reverse("admin:rooms_proposal_change", args=[proposal.pk]))
    assert response.status_code == 200
    html = response.content.decode()
    assert '<div class="admin-code"><div class="hl">' in html
    assert "rooms/highlight.css" in html
    assert "<script>alert(1)</script>" not in html
    assert "&lt;b&gt;x&lt;/b&gt;" in html
    assert 'name="_save"' not in html
    assert admin_client.get(reverse("admin:rooms_proposal_add")).status_code == 403


def test_a_repo_proposal_preview_links_to_its_version_page(admin_client, room, agent, project):
    repository = Repository.objects.create(project=project, name="timer")
    version = RepositoryVersion.objects.create(
        repository=repository, commit_hash="b" * 40, files={"src/App.tsx": APP}
    )
    proposal = propose_repo_version(
        caller=agent,
        room_id=str(room.pk),
        name="Timer from git",
        repository_id=str(repository.pk),
        version_id=str(version.pk),
        idempotency_key="repo-admin-01",
    ).proposal
    html = admin_client.get(reverse("admin:rooms_proposal_change", args=[proposal.pk])).content
    url = reverse("rooms:version", args=[repository.pk, version.pk])
    assert f'<a href="{url}">Review {version} in the console</a>'.encode() in html
    assert b'class="admin-code"' not in html  # the version page shows the files, not admin


def test_a_large_file_is_left_to_the_review_card(admin_client, room, agent, files):
    data = "export const rows = [\n" + "  1,\n" * 30_000 + "];\n"
    proposal = propose(room, agent, {**files, "src/rows.ts": data})
    html = admin_client.get(reverse("admin:rooms_proposal_change", args=[proposal.pk])).content
    assert (
        b"<code>src/rows.ts</code></strong> \xc2\xb7 146.5\xc2\xa0KB<p>large file: open the review"
        in html
    )
    assert b"<code>src/App.tsx</code>" in html and b'class="admin-code"' in html


def test_a_stored_binary_file_is_named_not_shown(admin_client, room, agent, files):
    # Proposals refuse binary files now; a row stored with one still opens in admin.
    proposal = stored_unchecked(room, agent, files={**files, "logo.png": None})
    html = admin_client.get(reverse("admin:rooms_proposal_change", args=[proposal.pk])).content
    assert (
        b"<code>logo.png</code></strong> \xc2\xb7 0\xc2\xa0bytes<p>binary file not shown</p>"
        in html
    )


def test_events_are_read_only(admin_client, room, agent, files):
    propose(room, agent, files)
    event = RoomEvent.objects.get()
    html = admin_client.get(reverse("admin:rooms_roomevent_change", args=[event.pk])).content
    assert b"proposal.created" in html
    assert b'name="_save"' not in html


def test_tokens_repositories_and_versions_are_listed(admin_client, project, agent, token_factory):
    token_factory(agent)
    repository = Repository.objects.create(project=project, name="timer")
    version = RepositoryVersion.objects.create(
        repository=repository, commit_hash="a" * 40, files={"src/App.tsx": "x", "b.png": None}
    )
    assert admin_client.get(reverse("admin:agents_accesstoken_changelist")).status_code == 200
    assert b"timer" in admin_client.get(reverse("admin:rooms_repository_changelist")).content
    page = admin_client.get(reverse("admin:rooms_repositoryversion_change", args=[version.pk]))
    assert b"Browse this version" in page.content
    assert b"<code>b.png</code> \xc2\xb7 binary" in page.content


def test_members_cannot_reach_admin(client, member):
    client.force_login(member)
    assert client.get(reverse("admin:index")).status_code == 302


@pytest.fixture
def approved(room, owner, agent, files):
    proposal = propose_snippet(
        caller=agent, room_id=str(room.pk), name="Timer", files=files, idempotency_key="key-000001"
    ).proposal
    approve_proposal(owner=owner, proposal_id=proposal.pk)
    return proposal


def test_every_admin_page_renders(admin_client, approved, room):
    models = ("project", "room", "repository", "proposal", "launcherapp", "roomevent")
    for model in (*models, "apprevision", "reviewcomment"):
        response = admin_client.get(reverse(f"admin:rooms_{model}_changelist"))
        assert response.status_code == 200, model
    response = admin_client.get(reverse("admin:agents_accesstoken_changelist"))
    assert response.status_code == 200
    detail = admin_client.get(reverse("admin:rooms_proposal_change", args=[approved.pk]))
    assert detail.status_code == 200


def test_proposal_content_is_read_only_in_admin(admin_client, approved):
    url = reverse("admin:rooms_proposal_change", args=[approved.pk])
    response = admin_client.post(url, {"name": "Changed", "status": "pending"})
    assert response.status_code == 403
    approved.refresh_from_db()
    assert approved.name == "Timer" and approved.status == Proposal.Status.APPROVED


def test_tabs_change_only_through_the_console(admin_client, approved):
    app = LauncherApp.objects.get(proposal=approved)
    url = reverse("admin:rooms_launcherapp_change", args=[app.pk])
    assert admin_client.get(url).status_code == 200
    assert admin_client.post(url, {"name": "Renamed", "position": "7"}).status_code == 403
    delete = reverse("admin:rooms_launcherapp_delete", args=[app.pk])
    assert admin_client.post(delete, {"post": "yes"}).status_code == 403
    app.refresh_from_db()
    assert (app.name, app.position) == ("Timer", 0)
