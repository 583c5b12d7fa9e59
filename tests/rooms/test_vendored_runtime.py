"""The vendored snippet runtime (static/vendor/) is exactly what VERSIONS.json records.

Rebuild with `cd tools/snippet-runtime && npm ci && npm run build`; this test needs no Node.
"""

import hashlib
import json
from pathlib import Path

from django.conf import settings

VENDOR = Path(settings.BASE_DIR) / "static" / "vendor"


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def versions() -> dict:
    return json.loads((VENDOR / "VERSIONS.json").read_text())["files"]


def test_every_bundle_exists_and_matches_its_recorded_hash():
    recorded = versions()
    assert set(recorded) == {"react/react.js", "sucrase/sucrase.js"}
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
