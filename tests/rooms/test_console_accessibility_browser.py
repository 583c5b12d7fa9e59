# ruff: noqa: F811 - the fixtures imported from test_console_browser
"""axe-core on every console page, in Chromium: no serious or critical violation on sign-in, the
inbox, Rooms, cards (snippet, update, repository; pending and decided; with the approval's
question open), a repository version page, a Room (empty and running an app), the app frame's
host page, an app's versions, the Connected pages, Messages (index, channel, thread), settings
and the account pages, at a desktop width and on a phone (its menu open).

axe-core is pinned in tools/axe-core (package.json and its lock) and installed on first use
into its git-ignored node_modules with `npm ci --ignore-scripts`, as tools/claude-code is.
Playwright evaluates axe.min.js in each page through the DevTools protocol, which the console's
Content-Security-Policy does not govern. Without npm the tests skip, except in CI.
"""

from pathlib import Path

import pytest
from django.conf import settings
from playwright.sync_api import expect

from agents.conversations import claim_person_handle
from agents.models import AgentProfile
from agents.sending import send_channel_message
from agents.services import create_channel
from osfoundry.auth import authenticate_bearer
from rooms.review.revisions import propose_update, request_changes
from rooms.services import approve_proposal, decline_proposal
from tests.npmtools import installed
from tests.rooms.console_pages import open_page
from tests.rooms.helpers import changed, propose_version, stored_version
from tests.rooms.test_console_browser import (  # noqa: F401 - fixtures
    browser,
    people,
    uvicorn_server,
)

pytestmark = pytest.mark.django_db(transaction=True)

TOOLS = Path(settings.BASE_DIR) / "tools" / "axe-core"
INSTALL_SECONDS = 300
# What the console must not have: axe's two worst impacts ("moderate" and "minor" are reported
# by the run, not failed on).
BLOCKING = {"serious", "critical"}
# The frames of running apps are the agents' apps (sandboxed, an opaque origin), not the console.
RUN = "axe.run(document, {resultTypes: ['violations'], iframes: false})"


@pytest.fixture(scope="module")
def axe_source() -> str:
    node_modules = installed(TOOLS, "axe-core", timeout=INSTALL_SECONDS)
    return (node_modules / "axe-core" / "axe.min.js").read_text()


def violations(page, axe_source: str) -> list[str]:
    """The page's serious and critical violations, one line each: rule, impact, where."""
    if not page.evaluate("typeof window.axe === 'object'"):
        page.evaluate(axe_source)
    found = page.evaluate(f"{RUN}.then(result => result.violations)")
    return [
        f"{v['id']} ({v['impact']}): {v['help']} at "
        + "; ".join(" ".join(node["target"]) for node in v["nodes"][:5])
        for v in found
        if v["impact"] in BLOCKING
    ]


def assert_accessible(page, axe_source, what: str):
    problems = violations(page, axe_source)
    assert problems == [], f"{what} ({page.url}):\n" + "\n".join(problems)


@pytest.fixture
def console(people, files):
    """Something on every page: a pending snippet, update and repository card, a declined one,
    one sent back with a line comment, an app running in the Room, and a channel's talk."""
    room, agent, owner = people["room"], people["agent"], people["owner"]
    from tests.rooms.runtime_support import propose

    app = approve_proposal(
        owner=owner, proposal_id=propose.__wrapped__(room, agent, files, name="Timer").pk
    )
    update = propose_update(
        caller=agent,
        room_id=str(room.pk),
        instance_id=str(app.pk),
        files=changed(files, "v2"),
        idempotency_key="axe-update-01",
    ).proposal
    snippet = propose.__wrapped__(room, agent, changed(files, "new"), name="New app")
    declined = propose.__wrapped__(room, agent, changed(files, "no"), name="Declined")
    decline_proposal(owner=owner, proposal_id=declined.pk, reason="Not now")
    sent_back = propose.__wrapped__(room, agent, changed(files, "back"), name="Sent back")
    request_changes(
        owner=owner,
        proposal_id=sent_back.pk,
        summary="One thing",
        comments=[{"path": "src/App.tsx", "line_start": 1, "line_end": 1, "body": "Why?"}],
    )
    version = stored_version(room.project, files, "f" * 40)
    repo = propose_version(room, agent, version, "axe-repo-0001", name="Timer from git")
    room.project.members.add(owner)
    from agents.tokens import create_access_token

    principal = authenticate_bearer(create_access_token(user=owner, scopes="osfoundry:write")[1])
    builder = AgentProfile.objects.create(
        handle="axe-builder", owner=owner, connection_key=principal.token_key
    )
    person = claim_person_handle(user=owner, handle="owner").profile
    channel = create_channel(project=room.project, name="general", members=[builder, person])
    root = send_channel_message(
        sender=builder,
        channel=str(channel.pk),
        body="Proposed an update, @owner",
        idempotency_key="axe-msg-0001",
    ).message
    return {
        "room": room,
        "app": app,
        "cards": {
            "update": update,
            "snippet": snippet,
            "declined": declined,
            "sent-back": sent_back,
            "repo": repo,
        },
        "version": version,
        "channel": channel,
        "thread": root,
    }


