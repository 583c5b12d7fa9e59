"""Decisions on the card: POST with CSRF, owner only, exactly once, bound to the content hash."""

import re

import pytest
from django.test import Client
from django.urls import reverse

from rooms.models import LauncherApp, Proposal
from tests.refusals import refused_by_view
from tests.rooms.helpers import propose


def approve_url(proposal):
    return reverse("rooms:approve", args=[proposal.pk])


def decline_url(proposal):
    return reverse("rooms:decline", args=[proposal.pk])


def test_owner_approves_with_the_csrf_token_from_the_card(owner, room, agent, files):
    proposal = propose(room, agent, files)
    client = Client(enforce_csrf_checks=True)
    client.force_login(owner)
    html = client.get(reverse("rooms:proposal", args=[proposal.pk])).content.decode()
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', html).group(1)
    response = client.post(
        approve_url(proposal),
        {"csrfmiddlewaretoken": token, "content_hash": proposal.content_hash},
        follow=True,
    )
    assert response.status_code == 200
    proposal.refresh_from_db()
    assert proposal.status == Proposal.Status.APPROVED
    assert proposal.decided_by == owner
    app = LauncherApp.objects.get(proposal=proposal)
    page = response.content.decode()
    assert "Approved</span> by <strong><bdi>owner</bdi></strong> on" in page
    assert f"is now a tab in {room.name}" in page
    assert "Approve and create" not in page
    assert app.room == room


def test_post_without_csrf_token_is_refused(owner, room, agent, files):
    proposal = propose(room, agent, files)
    client = Client(enforce_csrf_checks=True)
    client.force_login(owner)
    response = client.post(approve_url(proposal), {"content_hash": proposal.content_hash})
    assert response.status_code == 403
    proposal.refresh_from_db()
    assert proposal.is_pending


def test_get_cannot_decide(client, owner, room, agent, files):
    proposal = propose(room, agent, files)
    client.force_login(owner)
    assert client.get(approve_url(proposal)).status_code == 405
    proposal.refresh_from_db()
    assert proposal.is_pending


def test_second_approval_is_refused_and_creates_nothing(client, owner, room, agent, files):
    proposal = propose(room, agent, files)
    client.force_login(owner)
    client.post(approve_url(proposal), {"content_hash": proposal.content_hash})
    response = client.post(approve_url(proposal), {"content_hash": proposal.content_hash})
    assert response.status_code == 409
    assert "already approved by owner" in response.content.decode()
    assert LauncherApp.objects.count() == 1
    response = client.post(decline_url(proposal), {"content_hash": proposal.content_hash})
    assert response.status_code == 409
    proposal.refresh_from_db()
    assert proposal.status == Proposal.Status.APPROVED


def test_stale_card_cannot_approve_other_content(client, owner, room, agent, files):
    proposal = propose(room, agent, files)
    client.force_login(owner)
    response = client.post(approve_url(proposal), {"content_hash": "0" * 64})
    assert response.status_code == 409
    assert "does not match this proposal" in response.content.decode()
    response = client.post(approve_url(proposal), {})
    assert response.status_code == 409
    proposal.refresh_from_db()
    assert proposal.is_pending
    assert not LauncherApp.objects.exists()


def test_decline_records_the_reason_for_the_agent(client, owner, room, agent, files):
    proposal = propose(room, agent, files)
    client.force_login(owner)
    response = client.post(
        decline_url(proposal),
        {"content_hash": proposal.content_hash, "reason": "Use the <b>design</b> tokens"},
        follow=True,
    )
    proposal.refresh_from_db()
    assert proposal.status == Proposal.Status.DECLINED
    assert proposal.decline_reason == "Use the <b>design</b> tokens"
    html = response.content.decode()
    assert "Declined</span> by <strong><bdi>owner</bdi></strong> on" in html
    assert "Reason: Use the &lt;b&gt;design&lt;/b&gt; tokens" in html
    assert not LauncherApp.objects.exists()


def test_too_long_reason_is_a_clear_error(client, owner, room, agent, files):
    proposal = propose(room, agent, files)
    client.force_login(owner)
    response = client.post(
        decline_url(proposal), {"content_hash": proposal.content_hash, "reason": "x" * 1001}
    )
    assert response.status_code == 400
    assert "reason: at most 1000 characters" in response.content.decode()
    proposal.refresh_from_db()
    assert proposal.is_pending


