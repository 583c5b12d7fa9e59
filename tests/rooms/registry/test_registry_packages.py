"""package.json dependencies from an npm registry (rooms/registry/): resolved to exact versions
when the app is proposed, each tarball checked against the registry's integrity hash, stored by
content and never fetched again; the lock bound into the content hash; every refusal names the
package and the fix and stores nothing. The registry is the test's own, on 127.0.0.1
(tests/npmregistry.py, the packages of tests/rooms/registry_packages.py)."""

import json
import os

import pytest

from osfoundry.errors import Invalid, TryLater
from osfoundry.idempotency import canonical_hash
from rooms import services
from rooms.models import NpmPackage, PackageBundle, Proposal
from tests.rooms.helpers import propose, update
from tests.rooms.registry_packages import APP, DEPENDENCIES, PAD_BROWSER, REPEAT, app_files

pytestmark = pytest.mark.django_db


def tarballs_fetched(registry) -> list[str]:
    return [path for method, path in registry.requests if "/-/" in path and method == "GET"]


def nothing_stored():
    assert not Proposal.objects.exists()
    assert not NpmPackage.objects.exists()
    assert not PackageBundle.objects.exists()


def rows(proposal) -> list[tuple]:
    return [
        (p["path"], p["name"], p["version"], p["license"], p["required_by"])
        for p in proposal.packages["packages"]
    ]


def test_each_range_resolves_to_an_exact_version_laid_out_as_npm_does(room, agent, npm_registry):
    proposal = propose(room, agent, app_files())
    # tiny-format wants tiny-pad ^2 (2.1.0, the highest 2.x; latest is 3.0.0), ui-badge ^3:
    # the first at the top, the other nested beside ui-badge. vite and typescript, dev tools,
    # and React, the Room's own, are never fetched.
    assert rows(proposal) == [
        ("node_modules/tiny-format", "tiny-format", "1.2.0", "MIT", "package.json"),
        ("node_modules/tiny-pad", "tiny-pad", "2.1.0", "MIT", "tiny-format@1.2.0"),
        ("node_modules/ui-badge", "ui-badge", "1.0.0", "ISC", "package.json"),
        (
            "node_modules/ui-badge/node_modules/tiny-pad",
            "tiny-pad",
            "3.0.0",
            "MIT",
            "ui-badge@1.0.0",
        ),
    ]
    fetched = {path for _method, path in npm_registry.requests}
    assert "/vite" not in fetched and "/react" not in fetched
    assert proposal.packages["imports"] == {
        "tiny-format": "node_modules/tiny-format/index.js",
        "ui-badge": "node_modules/ui-badge/dist/index.js",
        "ui-badge/badge.css": "node_modules/ui-badge/dist/badge.css",
    }


def test_the_lock_and_the_module_table_are_bound_into_the_content_hash(room, agent, npm_registry):
    files = app_files()
    proposal = propose(room, agent, files)
    lock = proposal.packages
    assert proposal.package_bundle_id == lock["bundle"]
    assert proposal.content_hash == canonical_hash(
        {
            "kind": "snippet",
            "name": proposal.name,
            "files": files,
            "packages": {
                "dependencies": {"tiny-format": "^1.0.0", "ui-badge": "~1.0.0"},
                "packages": [
                    [p["path"], p["name"], p["version"], p["key"]] for p in lock["packages"]
                ],
                "bundle": lock["bundle"],
            },
        }
    )
    # Each package is stored under the sha512 of its tarball, which matched the registry's.
    for package in lock["packages"]:
        assert package["key"] == package["integrity"]
        assert NpmPackage.objects.filter(key=package["key"]).exists()


def test_a_second_proposal_of_the_same_packages_fetches_no_tarball(room, agent, npm_registry):
    first = propose(room, agent, app_files(), key="first-0001")
    before = len(tarballs_fetched(npm_registry))
    assert before == 4
    files = {**app_files(), "src/App.tsx": APP.replace("More", "Add a cent")}
    second = propose(room, agent, files, key="second-0001")
    assert len(tarballs_fetched(npm_registry)) == before
    assert second.packages["packages"] == first.packages["packages"]
    assert NpmPackage.objects.count() == 4


def test_a_replay_asks_the_registry_nothing(room, agent, npm_registry):
    propose(room, agent, app_files())
    asked = len(npm_registry.requests)
    propose(room, agent, app_files())
    assert len(npm_registry.requests) == asked


