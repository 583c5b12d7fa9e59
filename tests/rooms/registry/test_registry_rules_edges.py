"""The edges of the rules under package.json apps (rooms/registry/): browser fields and `exports`
maps a bundler would refuse or skip, folders whose package.json is odd, tarballs whose gzip
stream is split or cut, ranges already met higher in the tree, package names that are not npm's,
licences that are no expression, and the compiler's limits. Each asserts what the rule answers;
test_registry_rules.py has the common cases, test_registry_packages.py the whole flow."""

import gzip
import io
import json
import uuid

import pytest

from osfoundry.errors import Invalid
from rooms.models import NpmPackage, PackageBundle, Proposal
from rooms.registry import dependencies, licenses, modules, tarballs
from rooms.registry.modules import PackageCodeProblem, Target, build_table, exports_target
from rooms.registry.resolve import satisfies
from rooms.runtime import jsengine
from tests.npmregistry import tarball
from tests.rooms.helpers import propose
from tests.rooms.registry.test_registry_rules import layout, module
from tests.rooms.registry_packages import app_files

# ------------------------------------------------------------------------- module resolution

BROWSER_ODDS = (
    "node_modules/odd",
    {
        "main": "index.js",
        "browser": {
            "./a.js": True,  # true means nothing: the file stays itself
            "./b.js": 5,  # not a file, a name or false: ignored
            "./../outside.js": "./x.js",  # a key that leaves the package: ignored
            "shim": "./lib/shim.js",  # a name required by the package, mapped to its own file
        },
    },
    {"index.js": "", "a.js": "", "b.js": "", "x.js": "", "lib/shim.js": ""},
)


def test_a_browser_field_entry_that_maps_nothing_is_ignored():
    tree = layout(BROWSER_ODDS)
    odd = tree.packages["node_modules/odd"]
    assert odd.browser_map == {"shim": "./lib/shim.js"}
    assert tree.resolve(odd, "index.js", "./a") == module("node_modules/odd#a.js")
    assert tree.resolve(odd, "index.js", "./b.js") == module("node_modules/odd#b.js")


def test_a_name_the_browser_field_maps_to_a_file_of_the_package_loads_that_file():
    tree = layout(BROWSER_ODDS)
    odd = tree.packages["node_modules/odd"]
    assert tree.resolve(odd, "index.js", "shim") == module("node_modules/odd#lib/shim.js")


def test_an_absolute_require_points_outside_the_package():
    tree = layout(BROWSER_ODDS)
    found = tree.resolve(tree.packages["node_modules/odd"], "index.js", "/etc/passwd")
    assert found == Target(missing="'/etc/passwd' points outside odd@1.0.0")


MAPPED = (
    "node_modules/mapped",
    {
        "exports": {
            ".": "./index.js",
            "./server": "./server.js",
            "./node": "./node.js",
            "./gone": "./gone.js",
            "./escape": "./escape.js",
            "./feature": "./lib/feature",
            "./bare": "lib/bare.js",
            "./up": "./../other/index.js",
        },
        "browser": {
            "./server.js": False,
            "./node.js": "./web.js",
            "./gone.js": "./not-there.js",
            "./escape.js": "./../elsewhere.js",
        },
    },
    {
        "index.js": "",
        "server.js": "",
        "node.js": "",
        "web.js": "",
        "gone.js": "",
        "escape.js": "",
        "lib/feature.js": "",
        "lib/bare.js": "",
    },
)


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        # What exports name, then what the browser field makes of it.
        ("mapped/server", Target(empty=True)),
        ("mapped/node", module("node_modules/mapped#web.js")),
        # A swap to a file the package lacks, or outside it, leaves the file as it is.
        ("mapped/gone", module("node_modules/mapped#gone.js")),
        ("mapped/escape", module("node_modules/mapped#escape.js")),
        # A target written without its extension is found as a file is.
        ("mapped/feature", module("node_modules/mapped#lib/feature.js")),
        # A target that is not relative ("./...") or leaves the package is no target.
        ("mapped/bare", Target(missing="mapped@1.0.0 exports no ./bare for a browser")),
        ("mapped/up", Target(missing="mapped@1.0.0 exports no ./up for a browser")),
    ],
)
def test_an_exports_target_is_read_through_the_browser_field(spec, expected):
    assert layout(MAPPED).resolve_app(spec) == expected


def test_an_import_the_browser_field_empties_is_refused_as_no_module():
    assert layout(MAPPED).problem("mapped/server") == (
        "cannot import 'mapped/server': 'mapped/server' maps to no module in a browser; import "
        "a module the package exports"
    )


