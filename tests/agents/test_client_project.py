"""The consent page lets the person choose the one project an OAuth client may act in (or all);
the client's tokens then find only that project's Rooms, over both MCP paths."""

import re

import pytest
from allauth.idp.oidc.models import Client, Token

from agents.models import ClientGrant
from osfoundry.auth import authenticate_bearer
from rooms.access import list_rooms
from rooms.models import Project, Room
from tests.osfoundry.oauth_helpers import (
    AUTHORIZE,
    RESOURCE,
    authorize_url,
    exchange,
    hidden_field,
    query_of,
    registered_client_id,
)

REDIRECT = "http://127.0.0.1:8976/callback"


@pytest.fixture
def two_projects(owner, project, room):
    other = Project.objects.create(name="Other")
    Room.objects.create(project=other, name="Elsewhere", owner=owner)
    return project, other


def consent(client, client_id, **form):
    page = client.get(authorize_url(client_id, REDIRECT, scope="osfoundry:read"))
    html = page.content.decode()
    return page, client.post(
        AUTHORIZE,
        {
            "request": hidden_field(html, "request"),
            "scopes": re.findall(r'name="scopes" value="([^"]+)"', html),
            "action": "grant",
            **form,
        },
    )


def test_the_consent_page_offers_the_persons_projects(client, owner, two_projects):
    client.force_login(owner)
    client_id = registered_client_id(client, client_name="Codex", redirect_uris=[REDIRECT])
    page, _ = consent(client, client_id, action="cancel")
    html = page.content.decode()
    assert '<option value="">All my projects</option>' in html
    for project in two_projects:
        assert f'<option value="{project.pk}">{project.name}</option>' in html


def test_a_client_confined_to_one_project_finds_only_its_rooms(client, owner, room, two_projects):
    project, other = two_projects
    client.force_login(owner)
    client_id = registered_client_id(client, client_name="Codex", redirect_uris=[REDIRECT])
    _, done = consent(client, client_id, project=str(project.pk))
    assert done.status_code == 302
    token = exchange(client, client_id, REDIRECT, query_of(done["Location"])["code"])
    principal = authenticate_bearer(token["access_token"], resource=RESOURCE)
    assert principal.project_id == project.pk
    assert [r["room_id"] for r in list_rooms(principal.user)] == [str(room.pk)]
    assert [c.project for c in client.get("/connected/apps/").context["clients"]] == ["Demo"]


def test_a_confined_clients_deleted_project_leaves_it_nothing(client, owner, room, two_projects):
    project, _other = two_projects
    client.force_login(owner)
    client_id = registered_client_id(client, client_name="Codex", redirect_uris=[REDIRECT])
    _, done = consent(client, client_id, project=str(project.pk))
    token = exchange(client, client_id, REDIRECT, query_of(done["Location"])["code"])
    project.delete()
    principal = authenticate_bearer(token["access_token"], resource=RESOURCE)
    assert list_rooms(principal.user) == []


def test_all_projects_leaves_the_client_unconfined(client, owner, two_projects):
    client.force_login(owner)
    client_id = registered_client_id(client, client_name="Codex", redirect_uris=[REDIRECT])
    _, done = consent(client, client_id, project="")
    token = exchange(client, client_id, REDIRECT, query_of(done["Location"])["code"])
    principal = authenticate_bearer(token["access_token"], resource=RESOURCE)
    assert principal.project_id is None
    assert len(list_rooms(principal.user)) == 2
    assert ClientGrant.objects.get().is_confined is False
    assert ClientGrant.objects.get().last_used_at is not None  # that call used it


def test_a_project_not_the_persons_is_refused_and_grants_nothing(client, owner, stranger):
    theirs = Project.objects.create(name="Theirs")
    theirs.members.add(stranger)
    client.force_login(owner)
    client_id = registered_client_id(client, client_name="Codex", redirect_uris=[REDIRECT])
    _, done = consent(client, client_id, project=str(theirs.pk))
    assert done.status_code == 200
    assert "is not a project of yours" in done.content.decode().replace("&#x27;", "'")
    assert not ClientGrant.objects.exists()
    assert not Token.objects.filter(type=Token.Type.AUTHORIZATION_CODE).exists()


def test_a_client_trusted_to_skip_consent_is_granted_no_project_choice(client, owner, two_projects):
    client.force_login(owner)
    client_id = registered_client_id(client, client_name="Codex", redirect_uris=[REDIRECT])
    # An administrator marked the client trusted: allauth grants without showing the page.
    Client.objects.filter(id=client_id).update(skip_consent=True)
    done = client.get(authorize_url(client_id, REDIRECT, scope="osfoundry:read"))
    assert done.status_code == 302
    assert done["Location"].startswith(REDIRECT)
    token = exchange(client, client_id, REDIRECT, query_of(done["Location"])["code"])
    assert not ClientGrant.objects.exists()  # nobody chose a project
    principal = authenticate_bearer(token["access_token"], resource=RESOURCE)
    assert principal.project_id is None
    assert len(list_rooms(principal.user)) == 2
