"""A client ID that is an https URL names the client's metadata document, which the authorization
endpoint fetches for whoever opens it: https only, from public addresses only (checked after
the DNS lookup, connected to as checked, no redirect followed), within a size and a time, then
kept as long as its Cache-Control says, within bounds. A refusal is a page that says why, word
for word, before any login, and nothing is stored. No test here reaches beyond 127.0.0.1: the
refused addresses are never connected to (no_connections_beyond_loopback fails a test that
tries)."""

from datetime import timedelta

import pytest
from allauth.idp.oidc.models import Client
from django.utils import timezone

from osfoundry import settings as project_settings
from osfoundry.auth import authenticate_bearer
from tests.osfoundry.document_server import Route
from tests.osfoundry.oauth_helpers import (
    RESOURCE,
    authorize_url,
    exchange,
    grant,
    page_text,
)

pytestmark = pytest.mark.django_db

CALLBACK = "http://127.0.0.1:49152/callback"
PUBLIC_ONLY = "and osFoundry fetches client metadata only from public internet addresses"


def refusal(url: str, reason: str) -> str:
    return f"The app's client ID metadata document {url} cannot be used: {reason}."


def assert_refused(response, url: str, reason: str, *, status: int = 400) -> None:
    assert response.status_code == status, response.content[:500]
    text = page_text(response)
    assert refusal(url, reason) in text, text
    assert "Nothing was granted" in text
    assert not Client.objects.filter(id=url).exists()


def test_an_http_client_id_is_refused_before_anything_is_fetched(client, document_server):
    url = document_server.serve_document("/client.json").replace("https://", "http://")

    response = client.get(authorize_url(url, CALLBACK))

    assert_refused(response, url, "it must be an https URL")
    assert not document_server.hits


@pytest.mark.parametrize(
    ("host", "addresses", "reason"),
    [
        ("loopback.cimd.test", ["127.0.0.1"], "resolves to 127.0.0.1, a loopback address"),
        ("ipv6.cimd.test", ["::1"], "resolves to ::1, a loopback address"),
        ("private.cimd.test", ["10.1.2.3"], "resolves to 10.1.2.3, a private address"),
        (
            "metadata.cimd.test",
            ["169.254.169.254"],
            "resolves to 169.254.169.254, the address of a cloud metadata service",
        ),
        ("link.cimd.test", ["169.254.7.7"], "resolves to 169.254.7.7, a link-local address"),
        # Every address is checked, not the first: a public one beside does not help.
        (
            "mixed.cimd.test",
            ["93.184.215.14", "10.1.2.3"],
            "resolves to 10.1.2.3, a private address",
        ),
        # Global by Python's count, and 10.1.2.3 through a NAT64 gateway.
        (
            "nat64.cimd.test",
            ["64:ff9b::a01:203"],
            "resolves to 64:ff9b::a01:203, a private address",
        ),
    ],
)
def test_a_host_that_resolves_to_an_address_that_is_not_public_is_refused(
    client, fake_dns, host, addresses, reason
):
    fake_dns.add(host, addresses)
    url = f"https://{host}/client.json"

    response = client.get(authorize_url(url, CALLBACK))

    assert_refused(response, url, f"{host} {reason}, {PUBLIC_ONLY}")
    assert fake_dns.lookups[host] == 1


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("https://127.0.0.1/client.json", "127.0.0.1 is a loopback address"),
        ("https://[::1]/client.json", "::1 is a loopback address"),
        ("https://10.0.0.5/client.json", "10.0.0.5 is a private address"),
        (
            "https://169.254.169.254/latest/meta-data",
            "169.254.169.254 is the address of a cloud metadata service",
        ),
        (
            "https://[fd00:ec2::254]/latest",
            "fd00:ec2::254 is the address of a cloud metadata service",
        ),
    ],
)
def test_an_address_that_is_not_public_is_refused_as_written(
    client, no_connections_beyond_loopback, url, reason
):
    response = client.get(authorize_url(url, CALLBACK))

    assert_refused(response, url, f"{reason}, {PUBLIC_ONLY}")


