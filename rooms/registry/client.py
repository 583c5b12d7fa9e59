"""HTTP to the npm registry the operator configured (NPM_REGISTRY_URL), within one deadline.

A resolution fetches many documents (packuments, tarballs, the advisories) from several threads;
all of them share the deadline of the whole resolution, and every socket read or write gets only
the time left before it: a per-read timeout alone lets a server that sends a byte a second hold
a proposal for as long as it likes. Each document has a byte cap too. Connections are kept per
thread for the resolution's length (a registry over TLS: one handshake per thread, not per
document), and follow no redirect: a tarball is fetched from the registry's own origin only.

Every failure is a RegistryError saying what happened in words a person can act on; the caller
decides whether it is the registry's fault (retry later) or the package's.
"""

import http.client
import json
import math
import re
import socket
import ssl
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass
from urllib.parse import quote, urlsplit

from django.conf import settings

USER_AGENT = "osFoundry-Rooms"
# What npm asks for: the abbreviated packument ("corgi"), a tenth of the full one's size, which
# has every field a resolution needs but the licence (read from the tarball's package.json).
PACKUMENT_ACCEPT = "application/vnd.npm.install-v1+json; q=1.0, application/json; q=0.8, */*"
PACKUMENT_MAX_BYTES = 32 * 1024 * 1024
ADVISORIES_MAX_BYTES = 4 * 1024 * 1024
HEADER_BYTES = 64 * 1024


# How long a packument is kept at most, whatever its Cache-Control says (the public registry
# says 300 s), and how many bytes of them a process keeps.
PACKUMENT_SECONDS = 300
PACKUMENT_CACHE_BYTES = 64 * 1024 * 1024
MAX_AGE = re.compile(r"(?:^|[,\s])(?:s-maxage|max-age)=(\d+)")


def max_age(cache_control: str | None) -> int:
    text = (cache_control or "").lower()
    if "no-store" in text or "no-cache" in text or "private" in text:
        return 0
    found = MAX_AGE.search(text)
    return int(found.group(1)) if found else 0


class _Packuments:
    """The packuments this process fetched lately, parsed, until they expire."""

    def __init__(self):
        self.lock = threading.Lock()
        self.kept: OrderedDict[str, tuple[float, dict, int]] = OrderedDict()
        self.size = 0

    def get(self, key: str) -> dict | None:
        with self.lock:
            found = self.kept.get(key)
            if found is None:
                return None
            if found[0] < time.monotonic():
                self._drop(key)
                return None
            return found[1]

    def put(self, key: str, document: dict, size: int, seconds: int) -> None:
        if seconds <= 0 or size > PACKUMENT_CACHE_BYTES:
            return
        with self.lock:
            if key in self.kept:
                self._drop(key)
            self.kept[key] = (time.monotonic() + seconds, document, size)
            self.size += size
            while self.size > PACKUMENT_CACHE_BYTES:
                self._drop(next(iter(self.kept)))

    def clear(self) -> None:
        with self.lock:
            self.kept.clear()
            self.size = 0

    def _drop(self, key: str) -> None:
        _at, _document, size = self.kept.pop(key)
        self.size -= size


packuments = _Packuments()


class RegistryError(Exception):
    """A fetch that failed; `unavailable`: the registry's fault (down, slow, an error status),
    worth retrying, as opposed to an answer that says something about the package."""

    def __init__(self, message: str, *, unavailable: bool = True, status: int | None = None):
        super().__init__(message)
        self.message = message
        self.unavailable = unavailable
        self.status = status


class TooLarge(RegistryError):
    def __init__(self, message: str):
        super().__init__(message, unavailable=False)


@dataclass(frozen=True)
class Answer:
    status: int
    body: bytes
    max_age: int = 0  # what its Cache-Control lets a client keep it for, in seconds


class Deadline:
    """The time left of one resolution, shared by its threads."""

    def __init__(self, seconds: float):
        self.seconds = seconds
        self.at = time.monotonic() + seconds

    def left(self) -> float:
        left = self.at - time.monotonic()
        if left <= 0:
            raise RegistryError(f"the registry did not answer within {self.seconds:g} s")
        return left


