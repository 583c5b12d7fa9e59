"""The console's Connected pages through the Django client: tokens (created once, form errors
naming the field, revoked), connected OAuth apps (self-declared, disconnect), my agents, and the
byline "handle · token or client" on the inbox and the card."""

import pytest
from allauth.idp.oidc.models import Token as OAuthToken

from agents.models import AccessToken
from agents.services import claim_connected_profile
from agents.tokens import create_access_token, hash_token
from osfoundry.auth import authenticate_bearer
from rooms.models import Project, RoomEvent
from rooms.services import propose_snippet
from tests.osfoundry.oauth_helpers import (
    RESOURCE,
    exchange,
    grant,
    page_text,
    registered_client_id,
)
from tests.refusals import refused_by_view

REDIRECT = "http://127.0.0.1:8976/callback"


def create(client, **form):
    data = {
        "name": "laptop",
        "scopes": ["osfoundry:read", "osfoundry:write"],
        "expires_in_days": "30",
        "project": "",
        **form,
    }
    return client.post("/connected/tokens/", data)


def test_a_new_token_is_shown_once_and_only_its_hash_is_stored(client, owner, project):
    project.members.add(owner)
    client.force_login(owner)
    response = create(client, project=str(project.pk))
    assert response.status_code == 200
    secret = response.context["created"]["secret"]
    assert secret.startswith("osf_") and secret in response.content.decode()
    assert response["Cache-Control"].startswith("max-age=0")
    token = AccessToken.objects.get()
    assert token.token_hash == hash_token(secret)
    assert (token.name, token.project, token.user) == ("laptop", project, owner)
    assert token.expires_at is not None
    assert authenticate_bearer(secret).project_id == project.pk
    listed = client.get("/connected/tokens/")
    assert secret not in listed.content.decode()
    assert "laptop" in listed.content.decode()


@pytest.mark.parametrize(
    ("form", "field", "words"),
    [
        ({"scopes": []}, "scopes", "(none) not valid"),
        ({"scopes": ["osfoundry:admin"]}, "scopes", "osfoundry:admin not valid"),
        ({"expires_in_days": "9999"}, "expires_in_days", "out of range"),
        ({"expires_in_days": "soon"}, "expires_in_days", "not a number of days"),
        ({"expires_in_days": "³⁰"}, "expires_in_days", "not a number of days"),  # isdigit() took it
        ({"project": "not-a-uuid"}, "project", "is not a project of yours"),
        ({"name": "x" * 201}, "name", "at most 200 characters"),
    ],
)
def test_a_bad_token_form_names_the_field_and_stores_nothing(client, owner, form, field, words):
    client.force_login(owner)
    response = create(client, **form)
    assert response.status_code == 400
    assert response.context["error"].field == field
    assert words in response.context["error"].message
    assert words in response.content.decode().replace("&#x27;", "'")
    assert not AccessToken.objects.exists()


@pytest.mark.parametrize(
    ("name", "problem"),
    [
        (
            "laptop\x00",
            "column 7: control character U+0000 (NULL) has no place in a one-line value",
        ),
        (
            "Claude \u202egnp.exe",
            "column 8: bidirectional control U+202E (RIGHT-TO-LEFT OVERRIDE) can make the text "
            "around it read differently than it is",
        ),
    ],
    ids=["nul", "right-to-left-override"],
)
def test_a_token_name_follows_the_app_name_rules_and_nothing_is_stored(
    client, owner, name, problem
):
    # A NUL was stored on SQLite and a 500 on PostgreSQL; an override shows in every byline.
    client.force_login(owner)
    response = create(client, name=name)
    assert response.status_code == 400
    error = response.context["error"]
    assert (error.field, error.message) == ("name", f"name: {problem}; remove it from the name")
    assert error.message in response.content.decode()
    assert not AccessToken.objects.exists()


def test_a_project_the_person_is_not_in_is_refused(client, owner, stranger):
    theirs = Project.objects.create(name="Theirs")
    theirs.members.add(stranger)
    client.force_login(owner)
    response = create(client, project=str(theirs.pk))
    assert response.context["error"].field == "project"
    assert not AccessToken.objects.exists()


def test_revoking_ends_the_token_and_anothers_token_is_not_found(client, owner, stranger):
    mine, raw = create_access_token(user=owner, scopes="osfoundry:read", name="mine")
    theirs, their_raw = create_access_token(user=stranger, scopes="osfoundry:read")
    client.force_login(owner)
    refused_by_view(client.post(f"/connected/tokens/{theirs.pk}/revoke/"), "agents:token_revoke")
    assert authenticate_bearer(their_raw) is not None
    response = client.post(f"/connected/tokens/{mine.pk}/revoke/")
    assert response.status_code == 302
    mine.refresh_from_db()
    assert mine.revoked_at is not None
    assert authenticate_bearer(raw) is None


def connect_client(client, user, name="Codex"):
    client.force_login(user)
    client_id = registered_client_id(client, client_name=name, redirect_uris=[REDIRECT])
    code = grant(client, client_id, REDIRECT, scope="osfoundry:read osfoundry:write")["code"]
    return client_id, exchange(client, client_id, REDIRECT, code)["access_token"]