def test_loopback_documents_are_refused_unless_a_test_allows_them(
    client, document_server, settings
):
    assert project_settings.OAUTH_CLIENT_METADATA_ALLOW_LOOPBACK is False
    settings.OAUTH_CLIENT_METADATA_ALLOW_LOOPBACK = False
    url = document_server.serve_document("/client.json")

    response = client.get(authorize_url(url, CALLBACK))

    assert_refused(response, url, f"127.0.0.1 is a loopback address, {PUBLIC_ONLY}")
    assert not document_server.hits


@pytest.mark.parametrize("target", ["https://10.0.0.5/client.json", "https://docs.example.net/c"])
def test_a_redirect_is_refused_and_never_followed(client, document_server, target):
    url = document_server.url("/moved.json")
    document_server.routes["/moved.json"] = Route(b"", status=302, headers={"Location": target})

    response = client.get(authorize_url(url, CALLBACK))

    assert_refused(
        response,
        url,
        f"it answered HTTP 302, a redirect to {target}, and a client ID metadata document is "
        "never fetched through a redirect",
    )


@pytest.mark.parametrize("declares_length", [True, False], ids=["declared", "undeclared"])
def test_a_document_over_the_size_cap_is_refused(client, document_server, declares_length):
    url = document_server.serve_document(
        "/big.json", client_uri="https://app.example/" + "x" * 6000
    )
    document_server.routes["/big.json"].declares_length = declares_length

    response = client.get(authorize_url(url, CALLBACK))

    assert_refused(response, url, "it is larger than 5120 bytes, the most osFoundry reads")


@pytest.mark.parametrize(
    "route",
    [Route(b"{}", delay=3), Route(b" " * 200 + b"{}", drip=0.05)],
    ids=["answers-late", "drips-a-byte-at-a-time"],
)
def test_a_server_slower_than_the_time_cap_is_given_up_on(client, document_server, settings, route):
    # The cap covers the whole fetch: a server sending a byte every 50 ms never stays silent
    # for as long as a read's timeout, and is given up on all the same.
    settings.OAUTH_CLIENT_METADATA_FETCH_SECONDS = 1
    url = document_server.url("/slow.json")
    document_server.routes["/slow.json"] = route

    response = client.get(authorize_url(url, CALLBACK))

    assert_refused(response, url, "it did not answer within 1 s")


def test_a_document_whose_client_id_is_another_url_is_refused(client, document_server):
    other = "https://claude.ai/oauth/claude-code-client-metadata"
    url = document_server.serve_document("/client.json", client_id=other)

    response = client.get(authorize_url(url, CALLBACK))

    assert_refused(response, url, f"its client_id is '{other}', not the URL it was fetched from")


@pytest.mark.parametrize(
    ("document", "reason"),
    [
        (
            {"redirect_uris": ["http://127.0.0.1/callback", "http://evil.example/cb"]},
            "redirect_uris: 'http://evil.example/cb' is refused: a redirect URI must use https, "
            "or http on a loopback host (127.0.0.1, [::1] or localhost, any port; RFC 8252)",
        ),
        (
            {"redirect_uris": ["https://app.example/cb#x"]},
            "redirect_uris: 'https://app.example/cb#x' is refused: a redirect URI must not "
            "contain a #fragment",
        ),
        (
            {"redirect_uris": ["javascript:alert(1)//"]},
            "redirect_uris: 'javascript:alert(1)//' is refused: a redirect URI must use https, "
            "or http on a loopback host (127.0.0.1, [::1] or localhost, any port; RFC 8252)",
        ),
        (
            {"post_logout_redirect_uris": ["http://evil.example/bye"]},
            "post_logout_redirect_uris: 'http://evil.example/bye' is refused: a redirect URI must "
            "use https, or http on a loopback host (127.0.0.1, [::1] or localhost, any port; "
            "RFC 8252)",
        ),
        (
            {"redirect_uris": []},
            "redirect_uris: List should have at least 1 item after validation, not 0",
        ),
        ({"redirect_uris": None}, "redirect_uris: Input should be a valid list"),
    ],
    ids=["http-elsewhere", "fragment", "javascript", "logout-elsewhere", "empty", "null"],
)
def test_a_document_with_a_bad_redirect_uri_is_refused(client, document_server, document, reason):
    url = document_server.serve_document("/client.json", **document)

    response = client.get(authorize_url(url, CALLBACK))

    assert_refused(response, url, reason)


