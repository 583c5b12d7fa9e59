import socket
from collections import Counter

import pytest

from tests.osfoundry.document_server import DocumentServer, only_loopback, write_certificates


@pytest.fixture(scope="session")
def document_certificates(tmp_path_factory):
    return write_certificates(tmp_path_factory.mktemp("document-certificates"))


@pytest.fixture
def no_connections_beyond_loopback(monkeypatch):
    monkeypatch.setattr(socket.socket, "connect", only_loopback(socket.socket.connect))


@pytest.fixture
def document_server(document_certificates, settings, monkeypatch, no_connections_beyond_loopback):
    """Client ID metadata documents on https://127.0.0.1:<port>/, trusted by this test, and
    allowed from a loopback address for this test only."""
    ca, cert, key = document_certificates
    monkeypatch.setenv("SSL_CERT_FILE", str(ca))
    settings.OAUTH_CLIENT_METADATA_ALLOW_LOOPBACK = True
    server = DocumentServer(cert, key).start()
    yield server
    server.stop()


class FakeDNS:
    """socket.getaddrinfo for names the test gave addresses (each lookup takes the next answer,
    the last one repeating); every other name is looked up as usual."""

    def __init__(self, getaddrinfo):
        self.getaddrinfo = getaddrinfo
        self.answers: dict[str, list[list[str]]] = {}
        self.lookups: Counter[str] = Counter()

    def add(self, name: str, *answers: list[str]) -> None:
        self.answers[name] = list(answers)

    def __call__(self, host, port, family=0, type=0, proto=0, flags=0):
        if host not in self.answers:
            return self.getaddrinfo(host, port, family, type, proto, flags)
        self.lookups[host] += 1
        answers = self.answers[host]
        addresses = answers.pop(0) if len(answers) > 1 else answers[0]
        found = []
        for address in addresses:
            for info in self.getaddrinfo(address, port, family, type, proto, flags):
                found.append(info)
        return found


@pytest.fixture
def fake_dns(monkeypatch, no_connections_beyond_loopback):
    dns = FakeDNS(socket.getaddrinfo)
    monkeypatch.setattr(socket, "getaddrinfo", dns)
    return dns
