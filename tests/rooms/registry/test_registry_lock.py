"""rooms/registry/lock.py on its own: resolve_packages against the test's registry on 127.0.0.1
(tests/npmregistry.py) for what a resolution fetches, keeps and refuses; the lock's pieces
(advisories, a stored lock's imports, the cache of stored packages' files) called directly."""

import gzip
import json
import uuid

import pytest

from osfoundry.errors import Invalid
from rooms.models import NpmPackage
from rooms.registry import lock
from tests.npmregistry import NpmRegistry
from tests.rooms.helpers import node

pytestmark = pytest.mark.django_db


@pytest.fixture
def registry(settings):
    npm = NpmRegistry().start()
    settings.NPM_REGISTRY_URL = npm.url
    yield npm
    npm.stop()


def tarballs_fetched(npm: NpmRegistry) -> list[str]:
    return [path for method, path in npm.requests if method == "GET" and "/-/" in path]


def test_one_version_needed_at_two_places_is_fetched_once_and_asked_about_once(registry):
    registry.publish("dup", "1.0.0", {"index.js": "module.exports = 1;\n"}, tag=False)
    registry.publish("dup", "2.0.0", {"index.js": "module.exports = 2;\n"})
    registry.publish("left-a", "1.0.0", {"index.js": "1"}, dependencies={"dup": "1.0.0"})
    registry.publish("left-b", "1.0.0", {"index.js": "1"}, dependencies={"dup": "1.0.0"})
    resolved = lock.resolve_packages({"dup": "2.0.0", "left-a": "1.0.0", "left-b": "1.0.0"})
    placed = {path: node.version for path, node in resolved.layout.tree.nodes.items()}
    assert placed == {
        "node_modules/dup": "2.0.0",
        "node_modules/left-a": "1.0.0",
        "node_modules/left-b": "1.0.0",
        "node_modules/left-a/node_modules/dup": "1.0.0",
        "node_modules/left-b/node_modules/dup": "1.0.0",
    }
    assert sorted(tarballs_fetched(registry)) == [
        "/dup/-/dup-1.0.0.tgz",
        "/dup/-/dup-2.0.0.tgz",
        "/left-a/-/left-a-1.0.0.tgz",
        "/left-b/-/left-b-1.0.0.tgz",
    ]
    assert len(resolved.new) == 4  # dup@1.0.0 is one stored package at both places
    assert lock.versions_of(resolved.layout.tree) == {
        "dup": ["2.0.0", "1.0.0"],
        "left-a": ["1.0.0"],
        "left-b": ["1.0.0"],
    }


def test_packages_that_unpack_past_the_limit_though_declared_small_are_refused(registry, settings):
    for name in ("fat-a", "fat-b"):
        registry.publish(name, "1.0.0", {"index.js": "// " + "x" * 6_000 + "\n"})
        registry.versions[name]["1.0.0"].manifest["dist"]["unpackedSize"] = 1  # it says so
    settings.NPM_MAX_UNPACKED_BYTES = 10_000
    with pytest.raises(Invalid) as refused:
        lock.resolve_packages({"fat-a": "1.0.0", "fat-b": "1.0.0"})
    assert refused.value.code == "packages_too_large"
    assert refused.value.message.startswith("package.json: the packages unpack to ")
    assert "more than the 10,000 an app may bring" in refused.value.message
    assert not NpmPackage.objects.exists()


def test_a_version_the_registry_gives_no_tarball_for_is_refused_naming_it(registry):
    registry.publish("no-dist", "1.0.0", {"index.js": "1"})
    registry.versions["no-dist"]["1.0.0"].manifest["dist"]["tarball"] = ""
    with pytest.raises(Invalid) as refused:
        lock.resolve_packages({"no-dist": "1.0.0"})
    assert refused.value.message == "package.json: the registry gives no tarball for no-dist@1.0.0"
    assert tarballs_fetched(registry) == []


def test_an_install_script_only_the_registry_reports_is_still_marked(registry):
    registry.publish("says-install", "1.0.0", {"index.js": "1"})  # its package.json has none
    registry.versions["says-install"]["1.0.0"].manifest["hasInstallScript"] = True
    resolved = lock.resolve_packages({"says-install": "1.0.0"})
    [(node, unpacked)] = resolved.new.values()
    assert node.install_scripts == unpacked.install_scripts
    assert unpacked.install_scripts == ["install script (the registry says so)"]


def test_advisories_that_are_not_objects_or_not_of_this_version_are_left_out():
    found = {
        "vuln": [
            "not an advisory",
            {"id": 7, "title": "Old", "vulnerable_versions": "<1.0.0"},
            {"id": 9, "title": "Bad", "severity": "high", "url": "http://plain.example/9"},
        ]
    }
    assert lock.advisories_of(found, node("node_modules/vuln", "1.2.0")) == [
        {"id": "9", "title": "Bad", "severity": "high", "url": "", "vulnerable_versions": "*"}
    ]
    assert lock.advisories_of(None, node("node_modules/vuln", "1.2.0")) == []


def test_a_stored_lock_answers_only_the_imports_resolved_when_proposed():
    index = lock.StoredIndex({"dependencies": {"tiny-pad": "^1.0.0"}, "imports": {"tiny-pad": 1}})
    assert index.owns("tiny-pad/extra") and not index.owns("other")
    assert index.problem("tiny-pad") is None
    assert index.problem("tiny-pad/extra") == (
        "cannot import 'tiny-pad/extra': it was not resolved when the app was proposed"
    )


def test_files_of_stored_packages_are_kept_least_recently_used_first_within_the_budget():
    kept = lock._Unpacked()
    kept.BUDGET = 25
    kept.put("a", {"a.js": "a"}, 10)
    kept.put("b", {"b.js": "b"}, 10)
    assert kept.get("a") == {"a.js": "a"}  # now the most recently used
    kept.put("a", {"a.js": "changed"}, 10)  # content-addressed: a key kept stays as it is
    kept.put("huge", {"h.js": "h"}, 26)  # larger than the whole budget: not kept
    kept.put("c", {"c.js": "c"}, 10)  # over the budget: b, the least recently used, goes
    assert kept.get("a") == {"a.js": "a"}
    assert kept.get("b") is None and kept.get("huge") is None
    assert kept.get("c") == {"c.js": "c"}
    assert kept.size == 20


def test_a_stored_package_files_are_read_from_the_database_once(django_assert_num_queries):
    key = f"sha512-{uuid.uuid4().hex}"
    files = {"index.js": "module.exports = 42;\n"}
    NpmPackage.objects.create(
        key=key,
        name="stored-pad",
        version="1.0.0",
        integrity=key,
        manifest={"name": "stored-pad", "version": "1.0.0"},
        files=gzip.compress(json.dumps(files).encode()),
        unpacked_bytes=30,
    )
    with django_assert_num_queries(1):
        assert lock.stored_files(key) == files
    with django_assert_num_queries(0):
        assert lock.stored_files(key) == files
