"""An https server on 127.0.0.1 serving client ID metadata documents, with a certificate of its
own authority that the test trusts (SSL_CERT_FILE, which OpenSSL reads for Python's default
context), so the fetcher verifies it as it verifies any site. Each path answers what the test
put there; `hits` counts the requests per path."""

import datetime
import http.server
import ipaddress
import json
import socket
import ssl
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

# The names the certificate is good for: the fetcher checks it against the URL's host, so a
# test that makes a name resolve to 127.0.0.1 (fake_dns) can still be served.
NAMES = ("localhost", "rebind.cimd.test", "docs.cimd.test")
ADDRESSES = ("127.0.0.1", "::1")


def write_certificates(folder: Path) -> tuple[Path, Path, Path]:
    """A certificate authority and a server certificate it signed: (ca.pem, cert.pem, key.pem)."""
    now = datetime.datetime.now(datetime.UTC)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "osFoundry tests CA")])
    ca = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=30))
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                key_cert_sign=True,
                crl_sign=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), False)
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    names = [x509.DNSName(name) for name in NAMES]
    names += [x509.IPAddress(ipaddress.ip_address(address)) for address in ADDRESSES]
    cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")]))
        .issuer_name(ca_name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=30))
        .add_extension(x509.SubjectAlternativeName(names), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), False
        )
        .sign(ca_key, hashes.SHA256())
    )
    paths = folder / "ca.pem", folder / "cert.pem", folder / "key.pem"
    paths[0].write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    paths[1].write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    paths[2].write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return paths


@dataclass
class Route:
    body: bytes
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0  # seconds before the answer
    drip: float = 0.0  # seconds between the body's bytes
    declares_length: bool = True  # else the body ends where the connection does


class DocumentServer:
    def __init__(self, cert: Path, key: Path):
        self.routes: dict[str, Route] = {}
        self.hits: Counter[str] = Counter()
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(cert, key)
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                server.hits[self.path] += 1
                route = server.routes.get(self.path) or Route(b"not here", status=404)
                time.sleep(route.delay)
                try:
                    self.send_response(route.status)
                    for name, value in route.headers.items():
                        self.send_header(name, value)
                    if route.declares_length:
                        self.send_header("Content-Length", str(len(route.body)))
                    self.end_headers()
                    if route.drip:
                        for byte in route.body:
                            self.wfile.write(bytes([byte]))
                            self.wfile.flush()
                            time.sleep(route.drip)
                    else:
                        self.wfile.write(route.body)
                except (BrokenPipeError, ConnectionResetError, ssl.SSLError):
                    pass  # the fetcher gave up on us, as it should

            def log_message(self, format, *args):
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.httpd.block_on_close = False
        self.httpd.socket = context.wrap_socket(self.httpd.socket, server_side=True)
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def url(self, path: str, *, host: str = "127.0.0.1") -> str:
        return f"https://{host}:{self.port}{path}"

    def serve_document(self, path: str, *, host: str = "127.0.0.1", **document) -> str:
        """Serve a document whose client_id is its own URL (unless `document` says otherwise),
        with a redirect URI and a name; returns the URL."""
        url = self.url(path, host=host)
        body = {
            "client_id": url,
            "client_name": "Test agent",
            "redirect_uris": ["http://127.0.0.1/callback", "http://localhost/callback"],
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
            "token_endpoint_auth_method": "none",
            **document,
        }
        self.routes[path] = Route(json.dumps(body).encode())
        return url

    def start(self) -> "DocumentServer":
        self.thread.start()
        return self

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def only_loopback(connect):
    """socket.socket.connect, refusing any address but 127.0.0.1, ::1 and local sockets: the
    fetcher must refuse before connecting, and a test that got it wrong fails here instead of
    reaching the network."""

    def guarded(sock, address):
        if sock.family in (socket.AF_INET, socket.AF_INET6):
            host = ipaddress.ip_address(address[0].split("%")[0])
            assert host.is_loopback, f"a test tried to connect to {address[0]}"
        return connect(sock, address)

    return guarded
