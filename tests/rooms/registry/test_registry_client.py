"""rooms/registry/client.py against a registry that misbehaves at the HTTP level: a server on
127.0.0.1 that answers each request with the next scripted answer (raw bytes), hangs up, or
says nothing. What the client answers, or the exact error it raises, is what is checked."""

import json
import re
import socket
import threading

import pytest

from rooms.registry import client

HANG_UP = "hang up"  # close the connection without an answer
SILENT = "silent"  # keep the connection open and never answer


def ok(body: bytes, *headers: str, length: bool = True) -> bytes:
    head = ["HTTP/1.1 200 OK", *headers]
    if length:
        head.append(f"Content-Length: {len(body)}")
    return ("\r\n".join(head) + "\r\n\r\n").encode() + body


def packument(name: str) -> bytes:
    return json.dumps({"name": name, "dist-tags": {}, "versions": {"1.0.0": {}}}).encode()


class Scripted:
    """Answers the requests it is sent, on whatever connection, with `answers` in order; each
    request is kept in `received` as (request head, body)."""

    def __init__(self, *answers):
        self.answers = list(answers)
        self.received: list[tuple[str, bytes]] = []
        self.stopped = threading.Event()
        self.server = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.server.getsockname()[1]}"
        threading.Thread(target=self.serve, daemon=True).start()

    def serve(self):
        while True:
            try:
                conn, _address = self.server.accept()
            except OSError:
                return
            threading.Thread(target=self.handle, args=(conn,), daemon=True).start()

    def handle(self, conn):
        try:
            self.answer(conn)
        except OSError:
            pass  # the client gave up on the connection: what it does past its cap

    def answer(self, conn):
        with conn:
            buffer = b""
            while True:
                while b"\r\n\r\n" not in buffer:
                    data = conn.recv(65536)
                    if not data:
                        return
                    buffer += data
                head, _sep, buffer = buffer.partition(b"\r\n\r\n")
                found = re.search(rb"content-length: *(\d+)", head, re.IGNORECASE)
                size = int(found.group(1)) if found else 0
                while len(buffer) < size:
                    buffer += conn.recv(65536)
                self.received.append((head.decode(), buffer[:size]))
                buffer = buffer[size:]
                answer = self.answers.pop(0)
                if answer == SILENT:
                    self.stopped.wait()
                    return
                if answer == HANG_UP:
                    return
                conn.sendall(answer)
                if b"connection: close" in answer.lower():
                    return

    def stop(self):
        self.stopped.set()
        self.server.close()


@pytest.fixture
def scripted():
    servers = []

    def start(*answers) -> Scripted:
        servers.append(Scripted(*answers))
        return servers[-1]

    yield start
    for server in servers:
        server.stop()


def registry(server: Scripted, seconds: float = 5) -> client.Registry:
    return client.Registry(client.Deadline(seconds), url=server.url)


def test_a_registry_url_that_is_not_http_is_refused_naming_it():
    with pytest.raises(client.RegistryError) as refused:
        client.Registry(client.Deadline(5), url="ftp://registry.example.org/")
    assert refused.value.message == (
        "NPM_REGISTRY_URL 'ftp://registry.example.org' is not an http(s) URL"
    )


def test_a_packument_the_registry_lets_clients_keep_is_not_fetched_again(scripted):
    server = scripted(ok(packument("kept"), "Cache-Control: public, max-age=60"))
    with registry(server) as first:
        document = first.packument("kept")
    with registry(server) as second:  # another resolution of the same process
        assert second.packument("kept") == document == json.loads(packument("kept"))
    assert len(server.received) == 1


def test_a_packument_kept_twice_counts_once_in_the_budget():
    # Two resolutions that fetched the same packument at once both keep it.
    kept = client._Packuments()
    kept.put("a", {"v": 1}, 10, seconds=60)
    kept.put("a", {"v": 2}, 10, seconds=60)
    assert kept.get("a") == {"v": 2}
    assert kept.size == 10


def test_a_packument_without_versions_is_the_registrys_fault(scripted):
    server = scripted(ok(b'{"name": "empty"}'))
    with registry(server) as npm, pytest.raises(client.RegistryError) as refused:
        npm.packument("empty")
    assert refused.value.message == "the registry's packument of empty lists no versions"
    assert refused.value.unavailable is True


