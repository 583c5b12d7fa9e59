"""Open dynamic client registration holds a client's name to an app name's rules: the name is
shown on the consent page and on Connected apps, where a bidirectional control could make one
app read as another."""

import pytest
from allauth.idp.oidc.models import Client

from tests.osfoundry.oauth_helpers import register

pytestmark = pytest.mark.django_db

REDIRECT = "http://127.0.0.1:8976/callback"


@pytest.mark.parametrize(
    ("name", "description"),
    [
        # Django's form field refuses a NUL before our rules see the name: it still names it.
        ("Claude\x00Code", "'client_name': Null characters are not allowed."),
        (
            "Claude \u202eedoC",
            "client_name: column 8: bidirectional control U+202E (RIGHT-TO-LEFT OVERRIDE) can "
            "make the text around it read differently than it is; remove it from the client name",
        ),
        (
            "Claude\x1b[2JCode",
            "client_name: column 7: control character U+001B (ESCAPE) has no place in a one-line "
            "value; remove it from the client name",
        ),
    ],
    ids=["nul", "right-to-left-override", "escape"],
)
def test_registration_refuses_a_client_name_that_breaks_the_name_rules(client, name, description):
    response = register(client, client_name=name, redirect_uris=[REDIRECT])
    assert response.status_code == 400
    assert response.json() == {
        "error": "invalid_client_metadata",
        "error_description": description,
    }
    assert not Client.objects.exists()


def test_a_client_name_in_any_script_is_registered(client):
    response = register(client, client_name="Клод · کلاود 🤖", redirect_uris=[REDIRECT])
    assert response.status_code == 201, response.content
    assert Client.objects.get().name == "Клод · کلاود 🤖"