@pytest.mark.parametrize(
    ("document", "reason"),
    [
        (
            {"client_name": "Claude \u202eedoC"},
            "client_name: column 8: bidirectional control U+202E (RIGHT-TO-LEFT OVERRIDE) can "
            "make the text around it read differently than it is; remove it from the client name",
        ),
        (
            {"token_endpoint_auth_method": "client_secret_basic"},
            "token_endpoint_auth_method: Input should be 'none'",
        ),
        ({"client_secret": "s3cret"}, "client_secret: Input should be None"),
    ],
    ids=["bidi-name", "secret-method", "secret"],
)
def test_a_document_that_breaks_another_rule_is_refused(client, document_server, document, reason):
    url = document_server.serve_document("/client.json", **document)

    response = client.get(authorize_url(url, CALLBACK))

    assert_refused(response, url, reason)


@pytest.mark.parametrize(
    ("route", "reason"),
    [
        (Route(b"gone", status=404), "it answered HTTP 404, not 200"),
        (Route(b"<html>hello</html>"), "it is not JSON"),
        (Route(b'["https://a.example/c.json"]'), "it is not a JSON object"),
    ],
    ids=["404", "html", "array"],
)
def test_anything_but_a_json_object_answered_200_is_refused(client, document_server, route, reason):
    url = document_server.url("/client.json")
    document_server.routes["/client.json"] = route

    response = client.get(authorize_url(url, CALLBACK))

    assert_refused(response, url, reason)


def test_a_certificate_the_server_does_not_trust_is_refused(client, document_server, monkeypatch):
    monkeypatch.delenv("SSL_CERT_FILE")  # the system's authorities never signed the test's
    url = document_server.serve_document("/client.json")

    response = client.get(authorize_url(url, CALLBACK))

    assert_refused(
        response,
        url,
        "its certificate is not valid for 127.0.0.1 (unable to get local issuer certificate)",
    )


def test_a_document_is_fetched_once_per_lookup_and_connected_to_as_checked(
    client, owner, document_server, fake_dns
):
    # A rebinding name: 127.0.0.1 when checked, 10.0.0.5 for anyone who asks again.
    fake_dns.add("rebind.cimd.test", ["127.0.0.1"], ["10.0.0.5"])
    url = document_server.serve_document("/client.json", host="rebind.cimd.test")
    client.force_login(owner)

    page = client.get(authorize_url(url, CALLBACK))

    assert page.status_code == 200, page.content[:500]
    assert fake_dns.lookups["rebind.cimd.test"] == 1
    assert document_server.hits["/client.json"] == 1


def test_a_fresh_document_is_not_fetched_again(client, owner, document_server):
    url = document_server.serve_document("/client.json")
    client.force_login(owner)

    for _ in range(3):
        assert client.get(authorize_url(url, CALLBACK)).status_code == 200

    assert document_server.hits["/client.json"] == 1