FOLDERS = (
    "node_modules/folders",
    {"main": "dist/gone.js"},  # a main the package does not have: its index.js
    {
        "index.js": "",
        "lib/data.json": "{}",
        "broken/package.json": "{not json",
        "broken/index.js": "",
        "number/package.json": json.dumps({"main": 5}),
        "number/index.js": "",
        "list/package.json": "[1]",
        "list/index.js": "",
        "text/package.json": '"main"',
        "text/index.js": "",
        "missing/package.json": json.dumps({"main": "./entry.js"}),
        "missing/index.js": "",
    },
)


@pytest.mark.parametrize(
    ("spec", "file"),
    [
        ("folders", "index.js"),
        ("folders/lib/data", "lib/data.json"),  # no exports: a path into the package
        # A folder whose package.json names no main it has: the folder's index.
        ("folders/broken", "broken/index.js"),
        ("folders/number", "number/index.js"),
        ("folders/list", "list/index.js"),
        ("folders/text", "text/index.js"),
        ("folders/missing", "missing/index.js"),
    ],
)
def test_a_package_or_folder_whose_main_is_not_there_loads_its_index(spec, file):
    assert layout(FOLDERS).resolve_app(spec) == module(f"node_modules/folders#{file}")


def test_exports_patterns_and_folders_take_the_longest_prefix_and_conditions_fall_through():
    folders = {"./lib/sub/": "./s/", "./lib/": "./l/"}
    assert exports_target(folders, "./lib/sub/x.js", ("default",)) == "./s/x.js"
    assert exports_target(dict(reversed(folders.items())), "./lib/sub/x.js", ("default",)) == (
        "./s/x.js"
    )
    browser = ("browser", "require", "default")
    # A list: its first entry that offers something; a condition with nothing inside: the next.
    assert exports_target([{"node": "./n.js"}, "./b.js"], ".", browser) == "./b.js"
    assert exports_target([{"node": "./n.js"}], ".", browser) is None
    nested = {"browser": {"import": "./b.mjs"}, "default": "./d.js"}
    assert exports_target(nested, ".", browser) == "./d.js"


def test_an_import_that_is_no_module_puts_nothing_in_the_table_and_data_goes_in_as_it_is():
    table = build_table(layout(MAPPED), ["mapped/server", "mapped/bare"])
    assert (table.imports, table.modules, table.loaded_bytes) == ({}, {}, {})
    table = build_table(layout(FOLDERS), ["folders/lib/data"])
    data = "node_modules/folders/lib/data.json"
    assert table.imports == {"folders/lib/data": data}
    assert table.modules == {
        data: {"name": "folders@1.0.0/lib/data.json", "type": "json", "code": "{}", "deps": {}}
    }
    assert table.loaded_bytes == {"node_modules/folders": 2}


@pytest.mark.parametrize(
    ("fault", "message"),
    [
        (
            jsengine.EngineTimeout("node_modules/slow/index.js"),
            "node_modules/slow/index.js took more than 2 s to compile",
        ),
        (jsengine.EngineTimeout(None), "a package file took more than 2 s to compile"),
        (jsengine.EngineOutOfMemory(), "the packages' code is too large for the Room's compiler"),
    ],
)
def test_code_the_compiler_cannot_finish_is_a_package_code_problem(monkeypatch, fault, message):
    def fail(sources, *, timeout):
        raise fault

    monkeypatch.setattr(jsengine.engine, "prepare_modules", fail)
    source = f"module.exports = {json.dumps(str(uuid.uuid4()))};"  # never prepared before
    tree = layout(("node_modules/slow", {}, {"index.js": source}))
    with pytest.raises(PackageCodeProblem) as refused:
        build_table(tree, ["slow"])
    assert str(refused.value) == message
    assert modules.COMPILE_BASE_SECONDS == 2.0  # the "2 s" above: a small file's budget


# ------------------------------------------------------------------------------- tarballs


def tar_of(files: dict[str, str]) -> bytes:
    return gzip.decompress(tarball(files))


def test_a_tarball_of_several_gzip_members_is_read_to_its_end():
    raw = tar_of({"package.json": '{"name": "x"}', "index.js": "x" * 3000})
    # Concatenated gzip members are one valid gzip stream, an empty member among them too.
    data = gzip.compress(raw[:700]) + gzip.compress(b"") + gzip.compress(raw[700:])
    unpacked = tarballs.unpack(data, max_bytes=10_000)
    assert unpacked.manifest == {"name": "x"}
    assert unpacked.files == {"package.json": '{"name": "x"}', "index.js": "x" * 3000}
    reader = io.BufferedReader(tarballs._Inflating(data, 10_000))
    assert reader.readable() and reader.read() == raw


@pytest.mark.parametrize(
    ("data", "why"),
    [
        # A whole gzip stream of a tar cut inside a file.
        (
            gzip.compress(tar_of({"package.json": "{}", "index.js": "x" * 3000})[:1500]),
            "its tarball cannot be read (unexpected end of data)",
        ),
        # A gzip stream cut before its end.
        (
            tarball({"index.js": "x" * 3000, "package.json": "{}"})[:-30],
            "its tarball cannot be read (its gzip stream ends early)",
        ),
    ],
)
def test_a_cut_tarball_cannot_be_read(data, why):
    with pytest.raises(tarballs.TarballProblem) as refused:
        tarballs.unpack(data, max_bytes=10_000)
    assert str(refused.value) == why


