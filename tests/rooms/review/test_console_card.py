"""The snippet review card: SPEC §5 texts, navigation, guards and who may open it."""

import json

from django.urls import reverse

from rooms.content.highlight import file_anchor
from rooms.services import CARD_FILES_WARNING
from tests.refusals import refused_by_view
from tests.rooms.helpers import propose

APPROVAL_TEXT = (
    "Approval makes this code available in the Room app launcher. "
    "Review the files before approving."
)


def card(client, user, proposal):
    client.force_login(user)
    return client.get(reverse("rooms:proposal", args=[proposal.pk]))


def test_owner_sees_every_file_highlighted_with_the_spec_texts(client, owner, room, agent, files):
    proposal = propose(room, agent, files)
    response = card(client, owner, proposal)
    assert response.status_code == 200
    html = response.content.decode()
    assert "Review all proposed files (2)" in html
    assert APPROVAL_TEXT in html
    assert "Approve and create" in html
    assert "Decline" in html
    assert html.count('<div class="code"><div class="hl">') == 2
    assert "src/App.tsx" in html and "src/styles.css" in html
    assert f'name="content_hash" value="{proposal.content_hash}"' in html
    assert "0/2 viewed" in html
    assert "rooms/highlight.css" in html and "rooms/card.js" in html
    assert "data-repo-warning" not in html


def test_many_files_warn_that_the_app_belongs_in_a_repository(client, owner, room, agent, files):
    many = dict(files)
    for index in range(CARD_FILES_WARNING):
        many[f"src/part{index:02}.ts"] = f"export const part{index} = {index};\n"
    proposal = propose(room, agent, many)
    html = card(client, owner, proposal).content.decode()
    assert f"Review all proposed files ({len(many)})" in html
    assert "An app this size belongs in a repository" in html


def test_html_in_file_names_and_contents_renders_inert(client, owner, room, agent, files):
    payload = '<script>alert("x")</script><img src=x onerror=alert(1)>'
    # Runnable code that carries the payload: a proposal that cannot run is never stored.
    evil = {
        **files,
        f"src/{payload}.tsx": f"export const html = {json.dumps(payload)};\n",
        "src/App.tsx": files["src/App.tsx"] + f"\n// {payload}\n",
    }
    proposal = propose(room, agent, evil, name=payload)
    html = card(client, owner, proposal).content.decode()
    assert "<script>alert" not in html
    assert "<img src=x" not in html
    assert "&lt;script&gt;" in html


def test_large_files_are_collapsed_with_their_reason_and_rendered_on_demand(
    client, owner, room, agent, files
):
    big = "export const data = [\n" + "  1,\n" * 30_000 + "];\n"
    proposal = propose(room, agent, {**files, "src/data.ts": big})
    html = card(client, owner, proposal).content.decode()
    assert "Not rendered yet: large file: 147 KB." in html
    assert html.count('<div class="code">') == 2
    url = reverse("rooms:proposal_file", args=[proposal.pk]) + f"?file={file_anchor('src/data.ts')}"
    assert url in html
    part = client.get(url)
    assert part.status_code == 200
    assert '<div class="hl">' in part.content.decode()
    by_path = reverse("rooms:proposal_file", args=[proposal.pk]) + "?path=src/data.ts"
    assert client.get(by_path).status_code == 200
    for query in ("?path=nope", "?file=f-000000000000"):
        missing = client.get(reverse("rooms:proposal_file", args=[proposal.pk]) + query)
        refused_by_view(missing, "rooms:proposal_file")


def test_member_gets_404_for_a_pending_card_and_its_files(client, member, room, agent, files):
    proposal = propose(room, agent, files)
    refused_by_view(card(client, member, proposal), "rooms:proposal")
    url = reverse("rooms:proposal_file", args=[proposal.pk]) + "?path=src/App.tsx"
    refused_by_view(client.get(url), "rooms:proposal_file")


def test_stranger_gets_404(client, stranger, room, agent, files):
    proposal = propose(room, agent, files)
    refused_by_view(card(client, stranger, proposal), "rooms:proposal")


def test_anonymous_is_sent_to_login(client, room, agent, files):
    proposal = propose(room, agent, files)
    response = client.get(reverse("rooms:proposal", args=[proposal.pk]))
    assert response.status_code == 302
    assert "/accounts/login/" in response["Location"]


def test_proposer_sees_the_card_without_decision_buttons(client, agent, room, files):
    proposal = propose(room, agent, files)
    html = card(client, agent, proposal).content.decode()
    assert "Review all proposed files (2)" in html
    assert "Approve and create" not in html
    assert "Only the Room owner" in html


def test_unknown_card_is_404(client, owner, db):
    client.force_login(owner)
    url = reverse("rooms:proposal", args=["00000000-0000-0000-0000-000000000000"])
    refused_by_view(client.get(url), "rooms:proposal")