def test_the_card_lists_registry_packages_with_version_licence_size_and_origin(
    room, agent, npm_registry
):
    proposal = propose(room, agent, app_files())
    listed = [p.as_dict() for p in services.app_packages(proposal)]
    pad = next(p for p in listed if p["name"] == "tiny-pad" and p["version"] == "2.1.0")
    assert pad == {
        "name": "tiny-pad",
        "version": "2.1.0",
        "license": "MIT",
        # What the frame loads of it: its browser file and what that requires, not the Node file
        # the browser field replaces.
        "bytes": len(PAD_BROWSER) + len(REPEAT),
        "origin": "registry",
        "url": "https://www.npmjs.com/package/tiny-pad/v/2.1.0",
        "osi_license": True,
        "install_scripts": [],
        "advisories": [],
        "unpacked_bytes": pad["unpacked_bytes"],
        "deprecated": None,
    }
    assert pad["unpacked_bytes"] > pad["bytes"]  # the whole tarball
    assert [(p["name"], p["version"]) for p in listed] == [
        ("tiny-format", "1.2.0"),
        ("tiny-pad", "2.1.0"),
        ("tiny-pad", "3.0.0"),
        ("ui-badge", "1.0.0"),
    ]


# ------------------------------------------------------------------------------ the marks


def test_install_scripts_are_marked_and_never_run(room, agent, npm_registry, tmp_path):
    witness = tmp_path / "ran"
    npm_registry.publish(
        "native-thing",
        "1.0.0",
        {"index.js": "module.exports = 1;\n", "install.js": "require('fs').writeFileSync(1)\n"},
        scripts={"postinstall": f"node -e \"require('fs').writeFileSync('{witness}', 'x')\""},
    )
    proposal = propose(room, agent, app_files(**DEPENDENCIES, **{"native-thing": "^1.0.0"}))
    (package,) = [p for p in services.app_packages(proposal) if p.name == "native-thing"]
    assert package.install_scripts == (
        f"postinstall: node -e \"require('fs').writeFileSync('{witness}', 'x')\"",
    )
    assert package.marks == ["has install scripts (never run)"]
    assert not witness.exists()


def test_a_licence_that_is_not_osi_and_an_advisory_are_marked(room, agent, npm_registry):
    npm_registry.publish(
        "closed-thing",
        "2.0.0",
        {"index.js": "module.exports = 2;\n"},
        license="SEE LICENSE IN EULA",
    )
    npm_registry.advisories["tiny-pad"] = [
        {
            "id": 1001,
            "title": "Regular expression denial of service in tiny-pad",
            "severity": "high",
            "url": "https://github.com/advisories/GHSA-xxxx-yyyy-zzzz",
            "vulnerable_versions": "<2.1.1",
        }
    ]
    files = app_files(**{"tiny-format": "^1.0.0", "ui-badge": "1.0.0", "closed-thing": "2"})
    proposal = propose(room, agent, files)
    marks = {(p.name, p.version): p.marks for p in services.app_packages(proposal)}
    assert marks[("closed-thing", "2.0.0")] == ["licence not OSI-approved"]
    # The advisory covers 2.1.0 only: tiny-pad 3.0.0, nested under ui-badge, is not marked.
    assert marks[("tiny-pad", "2.1.0")] == ["1 security advisory"]
    assert marks[("tiny-pad", "3.0.0")] == []
    assert proposal.packages["advisories_checked"] is True


def test_a_registry_without_the_advisory_endpoint_leaves_advisories_unchecked(
    room, agent, npm_registry
):
    npm_registry.serves_advisories = False
    proposal = propose(room, agent, app_files())
    assert proposal.packages["advisories_checked"] is False


# ---------------------------------------------------------------------------- the refusals


def test_a_tarball_that_does_not_match_its_integrity_hash_is_refused_and_nothing_stored(
    room, agent, npm_registry
):
    npm_registry.publish("evil-pad", "1.0.0", {"index.js": "1"}, wrong_integrity=True)
    with pytest.raises(Invalid) as refused:
        propose(room, agent, app_files(**{"evil-pad": "^1.0.0"}))
    assert refused.value.field == "files.package.json"
    assert refused.value.code == "invalid_package"
    assert refused.value.message.startswith(
        "package.json: evil-pad@1.0.0 (for package.json) cannot be used: its tarball does not "
        "match the registry's integrity hash (sha512: expected "
    )
    assert refused.value.message.endswith(
        "nothing was stored. Depend on another version of evil-pad"
    )
    nothing_stored()


