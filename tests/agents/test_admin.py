"""The admin writes through the services: channel members keep their rule (the agent's owner
belongs to the channel's project), and a token edited in its form ends what long-polls
remembered of it."""

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from agents.models import AccessToken, Channel, agent_key
from agents.tokens import create_access_token
from osfoundry import wakeups
from osfoundry.auth import authenticate_bearer
from osfoundry.trust import ACCESS_KEY

pytestmark = pytest.mark.django_db(transaction=True)


def channel_form(project, name, members):
    return {"project": project.pk, "name": name, "members": [p.pk for p in members]}


def test_a_channel_with_an_outsiders_agent_is_refused_and_nothing_is_stored(
    admin_client, project, alice, profile_factory, stranger
):
    outsider = profile_factory(stranger, "eve-agent")
    project.members.remove(stranger)
    response = admin_client.post(
        reverse("admin:agents_channel_add"), channel_form(project, "general", [alice, outsider])
    )
    assert response.status_code == 200  # the form again, with the error on the members field
    assert response.context["adminform"].form.errors["members"] == [
        "eve-agent's owner is not a member of project 'Demo'; add them to the project first"
    ]
    assert not Channel.objects.exists()


def test_a_channel_of_project_members_is_stored_with_its_members(admin_client, project, alice, bob):
    response = admin_client.post(
        reverse("admin:agents_channel_add"), channel_form(project, "general", [alice, bob])
    )
    assert response.status_code == 302
    channel = Channel.objects.get()
    assert sorted(channel.members.values_list("handle", flat=True)) == ["alice-claude", "bob-codex"]


def token_form(token, **changes):
    data = {
        "user": token.user_id,
        "name": token.name,
        "scopes": token.scopes,
        "expires_at_0": "",
        "expires_at_1": "",
        "revoked_at_0": "",
        "revoked_at_1": "",
    }
    return {**data, **changes}


def test_an_expiry_set_in_the_token_form_ends_what_long_polls_remembered(
    admin_client, alice, monkeypatch
):
    token = AccessToken.objects.get(pk=int(alice.connection_key.removeprefix("pat:")))
    notified = []
    monkeypatch.setattr(wakeups, "notify", lambda keys, hints=None: notified.append(keys))
    soon = timezone.localtime() + timedelta(hours=1)
    response = admin_client.post(
        reverse("admin:agents_accesstoken_change", args=[token.pk]),
        token_form(
            token, expires_at_0=soon.strftime("%Y-%m-%d"), expires_at_1=soon.strftime("%H:%M:%S")
        ),
    )
    assert response.status_code == 302
    token.refresh_from_db()
    assert token.expires_at is not None
    assert notified == [[ACCESS_KEY, agent_key(alice.pk)]]


def test_unknown_scopes_in_the_token_form_are_a_form_error(admin_client, agent):
    token, _raw = create_access_token(user=agent, scopes="osfoundry:read")
    response = admin_client.post(
        reverse("admin:agents_accesstoken_change", args=[token.pk]),
        token_form(token, scopes="osfoundry:read osfoundry:admin"),
    )
    assert response.status_code == 200
    assert response.context["adminform"].form.errors["scopes"] == [
        "scopes: osfoundry:admin not valid; use any of osfoundry:read osfoundry:write"
    ]
    token.refresh_from_db()
    assert token.scopes == "osfoundry:read"


def test_the_channel_member_rule_holds_for_the_service_too(
    project, alice, profile_factory, stranger
):
    from agents.services import add_channel_member, create_channel
    from osfoundry.errors import Forbidden

    outsider = profile_factory(stranger, "eve-agent")
    project.members.remove(stranger)
    channel = create_channel(project=project, name="general", members=[alice])
    with pytest.raises(Forbidden) as error:
        add_channel_member(channel=channel, profile=outsider)
    assert error.value.message == (
        "eve-agent's owner is not a member of project 'Demo'; add them to the project first"
    )
    assert list(channel.members.values_list("handle", flat=True)) == ["alice-claude"]


def test_messages_are_read_only_with_body_sender_and_recipients_readable(admin_client, alice, bob):
    from agents.models import Message
    from agents.sending import send_agent_message

    message = send_agent_message(
        sender=alice,
        to="bob-codex nobody-x",
        body="line one\nline <two>",
        idempotency_key="adm-0001",
    ).message
    page = admin_client.get(reverse("admin:agents_message_change", args=[message.pk]))
    html = page.content.decode()
    assert page.status_code == 200
    assert "line one\nline &lt;two&gt;" in html
    assert "alice-claude (External (pulls with wait_for_messages))" in html
    assert "bob-codex (via to)" in html
    assert "nobody-x: no agent you can reach has this handle" in html
    listing = admin_client.get(reverse("admin:agents_message_changelist")).content.decode()
    assert "line one" in listing and "bob-codex (via to)" in listing
    assert admin_client.get(reverse("admin:agents_message_add")).status_code == 403
    delete = reverse("admin:agents_message_delete", args=[message.pk])
    assert admin_client.post(delete, {"post": "yes"}).status_code == 403
    change = reverse("admin:agents_message_change", args=[message.pk])
    assert admin_client.post(change, {"body": "rewritten"}).status_code == 403
    message.refresh_from_db()
    assert message.body == "line one\nline <two>"
    assert Message.objects.count() == 1


def test_a_token_created_in_the_admin_keeps_the_expiry_set_in_its_form(admin_client, agent):
    ends = timezone.localtime() + timedelta(days=3)
    response = admin_client.post(
        reverse("admin:agents_accesstoken_add"),
        {
            "user": agent.pk,
            "name": "ci runner",
            "scopes": "osfoundry:read",
            "project": "",
            "expires_at_0": ends.strftime("%Y-%m-%d"),
            "expires_at_1": ends.strftime("%H:%M:%S"),
        },
        follow=True,
    )
    [shown] = [str(m) for m in response.context["messages"] if str(m).startswith("Copy")]
    raw = shown.removeprefix("Copy the token now; it is not shown again: ")
    token = AccessToken.objects.get()
    assert (token.name, token.user, token.scopes) == ("ci runner", agent, "osfoundry:read")
    assert token.expires_at == ends.replace(microsecond=0)
    assert authenticate_bearer(raw).token_key == f"pat:{token.pk}"


def test_a_channel_without_a_project_is_a_form_error_and_nothing_is_stored(admin_client, alice):
    response = admin_client.post(
        reverse("admin:agents_channel_add"), {"name": "general", "members": [alice.pk]}
    )
    assert response.status_code == 200
    assert response.context["adminform"].form.errors == {"project": ["This field is required."]}
    assert not Channel.objects.exists()
