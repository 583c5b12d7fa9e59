"""Where Connect and logout may send a browser, as the consent page and the CSP name it."""

import pytest

from osfoundry.oauth import RedirectDestination, callback_source, redirect_destination


@pytest.mark.parametrize(
    ("uri", "destination"),
    [
        ("http://127.0.0.1:8976/callback", RedirectDestination("127.0.0.1:8976", True)),
        ("http://[::1]:33418/cb", RedirectDestination("[::1]:33418", True)),
        ("https://app.example/cb", RedirectDestination("app.example", False)),
        # A look-alike letter from another script shows as what it is.
        ("https://аpp.example/cb", RedirectDestination("xn--pp-6kc.example", False)),
        # Not encodable as IDNA (an empty label): named as written.
        ("https://app..example/cb", RedirectDestination("app..example", False)),
    ],
)
def test_the_destination_is_named_by_its_host_and_port(uri, destination):
    assert redirect_destination(uri) == destination


@pytest.mark.parametrize(
    ("uri", "source"),
    [
        ("http://127.0.0.1:8976/callback", "http://127.0.0.1:8976"),
        ("HTTPS://App.Example/cb", "https://app.example"),
        ("https://user@app.example/cb", "https://app.example"),
        ("cursor://anysphere.cursor-retrieval/oauth", None),
        ("https://app.example;script-src/cb", None),
    ],
)
def test_a_callback_adds_only_its_own_origin_to_the_policy(uri, source):
    assert callback_source(uri) == source
