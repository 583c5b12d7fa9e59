"""The rules a client ID metadata document's address and its server's addresses must meet
(osfoundry/oauth_documents.py, osfoundry/oauth_fetch.py), each refusal word for word: the
flows that reach them through the authorization endpoint are in test_oauth_metadata_documents."""

import ipaddress
import socket
import time

import pytest

from osfoundry.oauth_documents import MAX_CLIENT_ID, client_id_problem
from osfoundry.oauth_fetch import FetchRefused, address_problem, connect
from tests.servers import free_port


@pytest.mark.parametrize(
    ("client_id", "problem"),
    [
        ("https://app.example/client.json", None),
        ("https://app.example:8443/oauth/client.json", None),
        ("http://app.example/client.json", "it must be an https URL"),
        (
            "https://app.example/" + "c" * MAX_CLIENT_ID,
            f"it is longer than {MAX_CLIENT_ID} characters, the longest client ID osFoundry stores",
        ),
        (
            "https://app.example/a b.json",
            "it must be written in printable ASCII without spaces (a host in punycode)",
        ),
        (
            "https://äpp.example/client.json",
            "it must be written in printable ASCII without spaces (a host in punycode)",
        ),
        ("https://app.example:99999/c.json", "its port must be a number from 1 to 65535"),
        ("https://me:pw@app.example/c.json", "it must not contain a user name or password"),
        ("https:///c.json", "it must name a host"),
        ("https://App.Example/c.json", "its host must be written in lower case"),
        ("https://app.example", "it must have a path, as in https://app.example/client.json"),
        ("https://app.example/", "it must have a path, as in https://app.example/client.json"),
        ("https://app.example/a/../c.json", "its path must not contain . or .. segments"),
        ("https://app.example/a/%2E%2E/c.json", "its path must not contain . or .. segments"),
        ("https://app.example/c.json?v=1", "it must not have a query string"),
        ("https://app.example/c.json?", "it must not have a query string"),
        ("https://app.example/c.json#x", "it must not have a #fragment"),
    ],
)
def test_a_document_address_breaks_at_most_the_first_rule_it_meets(client_id, problem):
    assert client_id_problem(client_id) == problem


@pytest.mark.parametrize(
    ("address", "problem"),
    [
        ("93.184.215.14", None),
        ("2606:2800:21f:cb07:6820:80da:af6b:8b2c", None),
        ("169.254.169.254", "the address of a cloud metadata service"),
        ("127.0.0.1", "a loopback address"),
        ("::1", "a loopback address"),
        ("169.254.10.1", "a link-local address"),
        ("fe80::1", "a link-local address"),
        ("0.0.0.0", "an unspecified address"),
        ("::", "an unspecified address"),
        ("224.0.0.1", "a multicast address"),
        ("ff02::1", "a multicast address"),
        ("10.0.0.5", "a private address"),
        ("192.168.1.1", "a private address"),
        ("fc00::1", "a private address"),
        ("100.64.0.1", "a private address"),  # carrier-grade NAT
        ("192.0.2.1", "an address that is not public"),
        ("::ffff:10.0.0.5", "a private address"),
        ("2002:a00:5::1", "a private address"),  # 6to4 of 10.0.0.5
        ("2001:0:4136:e378:8000:63bf:f5ff:fffa", "a private address"),  # Teredo of 10.0.0.5
        ("64:ff9b::a00:5", "a private address"),  # NAT64 of 10.0.0.5
        ("64:ff9b::5db8:d70e", None),  # NAT64 of a public address
    ],
)
def test_only_public_addresses_are_fetched_from(address, problem):
    assert address_problem(ipaddress.ip_address(address), allow_loopback=False) == problem


@pytest.mark.parametrize("address", ["127.0.0.1", "::1"])
def test_a_test_may_let_loopback_through_and_nothing_else(address):
    assert address_problem(ipaddress.ip_address(address), allow_loopback=True) is None
    assert address_problem(ipaddress.ip_address("10.0.0.1"), allow_loopback=True) == (
        "a private address"
    )


def test_a_host_whose_every_address_refuses_the_connection_is_named():
    closed = [(socket.AF_INET, ("127.0.0.1", free_port())), (socket.AF_INET, ("127.0.0.1", 1))]
    with pytest.raises(FetchRefused) as refused:
        connect("docs.example", closed, deadline=time.monotonic() + 5, late="too late")
    assert str(refused.value) == "docs.example does not accept connections"


def test_a_fetch_whose_time_is_up_is_given_up_before_it_connects():
    addresses = [(socket.AF_INET, ("127.0.0.1", 9))]
    with pytest.raises(FetchRefused) as refused:
        connect("docs.example", addresses, deadline=time.monotonic() - 1, late="it was late")
    assert str(refused.value) == "it was late"
