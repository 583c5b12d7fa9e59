"""The vendored snippet runtime and Swagger UI (static/vendor/) are exactly what VERSIONS.json
records.

Rebuild with `cd tools/snippet-runtime && npm ci && npm run build` and
`cd tools/swagger-ui && npm ci && npm run build`; this test needs no Node.
"""

import hashlib
import json
from pathlib import Path

from django.conf import settings

VENDOR = Path(settings.BASE_DIR) / "static" / "vendor"
SWAGGER_TOOL = Path(settings.BASE_DIR) / "tools" / "swagger-ui"
SWAGGER_FILES = {"swagger-ui-bundle.js", "swagger-ui.css", "swagger-ui.css.map"}


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def versions() -> dict:
    return json.loads((VENDOR / "VERSIONS.json").read_text())["files"]


def test_every_bundle_exists_and_matches_its_recorded_hash():
    recorded = versions()
    swagger = {f"swagger-ui/{name}" for name in SWAGGER_FILES}
    assert set(recorded) == {"react/react.js", "sucrase/sucrase.js"} | swagger
    for name, entry in recorded.items():
        path = VENDOR / name
        assert path.is_file(), f"{name} is missing; rebuild tools/snippet-runtime"
        assert path.stat().st_size == entry["bytes"], name
        assert sha256(path) == entry["sha256"], f"{name} differs from VERSIONS.json"
        assert entry["packages"], name


def test_every_bundled_package_has_its_license_file():
    for name, entry in versions().items():
        licensed = set()
        for license_entry in entry["licenses"]:
            path = VENDOR / license_entry["file"]
            assert path.is_file(), f"{license_entry['file']} is missing"
            assert path.read_text().strip(), f"{license_entry['file']} is empty"
            assert sha256(path) == license_entry["sha256"], license_entry["file"]
            licensed.add(license_entry["package"])
        assert licensed == set(entry["packages"]), f"{name}: packages without a LICENSE file"


def test_no_unrecorded_files_in_the_vendor_folder():
    recorded = set(versions())
    for entry in versions().values():
        recorded |= {license_entry["file"] for license_entry in entry["licenses"]}
    present = {
        p.relative_to(VENDOR).as_posix()
        for p in VENDOR.rglob("*")
        if p.is_file() and p.name != "VERSIONS.json"
    }
    assert present == recorded


def test_swagger_ui_is_the_pinned_package_copied_unchanged():
    pinned = json.loads((SWAGGER_TOOL / "package.json").read_text())["dependencies"]
    version = pinned["swagger-ui-dist"]
    assert version[0].isdigit(), "pin an exact version"
    lock = json.loads((SWAGGER_TOOL / "package-lock.json").read_text())
    locked = lock["packages"]["node_modules/swagger-ui-dist"]
    assert locked["version"] == version
    for name in SWAGGER_FILES:
        entry = versions()[f"swagger-ui/{name}"]
        assert entry["packages"] == {"swagger-ui-dist": version}
        assert entry["integrity"] == locked["integrity"]
        assert entry["copied_from"] == f"swagger-ui-dist@{version}/{name} (unchanged)"
