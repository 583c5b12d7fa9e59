"""The repo card and the pinned version's page (commit, file tree, highlighted files)."""

import re

import pytest
from django.urls import reverse

from rooms.models import Repository, RepositoryVersion
from rooms.services import propose_repo_version
from tests.refusals import refused_by_view

COMMIT = "0123456789abcdef0123456789abcdef01234567"


@pytest.fixture
def version(project, files):
    repository = Repository.objects.create(project=project, name="standup-timer")
    return RepositoryVersion.objects.create(
        repository=repository,
        commit_hash=COMMIT,
        ref="main",
        message="First version",
        files={**files, "README.md": "# Timer\n", "logo.png": None},
    )


@pytest.fixture
def repo_proposal(room, agent, version):
    return propose_repo_version(
        caller=agent,
        room_id=str(room.pk),
        name="Timer from GitNest",
        repository_id=str(version.repository_id),
        version_id=str(version.pk),
        idempotency_key="repo-key-1",
    ).proposal


def version_url(version, path=None):
    url = reverse("rooms:version", args=[version.repository_id, version.pk])
    return f"{url}?path={path}" if path else url


def test_repo_card_reviews_the_files_the_room_runs_and_links_to_the_version(
    client, owner, repo_proposal, version
):
    client.force_login(owner)
    html = client.get(reverse("rooms:proposal", args=[repo_proposal.pk])).content.decode()
    assert "Review repository code before approving" in html
    assert "This path does not build or deploy a bundle." in html
    assert f'href="{version_url(version)}?card={repo_proposal.pk}"' in html
    assert COMMIT in html
    assert "Approve and create" in html and "Decline" in html
    # The snippet card's review tools, on what the Room runs (src/): not the README or logo.
    assert "Files the Room runs, from src/ (2)" in html
    assert html.count("data-viewed>") == 2 and "data-file-filter" in html
    assert 'data-path="src/App.tsx"' in html and 'data-path="README.md"' not in html
    assert '<div class="hl">' in html
    assert f'data-review-key="repo-{version.repository_id}"' in html
    assert "Request changes" in html and "data-commentable" in html  # as on a snippet card


def test_version_page_shows_a_folder_tree_author_message_and_a_safe_readme(
    client, owner, project, version
):
    version.author = "Agent Smith <agent@example.com>"
    version.message = "First version\n\nWith a body."
    version.files["README.md"] = (
        "# Timer\n\n<script>alert(1)</script> [docs](javascript:alert(1)) **bold**\n"
    )
    version.save()
    project.members.add(owner)
    client.force_login(owner)
    html = client.get(version_url(version)).content.decode()
    assert "Agent Smith &lt;agent@example.com&gt;" in html
    assert "First version\n\nWith a body." in html
    assert "data-tree" in html and "<details open><summary><bdi>src</bdi>/</summary>" in html
    assert "<h1>Timer</h1>" in html and "<strong>bold</strong>" in html
    assert "<script>alert(1)" not in html and 'href="javascript:' not in html


def test_version_page_shows_commit_tree_and_a_highlighted_file(client, owner, project, version):
    project.members.add(owner)
    client.force_login(owner)
    response = client.get(version_url(version, "src/App.tsx"))
    assert response.status_code == 200
    html = response.content.decode()
    assert COMMIT in html
    for name in ("README.md", "src/", "App.tsx", "styles.css", "logo.png"):
        assert name in html
    assert '<div class="hl">' in html
    assert (
        client.get(version_url(version, "logo.png")).content.decode().count("binary file not shown")
    )
    refused_by_view(client.get(version_url(version, "nope.ts")), "rooms:version")


def test_room_owner_outside_the_project_may_still_review_the_version(client, owner, room, version):
    client.force_login(owner)
    assert client.get(version_url(version)).status_code == 200


def test_project_member_may_view_the_version(client, member, project, version):
    project.members.add(member)
    client.force_login(member)
    assert client.get(version_url(version)).status_code == 200


def test_stranger_gets_404_for_the_version(client, stranger, version):
    client.force_login(stranger)
    refused_by_view(client.get(version_url(version)), "rooms:version")


def test_anonymous_is_sent_to_login_for_the_version(client, version):
    assert client.get(version_url(version)).status_code == 302


