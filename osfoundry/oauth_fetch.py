"""One https GET of a URL a stranger chose, safe to send from inside our network.

A client ID metadata document (osfoundry/oauth_documents.py) is fetched for whoever opens an
authorization URL, logged in or not, so its URL is the caller's choice: it could name our own
Redis on 127.0.0.1, a database on 10.0.0.5 or the cloud's metadata service at 169.254.169.254,
whose answer holds the host's credentials (SSRF). So this fetch:

- speaks https only and verifies the certificate against the URL's host;
- resolves the host once and goes on only if every address is a public internet address
  (`address_problem`), then connects to an address it checked: no second lookup, so a DNS
  answer that changes between the check and the connection (rebinding) changes nothing;
- follows no redirect: a 3xx is refused, naming where it pointed (the draft says MUST NOT, and
  a redirect is the other way to reach an address that was never checked);
- ends after `seconds` in all, the DNS lookup, the TLS handshake and a server that sends one
  byte at a time included (every read gets only the time left), and reads at most `max_bytes`
  of body.

Every refusal is a FetchRefused whose text is a clause a person can read ("10.0.0.5 is a
private address, ..."), shown on the page that asked for the fetch.
"""

import http.client
import ipaddress
import math
import socket
import ssl
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from urllib.parse import urlsplit

type IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