@pytest.mark.parametrize("size", ["1280x800", "390x844"])
def test_no_console_page_has_a_serious_or_critical_violation(
    uvicorn_server, browser, console, axe_source, size
):
    room, app, version = console["room"], console["app"], console["version"]
    page = open_page(browser, uvicorn_server, "owner", size, login=False)
    page.goto(f"{uvicorn_server}/accounts/login/")
    assert_accessible(page, axe_source, "sign-in")
    page.fill("#id_login", "owner")
    page.fill("#id_password", "wrong-password")
    page.get_by_role("button", name="Log in").click()
    expect(page.locator(".form-error")).to_be_visible()  # the refused page, loaded
    assert_accessible(page, axe_source, "sign-in, refused")
    page.context.close()

    page = open_page(browser, uvicorn_server, "owner", size)
    pages = {
        "inbox": "/",
        "Rooms": "/rooms/",
        "a Room": f"/rooms/{room.pk}/",
        "an app's versions": f"/rooms/{room.pk}/apps/{app.pk}/revisions/",
        "an app's version": f"/rooms/{room.pk}/apps/{app.pk}/revisions/1/",
        "a repository version": f"/repositories/{version.repository_id}/versions/{version.pk}/",
        "the app frame's host page": "/rooms/frame/",
        "Messages": "/messages/",
        "a channel": f"/messages/channels/{console['channel'].pk}/",
        "a thread": f"/messages/threads/{console['thread'].pk}/",
        "Tokens": "/connected/tokens/",
        "Connected apps": "/connected/apps/",
        "My agents": "/connected/agents/",
        "notification settings": "/settings/notifications/",
        "password": "/accounts/password/change/",
        "two-factor": "/accounts/2fa/",
        "not found": "/no/such/page/",
    }
    pages |= {f"card ({name})": f"/proposals/{p.pk}/" for name, p in console["cards"].items()}
    for what, path in pages.items():
        page.goto(uvicorn_server + path)
        assert_accessible(page, axe_source, what)

    # What opens on a page: the approval's question, the keys, a line's comment box, the
    # account menu, and on a phone the navigation's menu; a Room running an app.
    page.goto(f"{uvicorn_server}/proposals/{console['cards']['snippet'].pk}/")
    page.get_by_role("button", name="Approve and create").click()
    expect(page.locator("[data-approve-confirm]")).to_be_visible()
    assert_accessible(page, axe_source, "the approval's question")
    page.get_by_role("button", name="Keep reviewing").click()
    page.get_by_text("Request changes…").click()
    page.get_by_text("Decline…").click()
    page.locator('[data-file][data-path="src/App.tsx"] .linenos').first.click()
    expect(page.locator("[data-line-composer]")).to_be_visible()
    assert_accessible(page, axe_source, "a card's forms and line comment box")
    if size == "1280x800":
        page.get_by_role("button", name="Keys: keyboard shortcuts").click()
        expect(page.locator("[data-keys-help]")).to_be_visible()
        assert_accessible(page, axe_source, "the keys")
        page.keyboard.press("Escape")
    page.locator("[data-usermenu] summary").click()
    assert_accessible(page, axe_source, "the account menu")
    if size == "390x844":
        page.locator("[data-nav-toggle]").click()
        expect(
            page.get_by_role("navigation", name="Main").get_by_role("link").first
        ).to_be_visible()
        assert_accessible(page, axe_source, "the navigation's menu")
    page.goto(f"{uvicorn_server}/rooms/{room.pk}/apps/{app.pk}/")
    expect(page.locator("[data-app-area]")).to_have_attribute("data-state", "mounted")
    assert_accessible(page, axe_source, "a Room running an app")
    page.context.close()