def test_the_configured_token_is_sent_as_a_bearer(scripted, settings):
    settings.NPM_REGISTRY_TOKEN = "s3cret-token"
    server = scripted(ok(packument("private-pkg")))
    with registry(server) as npm:
        npm.packument("private-pkg")
    head = server.received[0][0]
    assert "\r\nAuthorization: Bearer s3cret-token" in head


def test_a_connection_the_registry_closed_is_tried_once_more(scripted):
    server = scripted(HANG_UP, ok(packument("again")))
    with registry(server) as npm:
        assert npm.packument("again")["name"] == "again"
    assert len(server.received) == 2


def test_a_registry_that_closes_the_connection_twice_is_unavailable(scripted):
    server = scripted(HANG_UP, HANG_UP, ok(packument("never")))
    with registry(server) as npm, pytest.raises(client.RegistryError) as refused:
        npm.packument("never")
    assert refused.value.message == "the registry closed the connection"
    assert refused.value.unavailable is True
    assert len(server.received) == 2  # not a third time


def test_an_answer_saying_connection_close_leaves_the_next_request_within_the_deadline(scripted):
    # http.client drops the socket after such an answer; reopening it its own way would give a
    # socket with no deadline (a silent registry then held the resolution for ever).
    server = scripted(ok(packument("first"), "Connection: close"), SILENT)
    with registry(server, seconds=0.5) as npm:
        assert npm.packument("first")["name"] == "first"
        with pytest.raises(client.RegistryError) as refused:
            npm.packument("second")
    assert refused.value.message == "the registry did not answer within 0.5 s"
    assert len(server.received) == 2


def test_headers_past_the_byte_cap_are_too_large(scripted):
    filler = [f"X-Filler-{n}: {'a' * 30_000}" for n in range(3)]  # 90 kB of headers
    server = scripted(ok(b"tiny", *filler))
    with registry(server) as npm, pytest.raises(client.TooLarge) as refused:
        npm.tarball(f"{server.url}/big/-/big-1.0.0.tgz", max_bytes=100, what="big@1.0.0")
    assert refused.value.message == "/big/-/big-1.0.0.tgz is larger than 100 bytes"
    assert refused.value.unavailable is False


def test_a_body_without_a_length_stops_being_read_past_the_cap(scripted):
    server = scripted(ok(b"x" * 5_000, "Connection: close", length=False))
    with registry(server) as npm, pytest.raises(client.TooLarge) as refused:
        npm.tarball(f"{server.url}/long/-/long-1.0.0.tgz", max_bytes=1_000, what="long@1.0.0")
    assert refused.value.message == "/long/-/long-1.0.0.tgz is larger than 1,000 bytes"


def test_a_short_body_without_a_length_is_read_to_its_end(scripted):
    server = scripted(ok(b"all of it", "Connection: close", length=False))
    with registry(server) as npm:
        data = npm.tarball(f"{server.url}/s/-/s-1.0.0.tgz", max_bytes=1_000, what="s@1.0.0")
    assert data == b"all of it"


@pytest.mark.parametrize("body", [b"<html>busy</html>", b"[1, 2]"])
def test_advisories_that_are_not_a_json_object_are_none_checked(scripted, body):
    server = scripted(ok(body))
    with registry(server) as npm:
        assert npm.advisories({"left-pad": ["1.3.0"]}, seconds=5) is None
    head, sent = server.received[0]
    assert head.startswith("POST /-/npm/v1/security/advisories/bulk HTTP/1.1")
    assert json.loads(sent) == {"left-pad": ["1.3.0"]}


class EachRead(client.Deadline):
    """A far deadline, but every read or write may wait `each` seconds only: a timeout that is
    not the deadline's (the client cannot say it waited the whole deadline)."""

    def __init__(self, seconds: float, each: float):
        super().__init__(seconds)
        self.each = each

    def left(self) -> float:
        return min(super().left(), self.each)


def test_a_read_that_times_out_before_the_deadline_says_the_registry_stopped(scripted):
    server = scripted(SILENT)
    npm = client.Registry(EachRead(60, each=0.2), url=server.url)
    with npm, pytest.raises(client.RegistryError) as refused:
        npm.packument("stalled")
    assert refused.value.message == "the registry stopped answering"
    assert refused.value.unavailable is True


def test_a_timed_socket_without_a_deadline_keeps_its_own_timeout():
    mine, theirs = socket.socketpair()
    timed = client._TimedSocket(fileno=mine.detach())
    with timed, theirs:
        timed.settimeout(3)
        timed.sendall(b"ping")
        assert theirs.recv(4) == b"ping"
        assert timed.gettimeout() == 3