def test_a_slow_registry_is_a_retryable_refusal_that_stores_nothing(
    room, agent, npm_registry, settings
):
    settings.NPM_RESOLVE_SECONDS = 1
    npm_registry.slow["ui-badge"] = 5.0  # its packument, a byte at a time
    with pytest.raises(TryLater) as refused:
        propose(room, agent, app_files())
    assert refused.value.http_status == 503
    assert refused.value.retry_after == 30
    assert refused.value.as_dict() == {
        "code": "registry_unavailable",
        "message": "The npm registry could not be used: the registry did not answer within "
        "1 s. Nothing was stored; propose again in 30 s (the same idempotency_key is fine).",
        "field": "files.package.json",
        "retry_after": 30,
    }
    nothing_stored()


def test_a_registry_that_is_down_is_a_retryable_refusal(room, agent, npm_registry):
    npm_registry.down = True
    with pytest.raises(TryLater) as refused:
        propose(room, agent, app_files())
    assert "the registry answered HTTP 503 for the packument of" in refused.value.message
    nothing_stored()


def test_a_registry_that_refuses_connections_is_a_retryable_refusal(room, agent, settings):
    from tests.servers import free_port

    settings.NPM_REGISTRY_URL = f"http://127.0.0.1:{free_port()}"
    with pytest.raises(TryLater) as refused:
        propose(room, agent, app_files())
    assert "the registry is unreachable (Connection refused)" in refused.value.message
    nothing_stored()


def test_a_package_the_registry_does_not_have_is_refused_by_name(room, agent, npm_registry):
    with pytest.raises(Invalid) as refused:
        propose(room, agent, app_files(**{"tiny-fromat": "^1.0.0"}))
    assert refused.value.message == (
        "package.json: the registry has no package 'tiny-fromat' (package.json depends on it); "
        "check the name"
    )
    nothing_stored()


def test_a_range_no_version_satisfies_is_refused_with_the_latest(room, agent, npm_registry):
    with pytest.raises(Invalid) as refused:
        propose(room, agent, app_files(**{"tiny-pad": "^9.0.0"}))
    assert refused.value.message == (
        "package.json: no version of tiny-pad matches '^9.0.0', which package.json asks for "
        "(the latest is 3.0.0); widen the range"
    )


@pytest.mark.parametrize(
    ("spec", "why"),
    [
        ("github:acme/pad", "not a registry version (git, a URL, a file or a link)"),
        ("file:../pad", "not a registry version (git, a URL, a file or a link)"),
        ("npm:tiny-pad@^2", "an alias (npm:...); name the package itself with a version range"),
    ],
)
def test_a_dependency_that_is_not_a_registry_version_is_refused(
    room, agent, npm_registry, spec, why
):
    with pytest.raises(Invalid) as refused:
        propose(room, agent, app_files(**{"tiny-pad": spec}))
    assert refused.value.message.startswith(f"package.json: dependencies.tiny-pad {spec!r}: {why}")
    assert npm_registry.requests == []  # refused before the registry was asked anything


def test_too_many_packages_are_refused(room, agent, npm_registry, settings):
    settings.NPM_MAX_PACKAGES = 3
    with pytest.raises(Invalid) as refused:
        propose(room, agent, app_files())
    assert refused.value.message == (
        "package.json: the dependencies come to more than 3 packages, the most an app may bring "
        "(the last was tiny-pad@3.0.0, for ui-badge@1.0.0); depend on fewer or smaller packages"
    )
    nothing_stored()


def test_packages_that_unpack_past_the_limit_are_refused(room, agent, npm_registry, settings):
    settings.NPM_MAX_UNPACKED_BYTES = 1500
    with pytest.raises(Invalid) as refused:
        propose(room, agent, app_files())
    assert refused.value.code == "packages_too_large"
    assert "more than the 1,500 an app may bring (the largest: ui-badge@1.0.0" in (
        refused.value.message
    )
    nothing_stored()


def test_an_import_the_package_does_not_export_is_refused_where_it_is(room, agent, npm_registry):
    files = app_files()
    files["src/App.tsx"] = "import secret from 'ui-badge/dist/index.js';\nvoid secret;\n" + APP
    with pytest.raises(Invalid) as refused:
        propose(room, agent, files)
    assert refused.value.message == (
        "src/App.tsx:1:20: cannot import 'ui-badge/dist/index.js': ui-badge@1.0.0 exports no "
        "./dist/index.js for a browser; import a module the package exports"
    )
    nothing_stored()


def test_an_import_of_a_package_package_json_does_not_name_says_how_to_add_it(
    room, agent, npm_registry
):
    files = {**app_files(), "src/App.tsx": "import pad from 'left-pad';\nvoid pad;\n" + APP}
    with pytest.raises(Invalid) as refused:
        propose(room, agent, files)
    assert "name any other package in package.json's dependencies (this Room resolves them " in (
        refused.value.message
    )


