"""The OAuth steps an MCP client and its owner's browser take, through the Django test client:
register (RFC 7591), authorize, consent, token. The live-server flow is in test_oauth_flow.py."""

import json
import re
from html import unescape
from urllib.parse import parse_qs, urlencode, urlsplit

REGISTRATION = "/identity/o/api/clients"
AUTHORIZE = "/identity/o/authorize"
TOKEN = "/identity/o/api/token"
LOGOUT = "/identity/o/logout"
# The Django test client's origin is the issuer, so this is the one resource tokens may name.
RESOURCE = "http://testserver/api/v1/external-mcp"
# RFC 7636, appendix B.
VERIFIER = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"
CHALLENGE = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"


def register(client, **metadata):
    body = {"token_endpoint_auth_method": "none", **metadata}
    return client.post(REGISTRATION, json.dumps(body), content_type="application/json")


def registered_client_id(client, **metadata) -> str:
    response = register(client, **metadata)
    assert response.status_code == 201, response.content
    return response.json()["client_id"]


def authorize_url(client_id: str, redirect_uri: str, **extra: str) -> str:
    query = {
        "response_type": "code",
        "client_id": client_id,
        "redirect_uri": redirect_uri,
        "code_challenge": CHALLENGE,
        "code_challenge_method": "S256",
        "scope": "osfoundry:read",
        "state": "s-1",
        "resource": RESOURCE,
        **extra,
    }
    return f"{AUTHORIZE}?{urlencode(query)}"


def hidden_field(html: str, name: str) -> str:
    match = re.search(rf'name="{name}" value="([^"]*)"', html) or re.search(
        rf'value="([^"]*)" name="{name}"', html
    )
    assert match, f"no {name} field on the page"
    return unescape(match.group(1))


def page_text(response) -> str:
    """What a person reads: the body without tags, its whitespace collapsed."""
    html = response.content.decode()
    body = html[html.index("<main") :]
    return " ".join(unescape(re.sub(r"<[^>]+>", "", body)).split())


def query_of(location: str) -> dict[str, str]:
    return {name: values[0] for name, values in parse_qs(urlsplit(location).query).items()}


def grant(client, client_id: str, redirect_uri: str, *, scope: str) -> dict[str, str]:
    """The logged-in owner opens the consent page and clicks Connect; returns the callback's
    query (code, state)."""
    page = client.get(authorize_url(client_id, redirect_uri, scope=scope))
    assert page.status_code == 200, page.content
    html = page.content.decode()
    done = client.post(
        AUTHORIZE,
        {
            "csrfmiddlewaretoken": "not-checked-by-the-test-client",
            "request": hidden_field(html, "request"),
            "scopes": re.findall(r'name="scopes" value="([^"]+)"', html),
            "action": "grant",
        },
    )
    assert done.status_code == 302, done.content
    assert done["Location"].startswith(redirect_uri)
    return query_of(done["Location"])


def exchange(client, client_id: str, redirect_uri: str, code: str) -> dict:
    response = client.post(
        TOKEN,
        {
            "grant_type": "authorization_code",
            "client_id": client_id,
            "redirect_uri": redirect_uri,
            "code": code,
            "code_verifier": VERIFIER,
            "resource": RESOURCE,
        },
    )
    assert response.status_code == 200, response.content
    return response.json()
