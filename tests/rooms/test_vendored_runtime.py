"""The vendored files are exactly what each folder's VERSIONS.json records: the browser bundles
and Swagger UI in static/vendor/, and the server's own (Sucrase's tokenizer) in rooms/js/vendor/.

Rebuild with `cd tools/snippet-runtime && npm ci && npm run build` and
`cd tools/swagger-ui && npm ci && npm run build`; this test needs no Node.
"""

import hashlib
import json
from pathlib import Path

import pytest
from django.conf import settings

VENDOR = Path(settings.BASE_DIR) / "static" / "vendor"
SERVER_VENDOR = Path(settings.BASE_DIR) / "rooms" / "js" / "vendor"
SWAGGER_TOOL = Path(settings.BASE_DIR) / "tools" / "swagger-ui"
SWAGGER_FILES = {"swagger-ui-bundle.js", "swagger-ui.css", "swagger-ui.css.map"}
BUNDLES = {
    VENDOR: {"react/react.js", "sucrase/sucrase.js"} | {f"swagger-ui/{n}" for n in SWAGGER_FILES},
    SERVER_VENDOR: {"sucrase-parser/sucrase-parser.js"},
}
FOLDERS = pytest.mark.parametrize("vendor", list(BUNDLES), ids=["static", "server"])


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def versions(vendor: Path) -> dict:
    return json.loads((vendor / "VERSIONS.json").read_text())["files"]


@FOLDERS
def test_every_bundle_exists_and_matches_its_recorded_hash(vendor):
    recorded = versions(vendor)
    assert set(recorded) == BUNDLES[vendor]
    for name, entry in recorded.items():
        path = vendor / name
        assert path.is_file(), f"{name} is missing; rebuild it (see this module's docstring)"
        assert path.stat().st_size == entry["bytes"], name
        assert sha256(path) == entry["sha256"], f"{name} differs from VERSIONS.json"
        assert entry["packages"], name


@FOLDERS
def test_every_bundled_package_has_its_license_file(vendor):
    for name, entry in versions(vendor).items():
        licensed = set()
        for license_entry in entry["licenses"]:
            path = vendor / license_entry["file"]
            assert path.is_file(), f"{license_entry['file']} is missing"
            assert path.read_text().strip(), f"{license_entry['file']} is empty"
            assert sha256(path) == license_entry["sha256"], license_entry["file"]
            licensed.add(license_entry["package"])
        assert licensed == set(entry["packages"]), f"{name}: packages without a LICENSE file"


@FOLDERS
def test_no_unrecorded_files_in_the_vendor_folder(vendor):
    recorded = set(versions(vendor))
    for entry in versions(vendor).values():
        recorded |= {license_entry["file"] for license_entry in entry["licenses"]}
    present = {
        p.relative_to(vendor).as_posix()
        for p in vendor.rglob("*")
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
        entry = versions(VENDOR)[f"swagger-ui/{name}"]
        assert entry["packages"] == {"swagger-ui-dist": version}
        assert entry["integrity"] == locked["integrity"]
        assert entry["copied_from"] == f"swagger-ui-dist@{version}/{name} (unchanged)"