class _Timed:
    """Mixed into a socket class: each read and write gets only the time left."""

    deadline: Deadline | None = None
    budget = math.inf

    def _time_left(self) -> None:
        if self.deadline is not None:
            self.settimeout(self.deadline.left())  # type: ignore[attr-defined]

    def recv_into(self, buffer, nbytes=0, flags=0):
        self._time_left()
        received = super().recv_into(buffer, nbytes, flags)  # type: ignore[misc]
        self.budget -= received
        if self.budget < 0:
            raise _OverBudget
        return received

    def sendall(self, data, flags=0):
        self._time_left()
        return super().sendall(data, flags)  # type: ignore[misc]


class _OverBudget(Exception):
    pass


class _TimedSocket(_Timed, socket.socket):
    pass


class _TimedSSLSocket(_Timed, ssl.SSLSocket):
    pass


class Registry:
    """The configured registry, for one resolution: `with Registry(deadline) as registry:`."""

    def __init__(self, deadline: Deadline, *, url: str | None = None):
        self.url = (url or settings.NPM_REGISTRY_URL).rstrip("/")
        parts = urlsplit(self.url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise RegistryError(f"NPM_REGISTRY_URL {self.url!r} is not an http(s) URL")
        self.scheme = parts.scheme
        self.host = parts.hostname
        self.port = parts.port or (443 if parts.scheme == "https" else 80)
        self.base_path = parts.path.rstrip("/")
        self.deadline = deadline
        self._local = threading.local()
        self._connections: list[http.client.HTTPConnection] = []
        self._lock = threading.Lock()

    def __enter__(self) -> "Registry":
        return self

    def __exit__(self, *exc) -> None:
        with self._lock:
            for connection in self._connections:
                connection.close()
            self._connections.clear()

    # -- the documents ------------------------------------------------------------------------

    def packument(self, name: str) -> dict:
        """The package's versions and dist-tags; a missing package is not the registry's fault.
        Kept as long as the registry's Cache-Control says, at most PACKUMENT_SECONDS (npm's own
        cache keeps them so: a version published meanwhile is seen that much later)."""
        key = f"{self.url}/{name}"
        if (kept := packuments.get(key)) is not None:
            return kept
        answer = self.get(
            f"/{quote(name, safe='@')}", accept=PACKUMENT_ACCEPT, max_bytes=PACKUMENT_MAX_BYTES
        )
        if answer.status == 404:
            raise RegistryError(f"the registry has no package {name!r}", unavailable=False)
        self.refuse_unless_ok(answer, f"the packument of {name}")
        try:
            document = json.loads(answer.body)
        except ValueError:
            raise RegistryError(f"the registry's packument of {name} is not JSON") from None
        if not isinstance(document, dict) or not isinstance(document.get("versions"), dict):
            raise RegistryError(f"the registry's packument of {name} lists no versions")
        packuments.put(key, document, len(answer.body), min(answer.max_age, PACKUMENT_SECONDS))
        return document

    def tarball(self, url: str, *, max_bytes: int, what: str) -> bytes:
        """A tarball the packument points at, on the registry's own origin only."""
        parts = urlsplit(url)
        port = parts.port or (443 if parts.scheme == "https" else 80)
        if (parts.scheme, parts.hostname, port) != (self.scheme, self.host, self.port):
            raise RegistryError(
                f"the registry points the tarball of {what} at another host ({parts.hostname}); "
                "osFoundry fetches packages from the configured registry only",
                unavailable=False,
            )
        path = parts.path + (f"?{parts.query}" if parts.query else "")
        answer = self.get(path, accept="application/octet-stream", max_bytes=max_bytes, raw=True)
        self.refuse_unless_ok(answer, f"the tarball of {what}")
        return answer.body

    def advisories(self, versions: dict[str, list[str]], *, seconds: float) -> dict | None:
        """npm's bulk advisory answer for these versions, or None where the registry has no such
        endpoint or does not answer it in `seconds` (then nothing was checked)."""
        body = json.dumps(versions).encode()
        own = Deadline(min(seconds, max(self.deadline.at - time.monotonic(), 0.001)))
        try:
            answer = self.request(
                "POST",
                self.base_path + "/-/npm/v1/security/advisories/bulk",
                accept="application/json",
                max_bytes=ADVISORIES_MAX_BYTES,
                body=body,
                deadline=own,
            )
            if answer.status != 200:
                return None
            document = json.loads(answer.body)
        except (RegistryError, ValueError):
            return None
        return document if isinstance(document, dict) else None

    # -- HTTP ---------------------------------------------------------------------------------

    def get(self, path: str, *, accept: str, max_bytes: int, raw: bool = False) -> Answer:
        full = path if raw else self.base_path + path
        return self.request("GET", full, accept=accept, max_bytes=max_bytes)

    def refuse_unless_ok(self, answer: Answer, what: str) -> None:
        if answer.status != 200:
            raise RegistryError(
                f"the registry answered HTTP {answer.status} for {what}", status=answer.status
            )

    def request(
        self,
        method: str,
        path: str,
        *,
        accept: str,
        max_bytes: int,
        body: bytes | None = None,
        deadline: Deadline | None = None,
    ) -> Answer:
        deadline = deadline or self.deadline
        headers = {"Accept": accept, "User-Agent": USER_AGENT, "Accept-Encoding": "identity"}
        if body is not None:
            headers["Content-Type"] = "application/json"
        if settings.NPM_REGISTRY_TOKEN:
            headers["Authorization"] = f"Bearer {settings.NPM_REGISTRY_TOKEN}"
        retried = False
        while True:  # a kept connection the server closed meanwhile: once more
            try:
                connection = self.connection(deadline, budget=max_bytes + HEADER_BYTES)
                connection.request(method, path, body=body, headers=headers)
                response = connection.getresponse()
                body = self.read(response, max_bytes, path)
                return Answer(response.status, body, max_age(response.getheader("Cache-Control")))
            except TooLarge:
                self.drop()
                raise
            except _OverBudget:
                self.drop()
                raise TooLarge(f"{path} is larger than {max_bytes:,} bytes") from None
            except TimeoutError:
                self.drop()
                deadline.left()  # past the deadline: says how long it waited
                raise RegistryError("the registry stopped answering") from None
            except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError):
                self.drop()
                if retried:
                    raise RegistryError("the registry closed the connection") from None
                retried = True
            except (OSError, http.client.HTTPException) as exc:
                self.drop()
                deadline.left()
                reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
                raise RegistryError(f"the registry is unreachable ({reason})") from None

    def read(self, response: http.client.HTTPResponse, max_bytes: int, path: str) -> bytes:
        declared = response.getheader("Content-Length") or ""
        if declared.isdigit() and int(declared) > max_bytes:
            raise TooLarge(f"{path} is larger than {max_bytes:,} bytes")
        body = bytearray()
        while chunk := response.read1(65536):
            body += chunk
            if len(body) > max_bytes:
                raise TooLarge(f"{path} is larger than {max_bytes:,} bytes")
        response.close()  # read to its end: the connection takes the next request
        return bytes(body)

    def connection(self, deadline: Deadline, *, budget: int) -> http.client.HTTPConnection:
        connection = getattr(self._local, "connection", None)
        if connection is not None and connection.sock is None:
            # http.client closed it after an answer saying "Connection: close"; its own reopening
            # would be a socket without the deadline or the byte cap: a new one of ours instead.
            self.drop()
            connection = None
        if connection is None:
            connection = self.connect(deadline)
            self._local.connection = connection
            with self._lock:
                self._connections.append(connection)
        sock = connection.sock
        assert isinstance(sock, _Timed)
        sock.deadline = deadline
        sock.budget = budget
        return connection

    def drop(self) -> None:
        connection = getattr(self._local, "connection", None)
        if connection is not None:
            connection.close()
        self._local.connection = None

    def connect(self, deadline: Deadline) -> http.client.HTTPConnection:
        family, address = self.address()
        raw = _TimedSocket(family, socket.SOCK_STREAM)
        raw.deadline = deadline
        try:
            raw.settimeout(deadline.left())
            raw.connect(address)
        except BaseException:
            raw.close()
            raise
        sock: socket.socket = raw
        connection: http.client.HTTPConnection
        if self.scheme == "https":
            context = ssl.create_default_context()
            context.sslsocket_class = _TimedSSLSocket
            raw.settimeout(deadline.left())
            sock = context.wrap_socket(raw, server_hostname=self.host)
            assert isinstance(sock, _TimedSSLSocket)
            sock.deadline = deadline
            connection = http.client.HTTPSConnection(self.host, self.port)
        else:
            connection = http.client.HTTPConnection(self.host, self.port)
        connection.sock = sock
        return connection

    def address(self) -> tuple[int, tuple]:
        # The operator's registry: its name is looked up as any configured host's (the resolver's
        # own timeout), then the connection and every read are within the deadline.
        found = socket.getaddrinfo(self.host, self.port, type=socket.SOCK_STREAM)
        family, _type, _proto, _name, sockaddr = found[0]
        return family, sockaddr
