"""The rules under package.json apps, each on its own: where an import leads inside the resolved
tree (rooms/registry/modules.py, Node's algorithm as bundlers apply it for a browser), what a
tarball must be to be kept (tarballs.py), which licences are OSI (licenses.py), how long a
packument may be kept (client.py). The service and interface tests run them together."""

import gzip
import hashlib
import io
import json
import tarfile

import pytest

from rooms.registry import client, licenses, tarballs
from rooms.registry.modules import Layout, Package, Target, exports_target
from rooms.registry.resolve import Tree, pick, spec_problem
from tests.npmregistry import sri, tarball
from tests.rooms.helpers import node

# ------------------------------------------------------------------------- module resolution


def layout(*packages: tuple[str, dict, dict[str, str]]) -> Layout:
    """A tree of (node path, package.json, files) as resolve.py lays one out."""
    tree = Tree()
    found = {}
    for path, manifest, files in packages:
        tree.nodes[path] = node(path, manifest.get("version", "1.0.0"))
        found[path] = Package(node=tree.nodes[path], manifest=manifest, load=lambda f=files: f)
    return Layout(tree, found)


def module(path: str) -> Target:
    package, _sep, file = path.partition("#")
    return Target(module=f"{package}/{file}", package=package, file=file)


CONDITIONAL = (
    "node_modules/cond",
    {
        "exports": {
            ".": {
                "node": "./node.js",
                "browser": {"import": "./browser.mjs", "default": "./browser.cjs"},
                "default": "./index.js",
            },
            "./features/*.js": {"require": "./cjs/features/*.js", "import": "./esm/features/*.js"},
            "./features/private/*": None,
            "./esm-only": {"import": "./esm/only.mjs"},
            "./lib/": "./lib/",
            "./package.json": "./package.json",
        }
    },
    {
        "node.js": "",
        "browser.mjs": "",
        "browser.cjs": "",
        "index.js": "",
        "cjs/features/a.js": "",
        "esm/features/a.js": "",
        "esm/only.mjs": "",
        "lib/util.js": "",
        "package.json": "{}",
    },
)


@pytest.mark.parametrize(
    ("spec", "target"),
    [
        # The object's own order decides; browser comes before default, require before import.
        ("cond", "node_modules/cond#browser.cjs"),
        # A pattern, its * filled in; a null target hides a path the pattern would expose.
        ("cond/features/a.js", "node_modules/cond#cjs/features/a.js"),
        ("cond/esm-only", "node_modules/cond#esm/only.mjs"),  # import, when nothing else is
        ("cond/lib/util.js", "node_modules/cond#lib/util.js"),  # a folder mapping
    ],
)
def test_exports_are_read_with_the_browser_and_require_conditions(spec, target):
    assert layout(CONDITIONAL).resolve_app(spec) == module(target)


@pytest.mark.parametrize(
    ("spec", "why"),
    [
        ("cond/features/private/x", "cond@1.0.0 exports no ./features/private/x for a browser"),
        ("cond/index.js", "cond@1.0.0 exports no ./index.js for a browser"),
        ("cond/esm/only.mjs", "cond@1.0.0 exports no ./esm/only.mjs for a browser"),
    ],
)
def test_what_exports_do_not_offer_is_missing_with_why(spec, why):
    found = layout(CONDITIONAL).resolve_app(spec)
    assert (found.module, found.missing) == ("", why)
    assert layout(CONDITIONAL).problem(spec) == (
        f"cannot import {spec!r}: {why}; import a module the package exports"
    )


def test_exports_as_a_string_or_a_list_or_conditions_only():
    assert exports_target("./main.js", ".", ("default",)) == "./main.js"
    assert exports_target(["./a.js", "./b.js"], ".", ("default",)) == "./a.js"
    assert exports_target({"require": "./c.js"}, ".", ("require",)) == "./c.js"
    assert exports_target({"import": "./c.mjs"}, ".", ("require",)) is None
    assert exports_target(5, ".", ("default",)) is None
    assert exports_target({"./x/*": "./y/*.js"}, "./x/", ("default",)) == "./y/.js"


