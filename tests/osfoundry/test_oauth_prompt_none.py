"""prompt=none asks for an answer without any page (OpenID Connect Core §3.1.2.1): the client
gets an error on its registered redirect URI, with its state, when a person would be needed.
oauthlib reads prompt only on OpenID requests, so a plain OAuth request used to reach the
consent page, a 500 for a visitor who is not logged in."""

import pytest
from allauth.idp.oidc.models import Token

from tests.osfoundry.oauth_helpers import authorize_url, query_of, registered_client_id

pytestmark = pytest.mark.django_db

REDIRECT_URI = "http://127.0.0.1:9/callback"


@pytest.mark.parametrize("scope", ["osfoundry:read", "openid osfoundry:read"])
def test_prompt_none_without_a_session_answers_login_required_to_the_client(client, scope):
    client_id = registered_client_id(client, redirect_uris=[REDIRECT_URI])

    response = client.get(authorize_url(client_id, REDIRECT_URI, scope=scope, prompt="none"))

    assert response.status_code == 302
    assert response["Location"].startswith(REDIRECT_URI + "?")
    answer = query_of(response["Location"])
    assert answer["error"] == "login_required"
    assert answer["state"] == "s-1"
    assert "code" not in answer
    assert not Token.objects.exists()


def test_prompt_none_for_a_logged_in_owner_answers_consent_required_without_a_page(client, owner):
    client_id = registered_client_id(client, redirect_uris=[REDIRECT_URI])
    client.force_login(owner)

    response = client.get(authorize_url(client_id, REDIRECT_URI, prompt="none"))

    assert response.status_code == 302
    answer = query_of(response["Location"])
    assert response["Location"].startswith(REDIRECT_URI + "?")
    assert answer["error"] == "consent_required"
    assert answer["state"] == "s-1"
    assert not Token.objects.exists()


def test_prompt_none_with_an_unregistered_redirect_uri_sends_the_browser_nowhere(client):
    client_id = registered_client_id(client, redirect_uris=[REDIRECT_URI])

    response = client.get(authorize_url(client_id, "https://evil.example/cb", prompt="none"))

    assert response.status_code == 200
    assert "Location" not in response
    assert b"Cannot connect osFoundry" in response.content
    assert not Token.objects.exists()
