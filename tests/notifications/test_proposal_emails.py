"""Proposal emails: batched per owner (one per 10 minutes), opt-out, a failing server."""

from datetime import timedelta

import pytest
from django.core import mail
from django.utils import timezone

from agents.models import AccessToken
from notifications import services
from notifications.models import NotificationSettings
from notifications.services import send_due_emails, set_email_notifications
from osfoundry.auth import authenticate_bearer
from rooms.models import Proposal
from rooms.services import decline_proposal, propose_snippet

pytestmark = pytest.mark.django_db

LOCMEM = {"default": {"BACKEND": "django.core.mail.backends.locmem.EmailBackend"}}
FAILING = {"default": {"BACKEND": "tests.notifications.backends.FailingBackend"}}


@pytest.fixture(autouse=True)
def locmem_mail(settings):
    settings.MAILERS = LOCMEM
    settings.PUBLIC_ORIGIN = "https://rooms.example.com"


def propose(room, agent, files, key, name):
    return propose_snippet(
        caller=agent, room_id=str(room.pk), name=name, files=files, idempotency_key=key
    ).proposal


def test_two_proposals_within_ten_minutes_make_one_email_listing_both(room, owner, agent, files):
    first = propose(room, agent, files, "mail-1", "Standup timer")
    second = propose(room, agent, files | {"extra.txt": "x"}, "mail-2", "Poll board")
    assert send_due_emails() == 1
    assert len(mail.outbox) == 1
    email = mail.outbox[0]
    assert email.to == ["owner@example.com"]
    assert email.subject == "2 proposals need your approval"
    assert "Standup timer in Team Falcon, from agent" in email.body
    assert f"https://rooms.example.com/proposals/{first.pk}/" in email.body
    assert f"https://rooms.example.com/proposals/{second.pk}/" in email.body
    assert "https://rooms.example.com/settings/notifications/" in email.body
    assert send_due_emails() == 0  # nothing new: no second email
    assert len(mail.outbox) == 1


def test_at_most_one_email_per_ten_minutes_and_the_next_lists_only_what_is_new(
    room, owner, agent, files
):
    now = timezone.now()
    propose(room, agent, files, "mail-3", "Standup timer")
    assert send_due_emails(now=now) == 1
    later = propose(room, agent, files | {"b.txt": "b"}, "mail-4", "Poll board")
    assert send_due_emails(now=now + timedelta(minutes=9)) == 0
    assert send_due_emails(now=now + timedelta(minutes=10)) == 1
    assert len(mail.outbox) == 2
    assert mail.outbox[1].subject == "“Poll board” needs your approval"
    assert f"/proposals/{later.pk}/" in mail.outbox[1].body
    assert "Standup timer" not in mail.outbox[1].body


def test_a_proposal_decided_before_the_email_is_left_out(room, owner, agent, files):
    decided = propose(room, agent, files, "mail-5", "Standup timer")
    decline_proposal(owner=owner, proposal_id=decided.pk)
    assert send_due_emails() == 0
    assert mail.outbox == []


def test_an_owner_who_opted_out_gets_no_email(room, owner, agent, files):
    set_email_notifications(person=owner, is_enabled=False)
    propose(room, agent, files, "mail-6", "Standup timer")
    assert send_due_emails() == 0
    assert mail.outbox == []
    # Turning emails back on does not send what arrived while they were off.
    set_email_notifications(person=owner, is_enabled=True)
    assert send_due_emails(now=timezone.now() + timedelta(hours=1)) == 0


def test_a_failing_mail_server_fails_no_proposal_and_the_batch_is_retried(
    settings, room, owner, agent, files, django_capture_on_commit_callbacks
):
    settings.MAILERS = FAILING
    with django_capture_on_commit_callbacks(execute=True):
        proposal = propose(room, agent, files, "mail-7", "Standup timer")
    assert Proposal.objects.get(pk=proposal.pk).is_pending
    assert send_due_emails() == 0  # the failure is logged, not raised
    assert NotificationSettings.objects.get(person=owner).email_sent_at is None

    settings.MAILERS = LOCMEM
    assert send_due_emails() == 1
    assert f"/proposals/{proposal.pk}/" in mail.outbox[0].body


def test_a_second_worker_that_read_the_state_before_the_first_sent_sends_nothing(
    monkeypatch, room, owner, agent, files
):
    propose(room, agent, files, "mail-8", "Standup timer")
    read_by_second_worker = services.settings_for(owner)
    assert send_due_emails() == 1  # the first worker claims and sends the batch
    monkeypatch.setattr(services, "settings_for", lambda person: read_by_second_worker)
    assert services.send_batch_if_due(owner=owner, now=timezone.now()) is False
    assert len(mail.outbox) == 1


def test_the_email_names_the_agent_and_the_token_it_proposed_through(
    room, owner, agent, files, agent_token
):
    raw, _profile = agent_token(agent, "falcon-builder")
    room.members.add(agent)
    caller = authenticate_bearer(raw).user  # as the REST and MCP interfaces hand it over
    propose(room, caller, files, key="key-agent-0001", name="Timer")
    propose(room, agent, files, key="key-agent-0002", name="Board")  # no token: the person
    send_due_emails()
    body = mail.outbox[0].body
    token = AccessToken.objects.get(user=agent)
    assert f"- Timer in {room.name}, from falcon-builder · {token.name or 'token'}" in body
    assert f"- Board in {room.name}, from agent\n" in body