def test_member_gets_404_for_a_pending_repo_card(client, member, repo_proposal):
    client.force_login(member)
    refused_by_view(
        client.get(reverse("rooms:proposal", args=[repo_proposal.pk])), "rooms:proposal"
    )


def test_version_page_marks_the_characters_a_proposal_would_refuse(client, owner, project, version):
    # A repository is imported from git, not proposed: its files may still hold Trojan Source.
    version.files["src/admin.ts"] = "const level = 'user\u202e \u2066// admin\u2069 \u2066';\n"
    version.save(update_fields=["files"])
    project.members.add(owner)
    client.force_login(owner)
    html = client.get(version_url(version, "src/admin.ts")).content.decode()
    assert "<strong>4 characters a proposal may not carry</strong>" in html
    assert html.count('<span class="uc uc-refused"') == 4
    assert 'title="U+202E RIGHT-TO-LEFT OVERRIDE"' in html
    assert "\u202e" not in html and "\u2066" not in html


def test_a_version_without_an_app_or_readme_opens_at_its_first_file(
    client, owner, project, version
):
    version.files = {"lib/util.ts": "export const one = 1;\n", "index.html": "<p>hi</p>\n"}
    version.save(update_fields=["files"])
    project.members.add(owner)
    client.force_login(owner)
    html = client.get(version_url(version)).content.decode()
    assert '<span class="file-path"><bdi>lib/util.ts</bdi></span>' in html  # folders first
    assert "data-readme" not in html


def test_a_lower_case_readme_is_the_versions_readme(client, owner, project, version):
    version.files = {"readme.md": "# Lower case\n", "notes.txt": "plain\n"}
    version.save(update_fields=["files"])
    project.members.add(owner)
    client.force_login(owner)
    html = client.get(version_url(version)).content.decode()
    assert '<h2 class="small muted">readme.md</h2>' in html and "<h1>Lower case</h1>" in html
    assert '<span class="file-path"><bdi>notes.txt</bdi></span>' in html


def test_a_version_with_a_file_150_folders_deep_lists_it_in_its_tree(
    client, owner, project, version
):
    # Built from flat rows: a recursive include ran out of stack at about 120 folders.
    deep = "/".join(f"d{n}" for n in range(150)) + "/deep.txt"
    version.files[deep] = "at the bottom\n"
    version.save(update_fields=["files"])
    project.members.add(owner)
    client.force_login(owner)
    response = client.get(version_url(version))
    assert response.status_code == 200
    html = response.content.decode()
    assert f'<a href="?path={deep}"><bdi>deep.txt</bdi></a>' in html
    tree = re.search(r'<ul class="tree-root" data-tree>(.*?)</nav>', html, re.S).group(1)
    summaries = re.findall(r"<details open><summary><bdi>(\w+)</bdi>/</summary>", tree)
    assert summaries == [f"d{n}" for n in range(150)] + ["src"]
    assert tree.count("<details open>") == tree.count("</details>") == 151
    shown = client.get(version_url(version, deep)).content.decode()
    assert 'aria-current="page"><bdi>deep.txt</bdi>' in shown and "at the bottom" in shown


def test_the_tree_nests_each_folder_and_closes_it_after_its_last_file(
    client, owner, project, version
):
    version.files = {"a/b/c.ts": "1\n", "a/d.ts": "2\n", "e.ts": "3\n"}
    version.save(update_fields=["files"])
    project.members.add(owner)
    client.force_login(owner)
    html = client.get(version_url(version)).content.decode()
    tree = re.search(r'<ul class="tree-root" data-tree>(.*?)</nav>', html, re.S).group(1)
    assert re.sub(r"\s+", "", tree) == (
        '<liclass="dir"><detailsopen><summary><bdi>a</bdi>/</summary><ul>'
        '<liclass="dir"><detailsopen><summary><bdi>b</bdi>/</summary><ul>'
        '<liclass="current"><ahref="?path=a/b/c.ts"aria-current="page"><bdi>c.ts</bdi></a></li>'
        "</ul></details></li>"
        '<li><ahref="?path=a/d.ts"><bdi>d.ts</bdi></a></li></ul></details></li>'
        '<li><ahref="?path=e.ts"><bdi>e.ts</bdi></a></li>'
        "</ul>"
    )