# ------------------------------------------------------------------------------ resolution


def test_a_version_that_is_not_semver_satisfies_no_range():
    assert satisfies("1.2.0", "^1.0.0") and satisfies("1.2.0", " ")
    assert satisfies("banana", "^1.0.0") is False


@pytest.mark.django_db
def test_a_range_met_higher_in_the_tree_and_any_peer_there_are_not_fetched_again(
    room, agent, npm_registry
):
    npm_registry.publish(
        "pad-user", "1.0.0", {"index.js": "module.exports = 1;\n"}, peers={"tiny-pad": "^9.0.0"}
    )
    deps = {
        "tiny-format": "^1.0.0",  # wants tiny-pad ^2: the app's 2.1.0 at the top serves it
        "ui-badge": "~1.0.0",  # wants ^3: nested
        "tiny-pad": "^2.0.0",
        "pad-user": "1.0.0",  # a peer, any version counting: the app's
    }
    proposal = propose(room, agent, app_files(**deps))
    assert [(p["path"], p["version"]) for p in proposal.packages["packages"]] == [
        ("node_modules/pad-user", "1.0.0"),
        ("node_modules/tiny-format", "1.2.0"),
        ("node_modules/tiny-pad", "2.1.0"),
        ("node_modules/ui-badge", "1.0.0"),
        ("node_modules/ui-badge/node_modules/tiny-pad", "3.0.0"),
    ]
    assert [path for _m, path in npm_registry.requests].count("/tiny-pad") == 1


@pytest.mark.django_db
def test_a_package_that_depends_on_no_npm_name_is_refused_naming_it(room, agent, npm_registry):
    npm_registry.publish("bad-deps", "1.0.0", {"index.js": ""}, dependencies={"Bad Name": "^1.0.0"})
    deps = {"tiny-format": "^1.0.0", "ui-badge": "~1.0.0", "bad-deps": "1.0.0"}
    with pytest.raises(Invalid) as refused:
        propose(room, agent, app_files(**deps))
    assert refused.value.message == (
        "package.json: bad-deps@1.0.0 depends on 'Bad Name', which is not an npm package name; "
        "depend on another version of bad-deps"
    )
    assert not Proposal.objects.exists() and not NpmPackage.objects.exists()
    assert not PackageBundle.objects.exists()


@pytest.mark.django_db
def test_a_folder_whose_package_json_is_not_an_object_loads_its_index(room, agent, npm_registry):
    npm_registry.publish(
        "nested-pkg",
        "1.0.0",
        {"index.js": "", "sub/package.json": "[1]", "sub/index.js": "module.exports = 'sub';\n"},
    )
    files = {
        "src/App.tsx": (
            'import sub from "nested-pkg/sub";\n'
            "export default function App() {\n  return <p>{sub}</p>;\n}\n"
        ),
        "package.json": json.dumps({"dependencies": {"nested-pkg": "1.0.0"}}),
    }
    proposal = propose(room, agent, files)
    assert proposal.packages["imports"] == {
        "nested-pkg/sub": "node_modules/nested-pkg/sub/index.js"
    }


# ------------------------------------------------------------------------ app dependencies


@pytest.mark.parametrize("text", ['{"name": "app"}', '{"dependencies": null}', "[1]", '"x"'])
def test_a_package_json_without_dependencies_asks_for_nothing(text):
    assert dependencies.read_dependencies({"package.json": text}) == (
        dependencies.AppDependencies()
    )


def test_react_at_a_range_the_rooms_react_meets_is_the_rooms_without_a_warning():
    found = dependencies.read_dependencies(
        {"package.json": json.dumps({"dependencies": {"react": "^19.0.0", "react-dom": "19"}})}
    )
    assert found == dependencies.AppDependencies()


# ------------------------------------------------------------------------------- licences


@pytest.mark.parametrize(
    ("manifest", "text"),
    [
        ({"licenses": [{"type": ""}, 5, {"url": "https://example.com/l"}]}, ""),
        ({"licenses": "MIT"}, ""),  # the old form is a list: a string there is no licence
    ],
)
def test_an_old_licences_list_naming_no_licence_is_none(manifest, text):
    assert licenses.license_text(manifest) == text
    assert licenses.is_osi(text) is False


@pytest.mark.parametrize("text", ["AND MIT", "MIT OR )", "WITH Classpath-exception-2.0", ")"])
def test_an_operator_or_parenthesis_where_a_licence_belongs_is_not_osi(text):
    assert licenses.is_osi(text) is False
