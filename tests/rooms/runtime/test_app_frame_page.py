"""The sandboxed frame page: static, its own strict CSP, frameable by our own pages only."""

import json
import re

from django.urls import reverse

from rooms.runtime import libraries

FRAME_SCRIPTS = (
    "/static/vendor/sucrase/sucrase.js",
    "/static/vendor/react/react.js",
    "/static/rooms/frame-runtime.js",
)


def policy(response) -> dict[str, str]:
    directives = [d.strip() for d in response["Content-Security-Policy"].split(";")]
    return {d.split(" ", 1)[0]: d.split(" ", 1)[1] if " " in d else "" for d in directives}


def library_paths() -> list[str]:
    manifest = json.loads(libraries.MANIFEST.read_text())
    return [f"/static/vendor/{file['path']}" for file in manifest["files"].values()]


def test_frame_page_has_its_own_csp_narrowed_to_the_runtime_and_library_scripts(client):
    response = client.get(reverse("rooms:app_frame"))
    assert response.status_code == 200
    csp = policy(response)
    sources = csp["script-src"].split()
    # Each file by its path, never a folder: nothing else under static/ may run in the frame.
    scripts = [*FRAME_SCRIPTS, *library_paths()]
    assert sources == [f"http://testserver{path}" for path in scripts] + ["'unsafe-eval'"]
    assert "/static/vendor/libs/recharts/recharts.js" in library_paths()
    assert not [source for source in sources if source.endswith("/")]
    assert csp["default-src"] == "'none'"
    assert csp["connect-src"] == "'none'"
    assert csp["form-action"] == "'none'"
    assert csp["base-uri"] == "'none'"
    assert csp["frame-ancestors"] == "'self'"
    assert csp["sandbox"] == "allow-scripts"
    assert csp["style-src"] == "'unsafe-inline'"
    assert "allow-same-origin" not in response["Content-Security-Policy"]


def test_frame_page_may_be_framed_by_the_same_origin_only(client):
    frame = client.get(reverse("rooms:app_frame"))
    assert frame["X-Frame-Options"] == "SAMEORIGIN"
    # The rest of the site keeps the default.
    assert client.get(reverse("account_login"))["X-Frame-Options"] == "DENY"


def test_frame_page_loads_only_the_runtime_scripts_with_cors(client):
    html = client.get(reverse("rooms:app_frame")).content.decode()
    for path in FRAME_SCRIPTS:
        assert f'<script src="{path}" crossorigin="anonymous"></script>' in html
    # No inline script: besides them, only the library manifest, as a JSON data block.
    assert html.count("<script") == len(FRAME_SCRIPTS) + 1
    block = re.search(r'<script id="osf-libraries" type="application/json">(.*?)</script>', html)
    embedded = json.loads(block.group(1))
    assert embedded["modules"]["lodash/debounce"] == "lodash"
    assert embedded["files"]["react-chartjs-2"] == {
        "src": "/static/vendor/libs/react-chartjs-2/react-chartjs-2.js",
        "requires": ["chartjs"],
    }


def test_frame_page_is_the_same_for_everyone_and_sets_no_cookie(client, owner):
    anonymous = client.get(reverse("rooms:app_frame"))
    client.force_login(owner)
    logged_in = client.get(reverse("rooms:app_frame"))
    assert anonymous.content == logged_in.content
    assert not logged_in.cookies
    assert "Cookie" not in logged_in.get("Vary", "")
    assert owner.username not in logged_in.content.decode()


def test_runtime_static_files_allow_cors_for_the_opaque_frame(client):
    # The sandboxed frame has origin "null": its crossorigin script loads need this header,
    # also when static files are served by the finders (STATIC_MANIFEST=0, as in tests).
    for path in [*FRAME_SCRIPTS, *library_paths()]:
        response = client.get(path, HTTP_ORIGIN="null")
        assert response.status_code == 200, path
        assert response["Access-Control-Allow-Origin"] == "*", path
