"""The notifications settings page: the email opt-out, per person."""

import pytest

from notifications.models import NotificationSettings

pytestmark = pytest.mark.django_db


def test_a_person_turns_proposal_emails_off_and_on(client, owner):
    client.force_login(owner)
    page = client.get("/settings/notifications/")
    assert page.status_code == 200
    assert b"Email me about new proposals" in page.content
    response = client.post("/settings/notifications/", {"email": "off"}, follow=True)
    assert b"Proposal emails are off." in response.content
    assert NotificationSettings.objects.get(person=owner).is_email_enabled is False
    client.post("/settings/notifications/", {"email": "on"})
    assert NotificationSettings.objects.get(person=owner).is_email_enabled is True


def test_a_bad_choice_is_refused_and_nothing_changes(client, owner):
    client.force_login(owner)
    response = client.post("/settings/notifications/", {"email": "sometimes"})
    assert response.status_code == 400
    assert b"Choose whether to get proposal emails." in response.content
    assert NotificationSettings.objects.get(person=owner).is_email_enabled is True


def test_the_choice_is_each_persons_own(client, owner, member):
    client.force_login(member)
    client.post("/settings/notifications/", {"email": "off"})
    assert NotificationSettings.objects.get(person=member).is_email_enabled is False
    assert not NotificationSettings.objects.filter(person=owner, is_email_enabled=False).exists()


def test_anonymous_is_sent_to_log_in(client):
    response = client.get("/settings/notifications/")
    assert response.status_code == 302
    assert "/accounts/login/" in response["Location"]
