"""Open dynamic client registration accepts only redirect URIs a code may safely travel to:
https anywhere, http only back to this computer (RFC 8252), absolute, no fragment."""

import pytest
from allauth.idp.oidc.models import Client

from tests.osfoundry.oauth_helpers import register

pytestmark = pytest.mark.django_db

HTTPS_OR_LOOPBACK = "must use https, or http on a loopback host"
ABSOLUTE = "must be an absolute URL with a host"
FRAGMENT = "must not contain a #fragment"
CREDENTIALS = "must not contain a user name or password"
WELL_FORMED = "must be a well-formed URL"


@pytest.mark.parametrize(
    ("uri", "rule"),
    [
        ("javascript:alert(1)//", HTTPS_OR_LOOPBACK),
        ("data:text/html,x", HTTPS_OR_LOOPBACK),
        ("not a url", ABSOLUTE),
        ("/callback", ABSOLUTE),
        ("//evil.example/cb", ABSOLUTE),
        ("https:///cb", ABSOLUTE),
        ("http://evil.example/cb", HTTPS_OR_LOOPBACK),
        ("http://127.0.0.1.evil.example/cb", HTTPS_OR_LOOPBACK),
        ("http://localhost.evil.example/cb", HTTPS_OR_LOOPBACK),
        ("ftp://127.0.0.1/cb", HTTPS_OR_LOOPBACK),
        ("https://claude.ai/callback#fragment", FRAGMENT),
        ("http://127.0.0.1:9/callback#", FRAGMENT),
        ("https://claude.ai@evil.example/cb", CREDENTIALS),
        ("https://exa mple.com/cb", WELL_FORMED),
        ("http://127.0.0.1:99999/cb", WELL_FORMED),
        ("https://ok.example/cb\nhttp://evil.example/cb", WELL_FORMED),
    ],
)
def test_registration_refuses_a_redirect_uri_and_stores_nothing(client, uri, rule):
    response = register(client, client_name="Claude Code", redirect_uris=[uri])

    assert response.status_code == 400
    body = response.json()
    assert body["error"] == "invalid_redirect_uri"
    assert repr(uri) in body["error_description"]
    assert rule in body["error_description"]
    assert not Client.objects.exists()


def test_one_bad_redirect_uri_refuses_the_whole_registration(client):
    response = register(
        client, redirect_uris=["http://localhost:33418/callback", "http://evil.example/steal"]
    )

    assert response.status_code == 400
    body = response.json()
    assert body["error"] == "invalid_redirect_uri"
    assert "'http://evil.example/steal'" in body["error_description"]
    assert "localhost:33418" not in body["error_description"]
    assert not Client.objects.exists()


@pytest.mark.parametrize(
    "uri",
    [
        "http://localhost:33418/callback",  # Claude Code
        "http://127.0.0.1:49152/callback",  # the MCP SDKs
        "http://[::1]:8080/callback",
        "http://127.0.0.1/callback",
        "https://claude.ai/api/mcp/auth_callback",  # Claude Desktop and claude.ai
    ],
)
def test_registration_accepts_the_redirect_uris_real_clients_use(client, uri):
    response = register(client, client_name="Claude Code", redirect_uris=[uri])

    assert response.status_code == 201, response.content
    assert response.json()["redirect_uris"] == [uri]
    stored = Client.objects.get(id=response.json()["client_id"])
    assert stored.get_redirect_uris() == [uri]


def test_registration_refuses_a_post_logout_redirect_uri_that_breaks_the_same_rules(client):
    response = register(
        client,
        redirect_uris=["https://app.example/cb"],
        post_logout_redirect_uris=["https://app.example/after", "javascript:alert(1)"],
    )

    assert response.status_code == 400
    body = response.json()
    assert body["error"] == "invalid_client_metadata"
    assert "post_logout_redirect_uris" in body["error_description"]
    assert "'javascript:alert(1)'" in body["error_description"]
    assert HTTPS_OR_LOOPBACK in body["error_description"]
    assert not Client.objects.exists()
