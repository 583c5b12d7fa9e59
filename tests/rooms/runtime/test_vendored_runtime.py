"""The vendored files are exactly what each folder's VERSIONS.json records: the browser bundles
in static/vendor/ (Sucrase, React, the curated libraries under libs/), and the server's own
(Sucrase's tokenizer) in rooms/runtime/js/vendor/; the curated set's manifest, libraries.json,
agrees with them. (The API docs' Swagger UI is django-ninja's own static files, pinned with
django-ninja.)

Rebuild with `cd tools/snippet-runtime && npm ci && npm run build`; this test needs no Node.
"""

import hashlib
import json
from pathlib import Path

import pytest
from django.conf import settings

VENDOR = Path(settings.BASE_DIR) / "static" / "vendor"
SERVER_VENDOR = Path(settings.BASE_DIR) / "rooms" / "runtime" / "js" / "vendor"
MANIFEST = json.loads((VENDOR / "libraries.json").read_text())
CURATED = {
    "@tailwindcss/browser",
    "chart.js",
    "clsx",
    "d3",
    "date-fns",
    "framer-motion",
    "lodash",
    "lucide-react",
    "mathjs",
    "papaparse",
    "react-chartjs-2",
    "recharts",
    "three",
    "uuid",
    "zustand",
}
BUNDLES = {
    VENDOR: {"react/react.js", "sucrase/sucrase.js"}
    | {file["path"] for file in MANIFEST["files"].values()},
    SERVER_VENDOR: {"sucrase-parser/sucrase-parser.js"},
}
INDEXES = {"VERSIONS.json", "libraries.json"}
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
        if p.is_file() and p.relative_to(vendor).as_posix() not in INDEXES
    }
    assert present == recorded


def test_the_library_manifest_agrees_with_the_bundles_it_names():
    recorded = versions(VENDOR)
    assert set(MANIFEST["packages"]) == CURATED
    specifiers = []
    for name, file in MANIFEST["files"].items():
        entry = recorded[file["path"]]
        assert (file["bytes"], file["sha256"]) == (entry["bytes"], entry["sha256"]), name
        package = MANIFEST["packages"][file["package"]]
        assert entry["packages"][file["package"]] == package["version"], name
        (own,) = [lic for lic in entry["licenses"] if lic["package"] == file["package"]]
        assert own["license"] == package["license"], name
        assert set(file["requires"]) <= set(MANIFEST["files"]), name
        assert name in package["files"]
        specifiers += file["modules"]
    assert len(specifiers) == len(set(specifiers))  # each specifier in one file only
    assert {"lodash/debounce", "date-fns/format", "date-fns/locale/fr", "chart.js/auto"} <= set(
        specifiers
    )


def test_no_library_bundles_a_react_of_its_own():
    for file in MANIFEST["files"].values():
        bundled = versions(VENDOR)[file["path"]]["packages"]
        assert not {"react", "react-dom", "scheduler"} & set(bundled), file["path"]


def test_the_api_docs_use_django_ninjas_own_swagger_ui():
    import ninja
    from django.contrib.staticfiles import finders

    for name in ("ninja/swagger-ui-bundle.js", "ninja/swagger-ui.css"):
        assert Path(finders.find(name)).is_relative_to(Path(ninja.__file__).parent)