# The metadata services clouds answer on, which hand out the host's credentials: AWS, Azure,
# Google, Oracle, DigitalOcean and OpenStack (169.254.169.254), AWS ECS tasks (169.254.170.2),
# AWS over IPv6 (fd00:ec2::254), Alibaba (100.100.100.200), Tencent (169.254.0.23). None is a
# global address; they are named so the refusal says what they are.
METADATA_SERVICES = frozenset(
    ipaddress.ip_address(address)
    for address in (
        "169.254.169.254",
        "169.254.170.2",
        "fd00:ec2::254",
        "100.100.100.200",
        "169.254.0.23",
    )
)
PRIVATE_NETWORKS = tuple(
    ipaddress.ip_network(network)
    for network in ("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "100.64.0.0/10", "fc00::/7")
)
NAT64 = (ipaddress.ip_network("64:ff9b::/96"), ipaddress.ip_network("64:ff9b:1::/48"))

PUBLIC_ONLY = "and osFoundry fetches client metadata only from public internet addresses"

# The status line and headers may take this much beside the body.
HEADER_BYTES = 16 * 1024

# getaddrinfo cannot be interrupted: it runs here, and a lookup past the time left is given up
# on (its thread finishes on the resolver's own timeout). Four: a name server that never answers
# ties up four threads, not one per request.
_resolver = ThreadPoolExecutor(max_workers=4, thread_name_prefix="oauth-fetch-dns")


class FetchRefused(Exception):
    """Why the fetch was refused or given up, as a clause for a person to read."""


@dataclass(frozen=True)
class Answer:
    status: int
    headers: http.client.HTTPMessage
    body: bytes


def fetch_public_https(
    url: str, *, max_bytes: int, seconds: float, allow_loopback: bool = False
) -> Answer:
    """GET `url` under the rules above. `allow_loopback` lets 127.0.0.1 and ::1 through, for a
    test's own server; no other address that is not public, ever."""
    parts = urlsplit(url)
    if parts.scheme != "https" or not parts.hostname:
        raise FetchRefused("it must be an https URL")
    host, port = parts.hostname, parts.port or 443
    deadline = time.monotonic() + seconds
    late = f"it did not answer within {seconds:g} s"
    addresses = resolve(host, port, deadline=deadline, late=late)
    for _family, sockaddr in addresses:
        address = ipaddress.ip_address(sockaddr[0])
        problem = address_problem(address, allow_loopback=allow_loopback)
        if problem is not None:
            subject = f"{address} is" if host == f"{address}" else f"{host} resolves to {address},"
            raise FetchRefused(f"{subject} {problem}, {PUBLIC_ONLY}")
    raw = connect(host, addresses, deadline=deadline, late=late)
    try:
        return exchange(raw, host, port, parts, max_bytes=max_bytes, deadline=deadline, late=late)
    finally:
        raw.close()


def address_problem(address: IPAddress, *, allow_loopback: bool) -> str | None:
    """What `address` is, when it is not one to fetch from: "a private address"; else None.

    Python's is_global is the IANA registry's "globally reachable", less multicast (which it
    counts as global), and an IPv6 address that carries an IPv4 one (mapped, 6to4, Teredo,
    NAT64) is judged by that one too: 64:ff9b::a00:5 is global, and reaches 10.0.0.5 through a
    NAT64 gateway."""
    embedded = embedded_ipv4(address)
    if embedded is not None:
        problem = address_problem(embedded, allow_loopback=allow_loopback)
        if problem is not None:
            return problem
    if address in METADATA_SERVICES:
        return "the address of a cloud metadata service"
    if address.is_loopback:
        return None if allow_loopback else "a loopback address"
    if address.is_link_local:
        return "a link-local address"
    if address.is_unspecified:
        return "an unspecified address"
    if address.is_multicast:
        return "a multicast address"
    if any(address in network for network in PRIVATE_NETWORKS):
        return "a private address"
    if embedded is None and not address.is_global:
        return "an address that is not public"
    return None


def embedded_ipv4(address: IPAddress) -> ipaddress.IPv4Address | None:
    if not isinstance(address, ipaddress.IPv6Address):
        return None
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address.sixtofour is not None:
        return address.sixtofour
    if address.teredo is not None:
        return address.teredo[1]  # the client's address, (server, client)
    if any(address in network for network in NAT64):
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    return None


def remaining(deadline: float, late: str) -> float:
    left = deadline - time.monotonic()
    if left <= 0:
        raise FetchRefused(late)
    return left


def resolve(host: str, port: int, *, deadline: float, late: str) -> list[tuple[int, tuple]]:
    lookup = _resolver.submit(
        socket.getaddrinfo, host, port, type=socket.SOCK_STREAM, proto=socket.IPPROTO_TCP
    )
    try:
        found = lookup.result(timeout=remaining(deadline, late))
    except TimeoutError:
        raise FetchRefused(late) from None
    except (socket.gaierror, UnicodeError):
        raise FetchRefused(f"{host} does not resolve") from None
    addresses: list[tuple[int, tuple]] = [
        (family, sockaddr) for family, _type, _proto, _name, sockaddr in found
    ]
    if not addresses:
        raise FetchRefused(f"{host} does not resolve")
    return addresses


def connect(host: str, addresses: list[tuple[int, tuple]], *, deadline: float, late: str):
    """A TCP connection to the first of the checked addresses that answers."""
    for family, sockaddr in addresses:
        raw = socket.socket(family, socket.SOCK_STREAM)
        try:
            raw.settimeout(remaining(deadline, late))
            raw.connect(sockaddr)
        except TimeoutError:
            raw.close()
            raise FetchRefused(late) from None
        except OSError:
            raw.close()
            continue
        except BaseException:
            raw.close()
            raise
        return raw
    raise FetchRefused(f"{host} does not accept connections")


class DeadlineSocket(ssl.SSLSocket):
    """A TLS socket whose every read and write gets only the time left before `deadline`, and
    that reads at most `budget` bytes: a per-read timeout alone lets a server that sends a byte
    a second hold the fetch for as long as it likes."""

    deadline = math.inf
    budget = 0
    late = ""

    def _time_left(self) -> None:
        self.settimeout(remaining(self.deadline, self.late))

    def recv_into(self, buffer, nbytes=0, flags=0):
        self._time_left()
        received = super().recv_into(buffer, nbytes, flags)
        self.budget -= received
        if self.budget < 0:
            raise AnswerTooLarge
        return received

    def sendall(self, data, flags=0):
        self._time_left()
        return super().sendall(data, flags)


class AnswerTooLarge(Exception):
    pass


class Connection(http.client.HTTPConnection):
    """Writes the request and parses the answer on a socket it is given, already connected to a
    checked address and speaking TLS; it never connects itself. Port 443 is its default, so the
    Host header reads as a browser's would."""

    default_port = 443


def exchange(raw, host, port, parts, *, max_bytes, deadline, late) -> Answer:
    context = ssl.create_default_context()  # the system's CAs, or SSL_CERT_FILE's
    context.sslsocket_class = DeadlineSocket
    too_large = f"it is larger than {max_bytes} bytes, the most osFoundry reads"
    try:
        raw.settimeout(remaining(deadline, late))  # the handshake, as a whole
        tls = context.wrap_socket(raw, server_hostname=host)
        assert isinstance(tls, DeadlineSocket)
        tls.deadline, tls.late, tls.budget = deadline, late, max_bytes + HEADER_BYTES
        conn = Connection(host, port)
        conn.sock = tls
        path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        conn.request(
            "GET", path, headers={"Accept": "application/json", "User-Agent": "osFoundry-Rooms"}
        )
        response = conn.getresponse()
        if 300 <= response.status < 400:
            target = shown(response.getheader("Location") or "nowhere")
            raise FetchRefused(
                f"it answered HTTP {response.status}, a redirect to {target}, and a client ID "
                "metadata document is never fetched through a redirect"
            )
        declared = response.getheader("Content-Length") or ""
        if declared.isdigit() and int(declared) > max_bytes:
            raise FetchRefused(too_large)
        body = bytearray()
        while chunk := response.read(min(4096, max_bytes + 1 - len(body))):
            body += chunk
            if len(body) > max_bytes:
                raise FetchRefused(too_large)
        return Answer(status=response.status, headers=response.headers, body=bytes(body))
    except TimeoutError:
        raise FetchRefused(late) from None
    except AnswerTooLarge:
        raise FetchRefused(too_large) from None
    except ssl.SSLCertVerificationError as error:
        raise FetchRefused(
            f"its certificate is not valid for {host} ({error.verify_message})"
        ) from None
    except (OSError, http.client.HTTPException) as error:
        raise FetchRefused(f"the connection to {host} failed ({type(error).__name__})") from None


def shown(text: str, *, limit: int = 200) -> str:
    """`text` as a page may show it: printable ASCII as written, anything else escaped."""
    if not (text.isascii() and text.isprintable()):
        text = ascii(text)
    return text if len(text) <= limit else text[: limit - 1] + "…"