CLASSIC = (
    "node_modules/classic",
    {
        "main": "lib/main",
        "browser": {
            "./lib/node.js": "./lib/web.js",
            "./lib/server": False,
            "fs": False,
            "stream": "readable-stream",
            "./local": "./lib/local.js",
        },
    },
    {
        "lib/main.js": "",
        "lib/node.js": "",
        "lib/web.js": "",
        "lib/server.js": "",
        "lib/local.js": "",
        "lib/data.json": "{}",
        "lib/style.css": "",
        "lib/logo.svg": "<svg/>",
        "sub/package.json": json.dumps({"main": "./entry", "browser": "./entry.browser.js"}),
        "sub/entry.browser.js": "",
        "folder/index.js": "",
    },
)
STREAM = ("node_modules/readable-stream", {"main": "stream.js"}, {"stream.js": ""})


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("./node.js", module("node_modules/classic#lib/web.js")),  # the browser field's swap
        ("./node", module("node_modules/classic#lib/web.js")),
        ("./server", Target(empty=True)),  # mapped to false: an empty module
        ("fs", Target(empty=True)),
        ("stream", module("node_modules/readable-stream#stream.js")),  # a name for another
        ("./data", module("node_modules/classic#lib/data.json")),
        ("./style.css", module("node_modules/classic#lib/style.css")),
        ("../sub", module("node_modules/classic#sub/entry.browser.js")),  # its own package.json
        ("../folder", module("node_modules/classic#folder/index.js")),
        ("..", module("node_modules/classic#lib/main.js")),  # the package's own main
        ("react/jsx-runtime", Target(runtime="react/jsx-runtime")),
        (
            "react-dom/server",
            Target(missing="'react-dom/server' is not part of the Room's React 19.3.1"),
        ),
        ("node:path", Target(missing="'node:path' is a Node.js module, which no browser has")),
        ("crypto", Target(missing="'crypto' is a Node.js module, which no browser has")),
        ("left-pad", Target(missing="left-pad is not installed (no dependency names it)")),
        (
            "./logo.svg",
            Target(missing="lib/logo.svg of classic@1.0.0 is no file type the Room loads"),
        ),
        ("./nothing", Target(missing="'./nothing' is no file of classic@1.0.0 the Room loads")),
        (
            "../../../etc/passwd",
            Target(missing="'../../../etc/passwd' points outside classic@1.0.0"),
        ),
    ],
)
def test_a_package_files_requires_resolve_as_a_bundler_for_a_browser_resolves_them(spec, expected):
    tree = layout(CLASSIC, STREAM)
    found = tree.resolve(tree.packages["node_modules/classic"], "lib/main.js", spec)
    assert found == expected
    assert found.dep == (
        expected.module
        or (
            f"runtime:{expected.runtime}"
            if expected.runtime
            else ("empty:" if expected.empty else None)
        )
    )


def test_a_package_without_main_or_exports_loads_its_index_and_its_nested_copy_wins():
    tree = layout(
        ("node_modules/outer", {}, {"index.js": ""}),
        ("node_modules/dep", {"version": "1.0.0"}, {"index.js": ""}),
        ("node_modules/outer/node_modules/dep", {"version": "2.0.0"}, {"index.js": ""}),
    )
    assert tree.resolve_app("outer") == module("node_modules/outer#index.js")
    found = tree.resolve(tree.packages["node_modules/outer"], "index.js", "dep")
    assert found == module("node_modules/outer/node_modules/dep#index.js")
    assert tree.owns("outer/x") and not tree.owns("other")


# ------------------------------------------------------------------------------ resolution


