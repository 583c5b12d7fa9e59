"""Every console page sends a strict Content-Security-Policy, and nothing on it breaks it.

The console is where an owner approves code, so no script may run on it but our own files:
the API docs run Swagger UI from static/vendor/ (never a CDN), the app frame keeps its own,
stricter policy, and the Django admin works under the console's policy. Chromium proves there
is no violation on the pages an owner opens.
"""

import base64
import hashlib
import re
import secrets
from urllib.parse import parse_qs, urlencode, urlsplit

import httpx
import pytest
from django.contrib.auth import get_user_model
from playwright.sync_api import expect

from rooms.models import Room
from rooms.runtime import libraries
from rooms.runtime.views import FRAME_SCRIPTS, frame_policy
from tests.rooms.runtime_support import (
    FRAME,
    approved_app,
    log_in,
    off_the_browser_loop,
    open_tab,
    propose,
    wait_state,
)

CONSOLE_POLICY = (
    "default-src 'self'; script-src 'self'; frame-src 'self'; object-src 'none'; "
    "base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)
REDIRECT_URI = "http://127.0.0.1:9/callback"  # never contacted: the browser test fulfils it

# Reports every CSP violation in every frame of the page to the test (bindings and init
# scripts bypass the page's own policy).
WATCH_VIOLATIONS = """
document.addEventListener("securitypolicyviolation", (event) => {
  window.__cspViolation(
    [event.violatedDirective, event.blockedURI, event.sourceFile, event.sample].join(" | ")
  );
});
"""


# -- the headers, through Django's client ----------------------------------------------------


@pytest.mark.django_db
@pytest.mark.parametrize("path", ["/accounts/login/", "/api/v1/openapi.json", "/admin/login/"])
def test_console_pages_send_the_strict_policy(client, path):
    response = client.get(path)
    assert response.status_code == 200
    assert response.headers["Content-Security-Policy"] == CONSOLE_POLICY


@pytest.mark.django_db
def test_the_api_docs_add_data_images_and_nothing_else(client):
    response = client.get("/api/v1/docs")
    assert response.headers["Content-Security-Policy"] == CONSOLE_POLICY + "; img-src 'self' data:"


@pytest.mark.django_db
def test_signed_in_pages_send_the_strict_policy(client, owner, room):
    client.force_login(owner)
    for path in ("/", f"/rooms/{room.pk}/"):
        response = client.get(path)
        assert response.status_code == 200, path
        assert response.headers["Content-Security-Policy"] == CONSOLE_POLICY, path


def test_the_app_frame_keeps_exactly_its_own_policy(client):
    response = client.get("/rooms/frame/")
    names = [*FRAME_SCRIPTS, *libraries.script_paths()]  # the runtime's, and each library's
    scripts = [f"http://testserver/static/{name}" for name in names]
    assert response.headers["Content-Security-Policy"] == frame_policy(scripts)
    assert "sandbox allow-scripts" in response.headers["Content-Security-Policy"]


@pytest.mark.django_db
def test_the_api_docs_page_loads_our_own_files_and_runs_no_inline_script(client):
    html = client.get("/api/v1/docs").content.decode()
    assert "cdn.jsdelivr.net" not in html and "unpkg" not in html
    scripts = re.findall(r"<script([^>]*)>(.*?)</script>", html, re.S)
    sources = [re.search(r'src="([^"]+)"', attrs) for attrs, _body in scripts]
    assert [m.group(1) for m in sources if m] == [
        "/static/ninja/swagger-ui-bundle.js",
        "/static/osfoundry/api-docs.js",
    ]
    for attrs, body in scripts:
        # The only script element without src is data (json_script), which never runs.
        assert "src=" in attrs or 'type="application/json"' in attrs, attrs
        assert "src=" not in attrs or not body.strip()
    assert 'href="/static/ninja/swagger-ui.css"' in html


# -- Chromium ---------------------------------------------------------------------------------


@pytest.fixture
def violations(context):
    seen: list[str] = []
    context.expose_binding("__cspViolation", lambda _source, text: seen.append(text))
    context.add_init_script(WATCH_VIOLATIONS)
    return seen


@pytest.fixture
def requests_made(context):
    urls: list[str] = []
    context.on("request", lambda request: urls.append(request.url))
    return urls


def csp_console_errors(page) -> list[str]:
    return [text for text in page.console_messages if "Content Security Policy" in text]


@off_the_browser_loop
def admin_user():
    return get_user_model().objects.create_superuser("admin", "admin@example.com", "pw-admin-1")


@pytest.mark.django_db(transaction=True)
def test_console_pages_run_in_chromium_without_a_single_violation(
    page, context, live_server_url, room, owner, agent, files, violations, requests_made
):
    app = approved_app(room, agent, files, name="Standup timer")
    pending = propose(room, agent, files, name="Pending timer", key="csp-pending-0001")
    base = str(live_server_url)

    page.goto(f"{base}/accounts/login/")
    expect(page.locator("#id_login")).to_be_visible()

    log_in(context, base, owner)
    page.goto(f"{base}/")
    # The websocket feed is open (a locator: wait_for_function would need eval()).
    expect(page.locator("html")).to_have_attribute("data-feeds-open", re.compile(r"^[1-9]"))
    expect(page.locator("[data-pending-rows] tr", has_text="Pending timer")).to_be_visible()

    page.goto(f"{base}/proposals/{pending.pk}/")
    expect(page.locator(".file .hl").first).to_be_visible()
    page.get_by_role("button", name="Preview").click()
    expect(page.frame_locator(FRAME).locator(".speaker")).to_have_text("Now speaking: Ada")

    frame = open_tab(page, base, app)
    expect(frame.locator(".speaker")).to_have_text("Now speaking: Ada")
    wait_state(page, "mounted")

    page.goto(f"{base}/api/v1/docs")
    operations = operation_count(base)
    expect(page.locator(".opblock")).to_have_count(operations)
    expect(page.locator(".opblock-summary-path", has_text="/api/v1/rooms").first).to_be_visible()
    page.locator(".opblock-summary", has_text="/api/v1/rooms").first.click()  # expands
    expect(page.locator(".opblock-body").first).to_be_visible()

    log_in(context, base, admin_user())
    for path in ("/admin/", "/admin/rooms/room/", f"/admin/rooms/room/{room.pk}/change/"):
        page.goto(base + path)
        expect(page.locator("#content")).to_be_visible()
    page.goto(f"{base}/admin/rooms/room/")
    page.locator("#action-toggle").check()  # the admin's own scripts run
    expect(page.locator(".action-counter")).to_contain_text(f"{Room.objects.count()} of")

    assert violations == []
    assert csp_console_errors(page) == []
    elsewhere = [url for url in requests_made if not url.startswith((base, "data:", "blob:"))]
    assert elsewhere == []


def operation_count(base: str) -> int:
    schema = httpx.get(f"{base}/api/v1/openapi.json", timeout=30).json()
    return sum(len(operations) for operations in schema["paths"].values())


# -- the OAuth consent form -------------------------------------------------------------------


def register_client(base: str) -> str:
    response = httpx.post(
        f"{base}/identity/o/api/clients",
        json={
            "client_name": "CSP test agent",
            "redirect_uris": [REDIRECT_URI],
            "token_endpoint_auth_method": "none",
        },
        timeout=30,
    )
    assert response.status_code == 201, response.text
    return response.json()["client_id"]


def authorization_endpoint(base: str) -> str:
    metadata = httpx.get(f"{base}/.well-known/oauth-authorization-server", timeout=30).json()
    return metadata["authorization_endpoint"]


def authorization_url(base: str, client_id: str) -> str:
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=")
    query = {
        "response_type": "code",
        "client_id": client_id,
        "redirect_uri": REDIRECT_URI,
        "scope": "osfoundry:read osfoundry:write",
        "state": "csp-state",
        "code_challenge": challenge.decode(),
        "code_challenge_method": "S256",
        "resource": f"{base}/api/v1/external-mcp",
    }
    return f"{authorization_endpoint(base)}?{urlencode(query)}"


@pytest.mark.django_db(transaction=True)
def test_connecting_an_oauth_client_reaches_its_callback_in_chromium(
    page, context, live_server_url, owner, violations
):
    # form-action applies to the redirects after a form is sent, in Chromium: the consent
    # page's policy must let the Connect button's answer reach the client's callback.
    base = str(live_server_url)
    callbacks: list[str] = []

    def fulfil(route):
        callbacks.append(route.request.url)
        route.fulfill(status=200, content_type="text/plain", body="callback reached")

    page.route("http://127.0.0.1:9/**", fulfil)
    log_in(context, base, owner)
    consent = page.goto(authorization_url(base, register_client(base)))
    policy = consent.headers["content-security-policy"]
    assert "form-action 'self' http://127.0.0.1:9;" in policy + ";"
    assert policy.replace(" http://127.0.0.1:9", "") == CONSOLE_POLICY

    expect(page.get_by_role("heading", name="Connect osFoundry")).to_be_visible()
    page.get_by_role("button", name="Connect").click()
    expect(page.locator("body")).to_have_text("callback reached")
    assert len(callbacks) == 1
    query = parse_qs(urlsplit(callbacks[0]).query)
    assert query["state"] == ["csp-state"] and query["code"][0]
    assert violations == []