# ------------------------------------------------------------------------ without a registry

CLSX_APP = "import clsx from 'clsx';\nexport default () => <p className={clsx('a')} />;\n"


def test_without_a_registry_a_dependency_outside_the_curated_set_is_refused_with_the_list(
    room, agent
):
    with pytest.raises(Invalid) as refused:
        propose(room, agent, app_files())
    message = refused.value.message
    assert message.startswith(
        "package.json: dependencies.tiny-format: tiny-format is not available: this Room "
        "resolves no packages from an npm registry, and an app imports its own files "
        "(relative paths), react, react-dom, react-dom/client, react/jsx-runtime and the "
        "curated packages "
    )
    assert "recharts" in message and "lodash (lodash/<function>)" in message
    assert "package.json: dependencies.ui-badge: ui-badge is not available" in message
    nothing_stored()


def test_without_a_registry_a_curated_package_at_another_version_runs_with_a_warning(room, agent):
    files = {
        "src/App.tsx": CLSX_APP,
        "package.json": json.dumps(
            {"dependencies": {"clsx": "^1.2.0", "react": "^18.2.0", "@types/react": "^18"}}
        ),
    }
    result = services.propose_snippet(
        caller=agent, room_id=str(room.pk), name="Classes", files=files, idempotency_key="k-clsx-1"
    )
    assert result.proposal.packages == {}
    assert list(result.warnings) == [
        "package.json asks for clsx ^1.2.0; this Room serves no npm registry, so the app gets "
        "the curated clsx 2.1.1",
        "package.json asks for react ^18.2.0; the Room runs react 19.3.1, which every app shares",
    ]


def test_with_a_registry_a_curated_package_whose_version_satisfies_stays_curated(
    room, agent, npm_registry
):
    files = {
        "src/App.tsx": CLSX_APP,
        "package.json": json.dumps({"dependencies": {"clsx": "^2.0.0"}}),
    }
    proposal = propose(room, agent, files)
    assert proposal.packages == {}
    assert npm_registry.requests == []
    assert [(p.name, p.origin) for p in services.app_packages(proposal)] == [("clsx", "curated")]


# -------------------------------------------------------------------------------- updates


def test_an_update_lists_the_packages_it_adds_removes_or_moves_to_another_version(
    room, owner, agent, npm_registry
):
    from rooms.runtime import libraries

    first = propose(room, agent, app_files())
    app = services.approve_proposal(owner=owner, proposal_id=first.pk)
    npm_registry.publish(
        "tiny-format",
        "1.3.0",
        {"index.js": "export default function money(c) { return String(c); }\n"},
        manifest={"type": "module", "exports": "./index.js"},
    )
    files = app_files(**{"tiny-format": "^1.3.0"})
    files["src/App.tsx"] = (
        APP.replace('import {Badge} from "ui-badge";\n', "")
        .replace('import "ui-badge/badge.css";\n', "")
        .replace('      <Badge label="new" />\n', "")
    )
    pending = update(app, agent, files).proposal
    changes = libraries.package_changes(
        services.app_packages(app.proposal), services.app_packages(pending)
    )
    assert [(c["name"], c["change"], c["old"], c["new"]) for c in changes] == [
        ("tiny-format", "changed", "1.2.0", "1.3.0"),
        ("tiny-pad", "removed", "2.1.0, 3.0.0", None),
        ("ui-badge", "removed", "1.0.0", None),
    ]


def test_tailwindcss_in_dependencies_is_the_rooms_tailwind_and_types_are_never_fetched(
    room, agent, npm_registry
):
    npm_registry.publish(
        "typed-thing",
        "1.0.0",
        {"index.js": "module.exports = 'typed';\n"},
        dependencies={"@types/typed-thing": "^1.0.0"},
    )
    files = {
        "src/App.tsx": "import typed from 'typed-thing';\nimport './index.css';\n"
        "export default () => <p className='p-2'>{typed}</p>;\n",
        "src/index.css": '@import "tailwindcss";\n',
        "package.json": json.dumps(
            {"dependencies": {"tailwindcss": "^3.4.0", "typed-thing": "1", "@types/react": "19"}}
        ),
    }
    result = services.propose_snippet(
        caller=agent, room_id=str(room.pk), name="Typed", files=files, idempotency_key="k-typed-1"
    )
    assert list(result.warnings) == [
        "package.json asks for tailwindcss ^3.4.0; the Room runs tailwindcss 4.3.5, which every "
        "app shares"
    ]
    listed = [(p.name, p.origin) for p in services.app_packages(result.proposal)]
    assert listed == [("@tailwindcss/browser", "curated"), ("typed-thing", "registry")]
    asked = {path for _method, path in npm_registry.requests}
    assert not [path for path in asked if "types" in path or "tailwind" in path]