def test_a_range_picks_latest_when_it_satisfies_else_the_highest_not_deprecated():
    packument = {
        "dist-tags": {"latest": "1.2.0", "next": "2.0.0-rc.1"},
        "versions": {
            v: {"version": v, **({"deprecated": "broken"} if v == "1.3.0" else {})}
            for v in ("1.0.0", "1.2.0", "1.3.0", "2.0.0-rc.1")
        },
    }
    assert pick(packument, "^1.0.0", name="x", wanted_by="t")["version"] == "1.2.0"
    assert pick(packument, ">1.2.0 <2", name="x", wanted_by="t")["version"] == "1.3.0"
    assert pick(packument, "next", name="x", wanted_by="t")["version"] == "2.0.0-rc.1"
    assert pick(packument, "", name="x", wanted_by="t")["version"] == "1.2.0"
    with pytest.raises(Exception, match="neither a version range nor a dist-tag of x"):
        pick(packument, "beta", name="x", wanted_by="t")


@pytest.mark.parametrize("spec", ["git+https://example.com/x.git", "user/repo", "./local", "~/x"])
def test_what_is_not_a_registry_version_is_named(spec):
    assert "not a registry version" in spec_problem(spec)
    assert spec_problem("^1.2.0") is None
    assert spec_problem(5) == 'must be a version range given as a string, e.g. "^1.2.0"'


# ------------------------------------------------------------------------------- tarballs


def test_integrity_is_checked_with_the_strongest_hash_and_shasum_only_without_one():
    data = tarball({"package.json": "{}"})
    sha1 = hashlib.sha1(data).hexdigest()
    assert tarballs.verify(data, integrity=f"sha1-x {sri(data)}", shasum="") == sri(data)
    assert tarballs.verify(data, integrity="", shasum=sha1).startswith("sha1-")
    with pytest.raises(tarballs.TarballProblem, match="does not match the registry's shasum"):
        tarballs.verify(data, integrity="", shasum="0" * 40)
    with pytest.raises(tarballs.TarballProblem, match="gives no integrity hash"):
        tarballs.verify(data, integrity="md5-abc", shasum="")
    with pytest.raises(tarballs.TarballProblem, match=r"integrity hash \(sha512: expected"):
        tarballs.verify(data, integrity=sri(b"other"), shasum=sha1)


def raw_tarball(members: list[tuple[tarfile.TarInfo, bytes]]) -> bytes:
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w") as archive:
        for info, data in members:
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return gzip.compress(raw.getvalue())


def test_only_regular_text_files_inside_the_package_are_kept():
    link = tarfile.TarInfo("package/link.js")
    link.type = tarfile.SYMTYPE
    link.linkname = "/etc/passwd"
    data = raw_tarball(
        [
            (tarfile.TarInfo("package/package.json"), b'{"name": "x", "license": "MIT"}'),
            (tarfile.TarInfo("package/index.js"), b"module.exports = 1;"),
            (tarfile.TarInfo("package/../escape.js"), b"1"),
            (tarfile.TarInfo("package/node_modules/bundled/index.js"), b"1"),
            (tarfile.TarInfo("package/latin1.js"), "caf\xe9".encode("latin-1")),
            (tarfile.TarInfo("package/README.md"), b"# x"),
            (tarfile.TarInfo("package/binding.gyp"), b"{}"),
            (link, b""),
        ]
    )
    unpacked = tarballs.unpack(data, max_bytes=10_000)
    assert sorted(unpacked.files) == ["index.js", "package.json"]
    assert unpacked.install_scripts == ["install: node-gyp rebuild (binding.gyp)"]
    assert unpacked.unpacked_bytes == sum(
        len(b) for b in (b'{"name": "x", "license": "MIT"}', b"module.exports = 1;", b"1", b"1")
    ) + len("café".encode("latin-1")) + len("# x") + len("{}")