def test_connected_apps_lists_a_client_as_self_declared_and_disconnect_ends_it(client, owner):
    client_id, access = connect_client(client, owner)
    assert authenticate_bearer(access, resource=RESOURCE) is not None
    page = client.get("/connected/apps/")
    listed = page.context["clients"]
    assert [(c.client_id, c.name, c.redirect_hosts) for c in listed] == [
        (client_id, "Codex", ("127.0.0.1:8976",))
    ]
    assert listed[0].scopes == ("osfoundry:read", "osfoundry:write")
    assert "self-declared" in page.content.decode()
    response = client.post(f"/connected/apps/{client_id}/disconnect/")
    assert response.status_code == 302
    assert not OAuthToken.objects.filter(client_id=client_id, user=owner).exists()
    assert authenticate_bearer(access, resource=RESOURCE) is None
    assert client.get("/connected/apps/").context["clients"] == []


def test_another_persons_client_cannot_be_disconnected(client, owner, stranger):
    client_id, access = connect_client(client, owner)
    client.force_login(stranger)
    refused_by_view(
        client.post(f"/connected/apps/{client_id}/disconnect/"), "agents:client_disconnect"
    )
    assert authenticate_bearer(access, resource=RESOURCE) is not None


def test_my_agents_shows_handle_token_last_seen_and_unread(client, owner, project):
    project.members.add(owner)
    token, raw = create_access_token(user=owner, scopes="osfoundry:read", name="Claude laptop")
    principal = authenticate_bearer(raw)  # marks it used
    claim_connected_profile(user=owner, connection_key=principal.token_key, handle="alice-claude")
    client.force_login(owner)
    [agent] = client.get("/connected/agents/").context["agents"]
    assert (agent.handle, agent.via, agent.is_connected, agent.unread) == (
        "alice-claude",
        "Claude laptop",
        True,
        0,
    )
    assert agent.last_seen_at is not None


def test_the_inbox_and_card_say_which_agent_and_token_proposed(
    client, owner, agent, room, files, token_factory
):
    token, raw = create_access_token(user=agent, scopes="osfoundry:write", name="Codex CLI")
    principal = authenticate_bearer(raw)
    claim_connected_profile(user=agent, connection_key=principal.token_key, handle="bob-codex")
    proposal = propose_snippet(
        caller=principal.user, room_id=room.pk, name="T", files=files, idempotency_key="by-0001"
    ).proposal
    assert proposal.proposed_via == f"pat:{token.pk}"
    # The live event says the same, for rows that arrive in an open inbox (inbox.js).
    event = RoomEvent.objects.get(room=room, payload__proposal_id=str(proposal.pk))
    assert (event.payload["agent"], event.payload["proposed_via"]) == ("bob-codex", "Codex CLI")
    plain = propose_snippet(
        caller=agent, room_id=room.pk, name="U", files=files, idempotency_key="by-0002"
    ).proposal
    client.force_login(owner)
    assert "bob-codex · Codex CLI" in page_text(client.get("/"))
    card = page_text(client.get(proposal.get_absolute_url()))
    assert "proposed by bob-codex · Codex CLI" in card
    # Without a token (a script on the ORM), the user name.
    assert "proposed by agent " in page_text(client.get(plain.get_absolute_url()))


def test_an_oauth_clients_proposal_reads_as_its_client(client, owner, agent, room, files):
    _client_id, access = connect_client(client, agent, name="Codex")
    principal = authenticate_bearer(access, resource=RESOURCE)
    claim_connected_profile(user=agent, connection_key=principal.token_key, handle="bob-codex")
    proposal = propose_snippet(
        caller=principal.user, room_id=room.pk, name="T", files=files, idempotency_key="oa-0001"
    ).proposal
    client.force_login(owner)
    card = page_text(client.get(proposal.get_absolute_url()))
    assert "proposed by bob-codex · Codex via OAuth" in card
    event = RoomEvent.objects.get(room=room, payload__proposal_id=str(proposal.pk))
    assert (event.payload["agent"], event.payload["proposed_via"]) == (
        "bob-codex",
        "Codex via OAuth",
    )


def test_a_token_that_never_expires_is_created_without_an_expiry(client, owner):
    client.force_login(owner)
    response = create(client, expires_in_days="never")
    assert response.status_code == 200
    token = AccessToken.objects.get()
    assert token.expires_at is None
    assert authenticate_bearer(response.context["created"]["secret"]).user == owner


def test_my_agents_names_each_agents_own_token_or_app(client, owner, project):
    project.members.add(owner)
    _token, raw = create_access_token(user=owner, scopes="osfoundry:read", name="Claude laptop")
    by_token = authenticate_bearer(raw)
    claim_connected_profile(user=owner, connection_key=by_token.token_key, handle="alice-claude")
    _client_id, access = connect_client(client, owner, name="Codex")
    by_app = authenticate_bearer(access, resource=RESOURCE)
    claim_connected_profile(user=owner, connection_key=by_app.token_key, handle="alice-codex")
    agents = client.get("/connected/agents/").context["agents"]
    assert sorted((a.handle, a.via, a.is_connected) for a in agents) == [
        ("alice-claude", "Claude laptop", True),
        ("alice-codex", "Codex via OAuth", True),
    ]
