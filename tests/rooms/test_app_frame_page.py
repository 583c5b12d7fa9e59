"""The sandboxed frame page: static, its own strict CSP, frameable by our own pages only."""

from django.urls import reverse

FRAME_SCRIPTS = (
    "/static/vendor/sucrase/sucrase.js",
    "/static/vendor/react/react.js",
    "/static/rooms/frame-runtime.js",
)


def policy(response) -> dict[str, str]:
    directives = [d.strip() for d in response["Content-Security-Policy"].split(";")]
    return {d.split(" ", 1)[0]: d.split(" ", 1)[1] if " " in d else "" for d in directives}


def test_frame_page_has_its_own_csp_narrowed_to_the_runtime_scripts(client):
    response = client.get(reverse("rooms:app_frame"))
    assert response.status_code == 200
    csp = policy(response)
    sources = csp["script-src"].split()
    assert sources == [f"http://testserver{path}" for path in FRAME_SCRIPTS] + ["'unsafe-eval'"]
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
    assert html.count("<script") == len(FRAME_SCRIPTS)  # no inline script


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
    for path in FRAME_SCRIPTS:
        response = client.get(path, HTTP_ORIGIN="null")
        assert response.status_code == 200, path
        assert response["Access-Control-Allow-Origin"] == "*", path