@pytest.mark.parametrize(
    ("reason", "problem"),
    [
        ("Use the\ntokens\x00", "line 2, column 7: control character U+0000 (NULL) is invisible"),
        ("Use \u202ethe tokens", "column 5: bidirectional control U+202E (RIGHT-TO-LEFT OVERRIDE)"),
    ],
    ids=["nul", "right-to-left-override"],
)
def test_a_reason_with_a_nul_or_a_bidirectional_control_is_a_clear_error(
    client, owner, room, agent, files, reason, problem
):
    proposal = propose(room, agent, files)
    client.force_login(owner)
    response = client.post(
        decline_url(proposal), {"content_hash": proposal.content_hash, "reason": reason}
    )
    assert response.status_code == 400
    assert response.context["decision_error"].startswith(f"reason: {problem}")
    assert response.context["decision_error"].endswith("; remove it from the reason")
    assert response.context["reason"] == reason  # kept in the form for the next press
    proposal.refresh_from_db()
    assert proposal.is_pending


def test_a_base_revision_that_is_not_ascii_digits_binds_to_nothing_as_any_other_word(
    client, owner, room, agent, files
):
    # str.isdigit() took "¹", and int() refused it: a 500 instead of the approval.
    proposal = propose(room, agent, files)
    client.force_login(owner)
    response = client.post(
        approve_url(proposal), {"content_hash": proposal.content_hash, "base_revision": "¹"}
    )
    assert response.status_code == 302
    proposal.refresh_from_db()
    assert proposal.status == Proposal.Status.APPROVED
    assert LauncherApp.objects.get().proposal == proposal


def test_member_cannot_decide(client, member, room, agent, files):
    proposal = propose(room, agent, files)
    client.force_login(member)
    response = client.post(approve_url(proposal), {"content_hash": proposal.content_hash})
    refused_by_view(response, "rooms:approve")
    proposal.refresh_from_db()
    assert proposal.is_pending


def test_proposer_cannot_approve_their_own_proposal(client, agent, room, files):
    proposal = propose(room, agent, files)
    room.members.remove(agent)
    client.force_login(agent)
    response = client.post(approve_url(proposal), {"content_hash": proposal.content_hash})
    assert response.status_code == 403
    assert "Only the Room owner" in response.content.decode()
    proposal.refresh_from_db()
    assert proposal.is_pending


def test_stranger_cannot_decide(client, stranger, room, agent, files):
    proposal = propose(room, agent, files)
    client.force_login(stranger)
    response = client.post(decline_url(proposal), {"content_hash": proposal.content_hash})
    refused_by_view(response, "rooms:decline")
    proposal.refresh_from_db()
    assert proposal.is_pending


def test_anonymous_cannot_decide(client, room, agent, files):
    proposal = propose(room, agent, files)
    response = client.post(approve_url(proposal), {"content_hash": proposal.content_hash})
    assert response.status_code == 302
    proposal.refresh_from_db()
    assert proposal.is_pending


def test_decided_card_stays_readable_for_the_owner(client, owner, room, agent, files):
    proposal = propose(room, agent, files)
    client.force_login(owner)
    client.post(approve_url(proposal), {"content_hash": proposal.content_hash})
    html = client.get(reverse("rooms:proposal", args=[proposal.pk])).content.decode()
    # Every file still there, under a heading that no longer asks for a review.
    assert "Proposed files (2)" in html and "Review all proposed files" not in html
    assert html.count("data-file ") == 2
    # The decision first, its buttons gone.
    assert html.index("data-decision-banner") < html.index("data-review ")
    assert "Approved</span> by <strong><bdi>owner</bdi></strong>" in html
    assert "Approve and create" not in html and "data-decline" not in html
    assert "data-viewed" not in html


def test_proposing_agent_reads_the_decline_reason_through_the_api(
    client, owner, room, agent, files, token_factory
):
    proposal = propose(room, agent, files)
    client.force_login(owner)
    client.post(decline_url(proposal), {"content_hash": proposal.content_hash, "reason": "Too big"})
    client.logout()
    token = token_factory(agent, "osfoundry:read")
    response = client.get(f"/api/v1/proposals/{proposal.pk}", HTTP_AUTHORIZATION=f"Bearer {token}")
    assert response.status_code == 200
    assert response.json()["status"] == "declined"
    assert response.json()["decline_reason"] == "Too big"
    assert response.json()["changes_summary"] is None