def test_a_tarball_on_another_host_is_not_fetched(room, agent, npm_registry):
    npm_registry.publish(
        "far-pad", "1.0.0", {"index.js": "1"}, tarball_at="http://127.0.0.2:9/far-pad-1.0.0.tgz"
    )
    with pytest.raises(Invalid) as refused:
        propose(room, agent, app_files(**DEPENDENCIES, **{"far-pad": "1.0.0"}))
    assert refused.value.message == (
        "package.json: the registry points the tarball of far-pad@1.0.0 at another host "
        "(127.0.0.2); osFoundry fetches packages from the configured registry only"
    )
    nothing_stored()


def test_a_tarball_larger_than_the_limit_is_not_read_to_its_end(
    room, agent, npm_registry, settings
):
    from tests.npmregistry import sri, tarball

    noise = os.urandom(50_000)  # does not compress: the download itself is over the limit
    data = tarball({"package.json": '{"name": "huge", "version": "1.0.0"}', "x.bin": noise})
    manifest = {"name": "huge", "version": "1.0.0", "dist": {"integrity": sri(data)}}
    npm_registry.add("huge", "1.0.0", manifest, data)  # no unpackedSize: only the bytes tell
    settings.NPM_MAX_UNPACKED_BYTES = 20_000
    with pytest.raises(Invalid) as refused:
        propose(room, agent, app_files(**{"huge": "1.0.0"}))
    assert refused.value.message.startswith("package.json: /huge/-/huge-1.0.0.tgz is larger than")
    nothing_stored()


def test_a_packument_that_is_not_json_is_the_registrys_fault(room, agent, npm_registry):
    npm_registry.documents["ui-badge"] = b"<html>maintenance</html>"
    with pytest.raises(TryLater) as refused:
        propose(room, agent, app_files())
    assert "the registry's packument of ui-badge is not JSON" in refused.value.message


def test_a_package_whose_code_the_frame_cannot_run_is_refused_naming_the_file(
    room, agent, npm_registry
):
    npm_registry.publish(
        "meta-url",
        "1.0.0",
        {"index.js": "export const here = new URL('./x', import.meta.url).href;\n"},
        manifest={"type": "module", "exports": "./index.js"},
    )
    files = {
        "src/App.tsx": "import {here} from 'meta-url';\nexport default () => <p>{here}</p>;\n",
        "package.json": json.dumps({"dependencies": {"meta-url": "1.0.0"}}),
    }
    with pytest.raises(Invalid) as refused:
        propose(room, agent, files)
    assert refused.value.message.startswith(
        "package.json: meta-url@1.0.0: index.js cannot run in the Room (Cannot use 'import.meta' "
        "outside a module); depend on another version of it, or another package"
    )
    nothing_stored()


@pytest.mark.parametrize(
    ("manifest", "message"),
    [
        (
            '{"dependencies": ["axios"]}',
            "package.json: dependencies must be an object of name: version range",
        ),
        (
            '{"dependencies": {"Bad Name": "1"}}',
            "package.json: dependencies.Bad Name: not an npm package name",
        ),
        (
            '{"dependencies": {"axios": 1}}',
            "package.json: dependencies.axios 1: must be a version range given as a string",
        ),
    ],
)
def test_a_package_json_whose_dependencies_are_not_npms_is_refused(room, agent, manifest, message):
    files = {"src/App.tsx": CLSX_APP, "package.json": manifest}
    with pytest.raises(Invalid) as refused:
        propose(room, agent, files)
    assert refused.value.field == "files.package.json"
    assert refused.value.message.startswith(message)
    nothing_stored()


def test_a_package_json_that_is_not_json_names_no_dependencies_and_says_so(room, agent):
    files = {"src/App.tsx": CLSX_APP, "package.json": '{\n  "dependencies": {"clsx": "2"},\n}\n'}
    result = services.propose_snippet(
        caller=agent, room_id=str(room.pk), name="Classes", files=files, idempotency_key="k-json-1"
    )
    assert list(result.warnings) == [
        "package.json is not valid JSON (Expecting property name enclosed in double quotes, line "
        "3), so its dependencies were not read; the Room runs the app with React and the curated "
        "set only"
    ]
