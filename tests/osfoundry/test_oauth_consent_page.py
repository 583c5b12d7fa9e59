"""The consent page tells a person what the client cannot make up: where Connect sends the
browser. The client's name is its own claim at open registration, and the page says so; a
metadata document's is its host's, and the page names that host."""

import pytest
from allauth.idp.oidc.models import Client, Token

from tests.osfoundry.oauth_helpers import (
    authorize_url,
    page_text,
    register,
    registered_client_id,
)

pytestmark = pytest.mark.django_db


def test_consent_page_names_where_connect_leads_and_that_the_name_is_self_declared(client, owner):
    # https is allowed anywhere (claude.ai needs it), so a look-alike client can still
    # register: the page must let the person see through the name it chose.
    response = register(
        client, client_name="Claude Code", redirect_uris=["https://evil.example/steal"]
    )
    client_id = response.json()["client_id"]
    client.force_login(owner)

    page = client.get(authorize_url(client_id, "https://evil.example/steal"))

    assert page.status_code == 200
    text = page_text(page)
    assert "An app that calls itself “Claude Code” asks to act for owner" in text
    assert "Connecting will send you to evil.example" in text
    assert not Token.objects.exists()


def test_consent_page_says_a_loopback_redirect_returns_to_this_computer(client, owner):
    response = register(client, redirect_uris=["http://127.0.0.1:49152/callback"])
    client_id = response.json()["client_id"]
    client.force_login(owner)

    page = client.get(authorize_url(client_id, "http://127.0.0.1:49152/callback"))

    text = page_text(page)
    assert "An app that did not give its name asks to act for owner" in text
    assert "Connecting will send you to 127.0.0.1:49152, a program on this computer" in text


def test_a_callback_the_policy_cannot_name_adds_nothing_to_it(client, owner):
    # A client registered before the redirect URI rules, with an app's own scheme: its
    # consent page still opens, and its form-action stays 'self' alone.
    legacy = "cursor://anysphere.cursor-retrieval/oauth"
    client_id = registered_client_id(client, redirect_uris=["https://app.example/cb"])
    stored = Client.objects.get(id=client_id)
    stored.set_redirect_uris([legacy])
    stored.save()
    client.force_login(owner)

    page = client.get(authorize_url(client_id, legacy))

    assert page.status_code == 200
    assert "asks to act for owner" in page_text(page)
    policy = page["Content-Security-Policy"] + ";"
    assert "; form-action 'self';" in policy
    assert "cursor:" not in policy


def test_consent_page_names_the_host_that_published_a_metadata_document(
    client, owner, document_server
):
    # The name and the redirect URIs are whatever the document's host wrote: the page names it
    # beside them (the draft, "OAuth Phishing Attacks").
    url = document_server.serve_document("/client.json", client_name="Claude Code")
    client.force_login(owner)

    page = client.get(authorize_url(url, "http://localhost:49152/callback"))

    assert page.status_code == 200
    text = page_text(page)
    host = f"127.0.0.1:{document_server.port}"
    assert "An app that calls itself “Claude Code” asks to act for owner" in text
    assert f"Its name and where it sends you are published by {host}." in text
    assert "Connecting will send you to localhost:49152, a program on this computer." in text
    assert f"osFoundry checked only that {host} publishes this one" in text
    assert not Token.objects.exists()