@pytest.mark.parametrize(
    ("cache_control", "fresh_for"),
    [
        ("max-age=120", 120),
        ("public, s-maxage=300, max-age=30", 300),  # many people share this server's copy
        ("no-store", 60),  # at least a minute: a reload is not a fetch
        ("max-age=5", 60),
        ("max-age=999999999", 24 * 3600),  # at most a day
        (None, 600),
    ],
)
def test_cache_control_says_how_long_a_document_is_kept_within_bounds(
    client, owner, document_server, monkeypatch, cache_control, fresh_for
):
    url = document_server.serve_document("/client.json")
    if cache_control:
        document_server.routes["/client.json"].headers["Cache-Control"] = cache_control
    client.force_login(owner)
    start = timezone.now()

    def authorize_after(seconds: int) -> None:
        monkeypatch.setattr(timezone, "now", lambda: start + timedelta(seconds=seconds))
        assert client.get(authorize_url(url, CALLBACK)).status_code == 200

    authorize_after(0)
    authorize_after(fresh_for - 1)
    assert document_server.hits["/client.json"] == 1
    authorize_after(fresh_for + 1)
    assert document_server.hits["/client.json"] == 2


def test_a_stale_document_that_can_no_longer_be_fetched_is_refused(
    client, owner, document_server, monkeypatch
):
    url = document_server.serve_document("/client.json")
    client.force_login(owner)
    assert client.get(authorize_url(url, CALLBACK)).status_code == 200
    document_server.routes["/client.json"] = Route(b"gone", status=410)
    later = timezone.now() + timedelta(hours=1)
    monkeypatch.setattr(timezone, "now", lambda: later)

    response = client.get(authorize_url(url, CALLBACK))

    assert response.status_code == 400
    assert refusal(url, "it answered HTTP 410, not 200") in page_text(response)


def test_fetches_for_one_address_are_rate_limited(client, document_server):
    for attempt in range(10):  # paths it does not serve: 404, so nothing is kept
        url = document_server.url(f"/gone/{attempt}.json")
        assert client.get(authorize_url(url, CALLBACK)).status_code == 400

    response = client.get(authorize_url(document_server.url("/another.json"), CALLBACK))

    assert response.status_code == 429
    assert (
        "Too many client ID metadata documents were fetched for your address; wait a minute and "
        "try again." in page_text(response)
    )
    assert "/another.json" not in document_server.hits


def test_with_documents_turned_off_a_url_client_id_is_refused_and_not_advertised(
    client, owner, document_server, settings
):
    url = document_server.serve_document("/client.json")
    client.force_login(owner)
    assert client.get(authorize_url(url, CALLBACK)).status_code == 200
    settings.OAUTH_CLIENT_METADATA_DOCUMENTS = False

    response = client.get(authorize_url(url, CALLBACK))

    assert response.status_code == 400
    assert refusal(
        url, "this server accepts no client ID metadata documents; the app may register"
    ) in page_text(response)
    metadata = client.get("/.well-known/oauth-authorization-server").json()
    assert "client_id_metadata_document_supported" not in metadata
    assert metadata["registration_endpoint"].endswith("/identity/o/api/clients")


@pytest.mark.parametrize(
    "callback", ["http://127.0.0.1:53412/callback", "http://localhost:53412/callback"]
)
def test_a_document_client_signs_in_with_pkce_on_the_port_it_chose(
    client, owner, room, document_server, callback
):
    # Claude Code's document lists http://localhost/callback and http://127.0.0.1/callback, and
    # it listens on a port of its choosing (RFC 8252 §7.3).
    url = document_server.serve_document("/client.json")
    client.force_login(owner)

    callback_query = grant(client, url, callback, scope="osfoundry:read osfoundry:write")
    tokens = exchange(client, url, callback, callback_query["code"])

    principal = authenticate_bearer(tokens["access_token"], resource=RESOURCE)
    assert principal is not None and principal.user == owner
    assert principal.name == "Test agent via OAuth"
    stored = Client.objects.get(id=url)
    assert stored.type == Client.Type.PUBLIC
    assert set(stored.get_scopes()) >= {"osfoundry:read", "osfoundry:write"}


def test_a_loopback_port_does_not_stretch_to_another_path(client, owner, document_server):
    url = document_server.serve_document("/client.json")
    client.force_login(owner)

    page = client.get(authorize_url(url, "http://localhost:53412/elsewhere"))

    assert "Connect osFoundry" not in page_text(page)
    assert "http://localhost:53412/elsewhere" not in Client.objects.get(id=url).redirect_uris
