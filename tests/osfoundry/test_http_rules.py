"""osfoundry/http.py's rules for the lean routes, one by one: what counts as an origin, whose
it is, which Host is ours, and how a body is read."""

import asyncio

import pytest

from osfoundry.http import (
    BodyTooLarge,
    ClientGone,
    MalformedJSON,
    Request,
    host_problem,
    is_own_origin,
    json_content_type_problem,
    parse_json,
    parse_origin,
    read_body,
)


def request(headers: dict[str, str], scheme: str = "http") -> Request:
    raw = [(name.encode(), value.encode()) for name, value in headers.items()]
    return Request({"type": "http", "scheme": scheme, "headers": raw})


@pytest.mark.parametrize(
    ("value", "parsed"),
    [
        ("http://a.example", ("http", "a.example", 80)),
        ("https://a.example:8443/", ("https", "a.example", 8443)),
        ("null", None),
        ("ftp://a.example", None),
        ("http://user@a.example", None),
        ("http://a.example/path", None),
        ("http://a.example/?q=1", None),
        ("http://a.example/#top", None),
        ("http://a.example:99999", None),
    ],
)
def test_an_origin_is_a_scheme_host_and_port_and_nothing_else(value, parsed):
    assert parse_origin(value) == parsed


def test_only_our_own_origin_is_ours(settings):
    settings.PUBLIC_ORIGIN = ""
    ours = request({"host": "rooms.example:8000"})
    assert is_own_origin(ours, "http://rooms.example:8000")
    assert not is_own_origin(ours, "http://rooms.example:8001")  # another port, another site
    assert not is_own_origin(ours, "https://rooms.example:8000")
    assert not is_own_origin(ours, "null")


def test_the_public_origin_is_ours_whatever_the_host(settings):
    settings.PUBLIC_ORIGIN = "https://rooms.example.com"
    assert is_own_origin(request({"host": "10.0.0.5:8001"}), "https://rooms.example.com")


def test_behind_a_tls_proxy_the_forwarded_scheme_counts_only_when_it_is_a_web_one(settings):
    settings.BEHIND_TLS_PROXY = True
    assert request({"x-forwarded-proto": "https, http"}).scheme == "https"
    assert request({"x-forwarded-proto": "gopher"}).scheme == "http"
    assert request({}, scheme="wss").scheme == "https"  # a websocket: what its page says
    settings.BEHIND_TLS_PROXY = False
    assert request({"x-forwarded-proto": "https"}).scheme == "http"  # not trusted then


def test_with_debug_and_no_allowed_hosts_only_local_hosts_are_ours(settings):
    settings.DEBUG = True
    settings.ALLOWED_HOSTS = []
    assert host_problem(request({"host": "127.0.0.1:8000"})) is None
    assert host_problem(request({"host": "app.localhost"})) is None
    assert host_problem(request({"host": "evil.example"})) == "Forbidden: unknown Host header"


def test_a_content_type_past_what_django_parses_is_refused():
    problem = json_content_type_problem("application/json; " + "x" * 20_000)
    assert problem == "send Content-Type: application/json (got '?')"


def test_a_lone_surrogate_inside_a_list_is_malformed():
    with pytest.raises(MalformedJSON, match="lone surrogate"):
        parse_json(b'{"files": [["a", "\\ud800"]]}')
    assert parse_json(b'["\\ud83d\\ude00"]') == ["\U0001f600"]  # a pair is a character


def messages(*items):
    queue = list(items)

    async def receive():
        return queue.pop(0)

    return receive


def test_a_body_is_read_in_parts_and_refused_past_its_limit():
    chunks = messages(
        {"type": "http.request", "body": b"ab", "more_body": True},
        {"type": "http.request", "body": b"cd", "more_body": False},
    )
    assert asyncio.run(read_body(chunks, limit=4)) == b"abcd"
    with pytest.raises(BodyTooLarge):
        too_long = messages({"type": "http.request", "body": b"abcde", "more_body": True})
        asyncio.run(read_body(too_long, limit=4))
    with pytest.raises(ClientGone):
        asyncio.run(read_body(messages({"type": "http.disconnect"}), limit=4))
