"""An npm registry on 127.0.0.1 for tests and benches: packuments, tarballs and npm's bulk
advisory endpoint, from packages the caller builds (or real tarballs a bench brings).

    registry = NpmRegistry().start()
    registry.publish("left-pad", "1.3.0", {"index.js": "module.exports = ..."})
    settings.NPM_REGISTRY_URL = registry.url
    ...
    registry.stop()

A package version may be published with a wrong integrity hash (`wrong_integrity=True`),
install scripts, a licence, a deprecation, dependencies and peers; a name may be made slow
(`slow={"name": seconds}`: its packument is sent a byte at a time over that long). Every
request is recorded in `requests` as (method, path), also served as JSON at /-/requests.
"""

import base64
import gzip
import hashlib
import io
import json
import tarfile
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import unquote


def tarball(files: dict[str, str | bytes], *, prefix: str = "package") -> bytes:
    """A package tarball as npm packs one: every file under package/, gzipped."""
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as archive:
        for path, content in sorted(files.items()):
            data = content.encode() if isinstance(content, str) else content
            info = tarfile.TarInfo(f"{prefix}/{path}")
            info.size = len(data)
            info.mtime = 499162500  # npm's fixed date: the same files give the same bytes
            info.mode = 0o644
            archive.addfile(info, io.BytesIO(data))
    return gzip.compress(raw.getvalue(), mtime=0)


def sri(data: bytes) -> str:
    return "sha512-" + base64.b64encode(hashlib.sha512(data).digest()).decode()


@dataclass
class Version:
    manifest: dict  # what the packument lists for it (dist filled in when served)
    data: bytes  # the tarball


@dataclass
class NpmRegistry:
    versions: dict[str, dict[str, Version]] = field(default_factory=dict)
    tags: dict[str, dict[str, str]] = field(default_factory=dict)
    advisories: dict[str, list[dict]] = field(default_factory=dict)
    slow: dict[str, float] = field(default_factory=dict)
    requests: list[tuple[str, str]] = field(default_factory=list)
    serves_advisories: bool = True
    down: bool = False  # answers 503 to everything
    documents: dict[str, bytes] = field(default_factory=dict)  # packuments, as served
    cache_control: str = ""  # sent with packuments (a bench sends the public registry's)

    def publish(
        self,
        name: str,
        version: str,
        files: dict[str, str | bytes],
        *,
        dependencies: dict[str, str] | None = None,
        peers: dict[str, str] | None = None,
        manifest: dict | None = None,
        license: str | None = "MIT",
        scripts: dict[str, str] | None = None,
        deprecated: str | None = None,
        wrong_integrity: bool = False,
        tarball_at: str = "",
        tag: bool = True,
    ) -> None:
        """A package version made of `files` (its package.json is written from the rest)."""
        package_json = {"name": name, "version": version, **(manifest or {})}
        if license is not None:
            package_json["license"] = license
        if dependencies:
            package_json["dependencies"] = dependencies
        if peers:
            package_json["peerDependencies"] = peers
        if scripts:
            package_json["scripts"] = scripts
        contents = {"package.json": json.dumps(package_json, indent=2), **files}
        data = tarball(contents)
        listed = {
            key: value
            for key, value in package_json.items()
            if key in ("name", "version", "dependencies", "peerDependencies", "license")
        }
        if scripts and any(k in scripts for k in ("preinstall", "install", "postinstall")):
            listed["hasInstallScript"] = True
        if deprecated:
            listed["deprecated"] = deprecated
        integrity = sri(b"not the tarball" if wrong_integrity else data)
        listed["dist"] = {
            "integrity": integrity,
            "shasum": hashlib.sha1(data).hexdigest(),
            "unpackedSize": sum(
                len(c if isinstance(c, bytes) else c.encode()) for c in contents.values()
            ),
        }
        if tarball_at:  # served as pointing elsewhere
            listed["dist"]["tarball"] = tarball_at
        self.add(name, version, listed, data, tag=tag)

    def add(
        self, name: str, version: str, manifest: dict, data: bytes, *, tag: bool = True
    ) -> None:
        """A version from its packument entry and its tarball (a bench's real ones)."""
        self.versions.setdefault(name, {})[version] = Version(manifest=manifest, data=data)
        if tag:
            self.tags.setdefault(name, {})["latest"] = version
        self.documents.pop(name, None)

    def document(self, name: str) -> bytes:
        """The packument as served: made once, as a registry (or its CDN) serves it."""
        if name not in self.documents:
            self.documents[name] = json.dumps(self.packument(name)).encode()
        return self.documents[name]

    def packument(self, name: str) -> dict:
        versions = {}
        for version, entry in self.versions[name].items():
            manifest = json.loads(json.dumps(entry.manifest))
            dist = manifest.setdefault("dist", {})
            dist.setdefault("tarball", f"{self.url}/{name}/-/{name.split('/')[-1]}-{version}.tgz")
            versions[version] = manifest
        return {"name": name, "dist-tags": self.tags.get(name, {}), "versions": versions}

    # -- the server -----------------------------------------------------------------------------

    def start(self) -> "NpmRegistry":
        registry = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_GET(self):
                path = unquote(self.path.split("?")[0])
                if (
                    path == "/-/requests"
                ):  # what it was asked so far, for a bench in another process
                    return self.answer(200, json.dumps(registry.requests).encode())
                registry.requests.append(("GET", path))
                if registry.down:
                    return self.answer(503, b'{"error": "down"}')
                if "/-/" in path:
                    name, _sep, file = path[1:].partition("/-/")
                    version = file.removesuffix(".tgz").rpartition("-")[2]
                    found = registry.versions.get(name, {}).get(version)
                    if found is None:
                        return self.answer(404, b"{}")
                    return self.answer(200, found.data, "application/octet-stream")
                name = path[1:]
                if name not in registry.versions:
                    return self.answer(404, b'{"error": "Not found"}')
                body = registry.document(name)
                if name in registry.slow:
                    return self.drip(body, registry.slow[name])
                return self.answer(200, body, cache_control=registry.cache_control)

            def do_POST(self):
                path = unquote(self.path.split("?")[0])
                registry.requests.append(("POST", path))
                length = int(self.headers.get("Content-Length") or 0)
                asked = json.loads(self.rfile.read(length) or b"{}")
                if path != "/-/npm/v1/security/advisories/bulk" or not registry.serves_advisories:
                    return self.answer(404, b"{}")
                found = {
                    name: registry.advisories[name] for name in asked if name in registry.advisories
                }
                return self.answer(200, json.dumps(found).encode())

            def answer(self, status, body, kind="application/json", cache_control=""):
                self.send_response(status)
                self.send_header("Content-Type", kind)
                if cache_control:
                    self.send_header("Cache-Control", cache_control)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def drip(self, body, seconds):
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                pause = seconds / max(len(body), 1)
                try:
                    for index in range(len(body)):
                        self.wfile.write(body[index : index + 1])
                        self.wfile.flush()
                        time.sleep(pause)
                except OSError:
                    pass  # the client gave up: what a slow registry's client does

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        return self

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
