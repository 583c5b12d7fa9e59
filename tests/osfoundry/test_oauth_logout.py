"""RP-initiated logout (OpenID Connect RP-Initiated Logout 1.0) sends the browser back to the
client only to a post_logout_redirect_uri registered for that client, that passes the redirect
URI rules, and only when the client's ID token names the person logged in here. Anyone else
ends on our own login page: the endpoint is no open redirect."""

from urllib.parse import parse_qsl, urlencode, urlsplit

import jwt
import pytest
from allauth.core.internal import jwkkit
from allauth.idp.oidc.adapter import get_adapter
from allauth.idp.oidc.models import Client, Token
from django.urls import reverse

from tests.osfoundry.oauth_helpers import LOGOUT, exchange, grant, registered_client_id

pytestmark = pytest.mark.django_db

CALLBACK = "https://app.example/cb"
AFTER = "https://app.example/after"
SCOPE = "openid osfoundry:read"


def logout_url(client_id: str, uri: str, **extra: str) -> str:
    return f"{LOGOUT}?" + urlencode(
        {"client_id": client_id, "post_logout_redirect_uri": uri, **extra}
    )


def id_token_for(client, user, client_id: str, redirect_uri: str = CALLBACK) -> str:
    """The owner connects the client (consent, then the token endpoint); returns its ID token."""
    client.force_login(user)
    code = grant(client, client_id, redirect_uri, scope=SCOPE)["code"]
    return exchange(client, client_id, redirect_uri, code)["id_token"]


def is_logged_in(client) -> bool:
    return "_auth_user_id" in client.session


def log_out(client, url: str):
    """A logged-in person follows the client's logout link: allauth asks whether to log out
    here too (IDP_OIDC_RP_INITIATED_LOGOUT_ASKS_FOR_OP_LOGOUT), and the person says yes."""
    asked = client.get(url)
    assert asked.status_code == 200
    assert b'value="logout"' in asked.content
    fields = dict(parse_qsl(urlsplit(url).query))
    return client.post(
        LOGOUT, {**fields, "action": "logout", "csrfmiddlewaretoken": "not-checked-here"}
    )


@pytest.mark.parametrize("registers_logout_uri", [True, False])
def test_logout_never_sends_an_anonymous_visitor_off_site(client, registers_logout_uri):
    metadata = {"redirect_uris": ["https://evil.example/cb"]}
    if registers_logout_uri:
        metadata["post_logout_redirect_uris"] = ["https://evil.example/after"]
    client_id = registered_client_id(client, **metadata)

    response = client.get(logout_url(client_id, "https://evil.example/after", state="x"))

    assert response.status_code == 302
    assert response["Location"] == reverse("account_login")
    assert Client.objects.filter(id=client_id).exists()


def test_logout_with_the_id_token_of_the_person_logged_in_returns_to_the_client(client, owner):
    client_id = registered_client_id(
        client, redirect_uris=[CALLBACK], post_logout_redirect_uris=[AFTER], scope=SCOPE
    )
    id_token = id_token_for(client, owner, client_id)
    grants = Token.objects.filter(
        user=owner,
        client_id=client_id,
        type__in=[Token.Type.ACCESS_TOKEN, Token.Type.REFRESH_TOKEN],
    )
    assert grants.exists()

    response = log_out(client, logout_url(client_id, AFTER, id_token_hint=id_token, state="st-9"))

    assert response.status_code == 302
    assert response["Location"] == AFTER + "?state=st-9"
    assert not is_logged_in(client)
    assert not grants.exists()  # allauth ends the client's grant with the session


def test_logout_without_an_id_token_logs_out_on_our_own_page(client, owner):
    client_id = registered_client_id(
        client, redirect_uris=[CALLBACK], post_logout_redirect_uris=[AFTER], scope=SCOPE
    )
    client.force_login(owner)

    response = log_out(client, logout_url(client_id, AFTER, state="st-9"))

    assert response.status_code == 302
    assert response["Location"] == reverse("account_login")
    assert not is_logged_in(client)


def test_logout_with_someone_elses_id_token_stays_on_site(client, owner, member):
    client_id = registered_client_id(
        client, redirect_uris=[CALLBACK], post_logout_redirect_uris=[AFTER], scope=SCOPE
    )
    owners_token = id_token_for(client, owner, client_id)
    client.force_login(member)

    response = log_out(client, logout_url(client_id, AFTER, id_token_hint=owners_token))

    assert response.status_code == 302
    assert response["Location"] == reverse("account_login")
    assert not is_logged_in(client)


def test_logout_returns_only_to_a_uri_registered_for_logout(client, owner):
    # allauth falls back to any URL on a redirect URI's origin when the client registered no
    # post_logout_redirect_uris; we do not.
    client_id = registered_client_id(client, redirect_uris=[CALLBACK], scope=SCOPE)
    id_token = id_token_for(client, owner, client_id)

    response = log_out(
        client, logout_url(client_id, "https://app.example/anything", id_token_hint=id_token)
    )

    assert response.status_code == 302
    assert response["Location"] == reverse("account_login")
    assert not is_logged_in(client)


def test_logout_refuses_a_uri_registered_before_the_redirect_rules(client, owner):
    legacy = Client.objects.create(
        name="Registered before the rules",
        type=Client.Type.PUBLIC,
        scopes="openid\nosfoundry:read",
        redirect_uris="http://evil.example/cb",
        data={
            "dcr": True,
            "client_metadata": {"post_logout_redirect_uris": ["http://evil.example/after"]},
        },
    )
    id_token = id_token_for(client, owner, legacy.id, "http://evil.example/cb")

    response = log_out(
        client, logout_url(legacy.id, "http://evil.example/after", id_token_hint=id_token)
    )

    assert response.status_code == 302
    assert response["Location"] == reverse("account_login")
    assert not is_logged_in(client)


def test_logout_with_a_token_of_ours_that_names_no_client_stays_on_site(client, owner):
    # Signed by this server for the person logged in, but issued to no client (as a client
    # credentials token is): it proves no session that client started.
    client_id = registered_client_id(
        client, redirect_uris=[CALLBACK], post_logout_redirect_uris=[AFTER], scope=SCOPE
    )
    claims = jwt.decode(id_token_for(client, owner, client_id), options={"verify_signature": False})
    assert claims.pop("aud") == client_id
    key, private_key = jwkkit.load_jwk_from_pem(get_adapter().get_signing_key().pem)
    unaddressed = jwt.encode(claims, private_key, algorithm="RS256", headers={"kid": key["kid"]})

    response = log_out(client, logout_url(client_id, AFTER, id_token_hint=unaddressed))

    assert response.status_code == 302
    assert response["Location"] == reverse("account_login")
    assert not is_logged_in(client)