@pytest.mark.parametrize(
    ("data", "why"),
    [
        (b"not gzip at all", "its tarball cannot be read"),
        (tarball({"index.js": "1"}), "its tarball has no package.json"),
        (tarball({"package.json": "{"}), "its package.json is not valid JSON"),
        (tarball({"package.json": "[]"}), "its package.json is not a JSON object"),
        (
            tarball({"package.json": "{}", "big.js": "x" * 5000}),
            "it unpacks to more than 1,000 bytes",
        ),
    ],
)
def test_a_tarball_that_cannot_be_used_says_why(data, why):
    with pytest.raises(tarballs.TarballProblem, match=why):
        tarballs.unpack(data, max_bytes=1000)


def test_a_gzip_bomb_stops_inflating_past_its_budget():
    # A member of a type no reader knows declares 30 MB of zeros: nothing counts it as a file,
    # but the tar reader must inflate it to skip it. A few KB of gzip.
    odd = tarfile.TarInfo("package/odd")
    odd.type = b"Z"
    data = raw_tarball([(tarfile.TarInfo("package/package.json"), b"{}"), (odd, bytes(30_000_000))])
    assert len(data) < 100_000
    with pytest.raises(
        tarballs.TarballProblem, match="inflates to far more than its files declare"
    ):
        tarballs.unpack(data, max_bytes=1000)


# ------------------------------------------------------------------------------- licences


@pytest.mark.parametrize(
    ("manifest", "text", "osi"),
    [
        ({"license": "MIT"}, "MIT", True),
        ({"license": "(MIT OR CC0-1.0)"}, "(MIT OR CC0-1.0)", True),
        ({"license": "MIT AND CC-BY-4.0"}, "MIT AND CC-BY-4.0", False),
        ({"license": "Apache-2.0 WITH LLVM-exception"}, "Apache-2.0 WITH LLVM-exception", True),
        ({"license": "GPL-2.0+"}, "GPL-2.0+", True),
        ({"license": {"type": "ISC"}}, "ISC", True),
        ({"licenses": [{"type": "MIT"}, "BSD-3-Clause"]}, "MIT OR BSD-3-Clause", True),
        ({"license": "SEE LICENSE IN EULA.txt"}, "SEE LICENSE IN EULA.txt", False),
        ({"license": "UNLICENSED"}, "UNLICENSED", False),
        ({"license": "(MIT"}, "(MIT", False),
        ({"license": "MIT OR"}, "MIT OR", False),
        ({}, "", False),
    ],
)
def test_a_licence_is_osi_when_it_can_be_taken_under_osi_licences_only(manifest, text, osi):
    assert licenses.license_text(manifest) == text
    assert licenses.is_osi(text) is osi


# ------------------------------------------------------------------------------ packuments


@pytest.mark.parametrize(
    ("header", "seconds"),
    [
        ("public, max-age=300", 300),
        ("max-age=60, s-maxage=30", 60),
        ("no-cache", 0),
        ("private, max-age=300", 0),
        (None, 0),
    ],
)
def test_a_packument_is_kept_as_long_as_its_cache_control_says(header, seconds):
    assert client.max_age(header) == seconds


def test_kept_packuments_expire_and_stay_within_their_budget(monkeypatch):
    kept = client._Packuments()
    kept.put("a", {"v": 1}, 10, seconds=60)
    kept.put("b", {"v": 2}, 10, seconds=0)  # not to be kept
    assert kept.get("a") == {"v": 1} and kept.get("b") is None
    monkeypatch.setattr(client, "PACKUMENT_CACHE_BYTES", 25)
    kept.put("c", {"v": 3}, 10, seconds=60)
    kept.put("d", {"v": 4}, 10, seconds=60)  # over the budget: the oldest goes
    assert kept.get("a") is None and kept.get("d") == {"v": 4}
    kept.put("d", {"v": 5}, 10, seconds=-1)  # expired at once
    monkeypatch.setattr(client.time, "monotonic", lambda: 10**9)
    assert kept.get("c") is None
    kept.clear()
    assert kept.size == 0
