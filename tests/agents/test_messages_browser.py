# ruff: noqa: F811 - the fixtures imported from tests/browser.py
"""The console's Messages end to end in headless Chromium against a live uvicorn server.

A person opens a channel; an agent (the official `mcp` client) posts and the message appears
live; the person replies in the thread mentioning another agent, whose parked
wait_for_messages returns it; the composer highlights exactly the shared table's matches
(agents/mention_cases.json, the same table tests/agents/test_mentions.py runs against the
server's rule); a stranger sees nothing of the channel. Screenshots land in artifacts/.
"""

import json
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from django.conf import settings

from agents.models import AgentProfile, Message
from agents.services import create_channel
from osfoundry.auth import authenticate_bearer
from tests.browser import (  # noqa: F401 - fixtures
    TIMEOUT_MS,
    browser,
    give_browser_password,
    screenshot,
    sign_in,
    uvicorn_server,
)
from tests.live import MCP_PATH
from tests.mcpclient import call_tool

pytestmark = pytest.mark.django_db(transaction=True)

CASES = json.loads((Path(settings.BASE_DIR) / "agents" / "mention_cases.json").read_text())["cases"]


@pytest.fixture(autouse=True)
def _fast_passwords(settings):
    # The live server checks the people's passwords with the production hasher.
    settings.PASSWORD_HASHERS = [
        "django.contrib.auth.hashers.MD5PasswordHasher",
        "django.contrib.auth.hashers.PBKDF2PasswordHasher",
    ]


@pytest.fixture
def network(owner, member, stranger, project, token_factory):
    """The owner's agent alice-claude and the member's bob-codex in #general; tokens for both."""
    give_browser_password(owner, member, stranger)
    project.members.add(owner, member)
    tokens, profiles = {}, {}
    for user, handle in ((owner, "alice-claude"), (member, "bob-codex")):
        raw = token_factory(user)
        tokens[handle] = raw
        principal = authenticate_bearer(raw)
        profiles[handle] = AgentProfile.objects.create(
            handle=handle, owner=user, connection_key=principal.token_key
        )
    general = create_channel(project=project, name="general", members=profiles.values())
    yield {"tokens": tokens, "profiles": profiles, "channel": general}
    # Every page this test opened leaves before the database is emptied: a Messages page's
    # feed still reading while the flush truncates its tables deadlocks on PostgreSQL.
    while OPEN_CONTEXTS:
        OPEN_CONTEXTS.pop().close()


# The browser contexts `login` opened during the current test (closed by `network`).
OPEN_CONTEXTS: list = []


def login(browser, base, username, width=1280):
    context = browser.new_context(viewport={"width": width, "height": 900})
    OPEN_CONTEXTS.append(context)
    context.set_default_timeout(TIMEOUT_MS)
    return sign_in(context.new_page(), base, username)


def wait_for_messages_feed(page):
    from playwright.sync_api import expect

    expect(page.locator("html")).to_have_attribute("data-messages-feed", "open")


def mcp(base, token, tool, arguments):
    """One tools/call through the official client, in a thread of its own: Playwright's sync
    API keeps an event loop running in this one."""
    with ThreadPoolExecutor(1) as pool:
        result = pool.submit(call_tool, base + MCP_PATH, token, tool, arguments).result(70)
    assert not result.is_error, result.content
    return result.structured_content


def test_a_person_follows_a_channel_live_and_reaches_a_parked_agent(
    uvicorn_server, browser, network
):
    from playwright.sync_api import expect

    general, tokens = network["channel"], network["tokens"]
    page = login(browser, uvicorn_server, "owner")
    page.goto(f"{uvicorn_server}/messages/")
    page.fill("#handle", "ada")
    page.get_by_role("button", name="Claim handle").click()
    expect(page.locator("[data-my-handle]")).to_have_text("@ada")
    page.get_by_role("link", name="#general").click()
    wait_for_messages_feed(page)
    page.evaluate("window.__notReloaded = true")

    posted = mcp(
        uvicorn_server,
        tokens["bob-codex"],
        "send_channel_message",
        {"channel": "general", "body": "Build is green on main", "idempotency_key": "bob-b-0001"},
    )
    item = page.locator(f'[data-message-id="{posted["message_id"]}"]')
    expect(item).to_contain_text("Build is green on main")
    expect(item.locator("[data-sender]")).to_have_text("@bob-codex")
    assert page.evaluate("window.__notReloaded") is True

    # alice-claude parks a wait; the page shows it listening once it is parked.
    answers = []
    waiting = threading.Thread(
        target=lambda: answers.append(
            mcp(uvicorn_server, tokens["alice-claude"], "wait_for_messages", {"timeout_s": 50})
        )
    )
    waiting.start()
    wait_until_listening(page, uvicorn_server)
    screenshot(page, "messages-index.png")

    page.goto(f"{uvicorn_server}/messages/channels/{general.pk}/")
    item = page.locator(f'[data-message-id="{posted["message_id"]}"]')
    item.get_by_role("link", name="Reply in thread").click()
    expect(page.get_by_role("heading", name="Thread started by @bob-codex")).to_be_visible()
    page.locator("[data-composer-body]").fill(
        "Thanks! @alice-claude please deploy it. Mail me at ada@alice-claude.dev"
    )
    marks = page.locator("[data-mention-preview] mark")
    expect(marks).to_have_count(1)
    expect(marks.first).to_have_attribute("data-handle", "alice-claude")
    expect(page.locator('[data-addressed-handle="alice-claude"]')).to_contain_text("mentioned")
    screenshot(page, "messages-thread-composer.png")
    page.get_by_role("button", name="Send as @ada").dblclick()
    report = page.locator(".msg.is-own [data-delivery]")
    expect(report).to_contain_text("Delivered to @alice-claude (mention)")
    waiting.join(60)
    messages = answers[0]["messages"]
    assert [(m["from"], m["via"]) for m in messages] == [("ada", "mention")]
    assert messages[0]["thread_root_id"] == posted["message_id"]
    assert Message.objects.filter(sender__handle="ada").count() == 1  # the double click sent once
    screenshot(page, "messages-thread.png")
    screenshots_of_both_widths(page, browser, uvicorn_server, general, posted["message_id"])


def screenshots_of_both_widths(page, browser, base, channel, root_id):
    page.goto(f"{base}/messages/channels/{channel.pk}/")
    screenshot(page, "messages-channel.png")
    narrow = login(browser, base, "owner", width=390)
    narrow.goto(f"{base}/messages/channels/{channel.pk}/")
    screenshot(narrow, "messages-channel-390.png")
    narrow.goto(f"{base}/messages/threads/{root_id}/")
    screenshot(narrow, "messages-thread-390.png")


def wait_until_listening(page, base):
    """The Messages page shows alice-claude listening once its wait is parked."""
    from playwright.sync_api import expect

    for _attempt in range(100):
        page.goto(f"{base}/messages/")
        presence = page.locator('[data-agent="alice-claude"] [data-presence]')
        if presence.text_content() == "listening":
            return
        page.wait_for_timeout(100)
    expect(presence).to_have_text("listening")


def test_the_composer_highlights_exactly_the_shared_tables_matches(
    uvicorn_server, browser, network
):
    from playwright.sync_api import expect

    page = login(browser, uvicorn_server, "owner")
    page.goto(f"{uvicorn_server}/messages/")
    page.fill("#handle", "ada")
    page.get_by_role("button", name="Claim handle").click()
    # The browser copy of the rule, case by case, in one call.
    verdicts = page.evaluate(
        "cases => cases.map(c => window.osfMentions.bodyMentionsHandle(c.body, c.handle))", CASES
    )
    assert verdicts == [case["mentions"] for case in CASES]
    # And what a person sees: the composer marks the handle exactly when the table says so.
    body = page.locator("[data-composer-body]")
    for case in CASES:
        body.fill(case["body"])
        marks = page.locator(f'[data-mention-preview] mark[data-handle="{case["handle"]}"]')
        expect(marks).to_have_count(1 if case["mentions"] else 0)


def test_a_stranger_sees_nothing_of_the_channel(uvicorn_server, browser, network):
    from playwright.sync_api import expect

    general = network["channel"]
    mcp(
        uvicorn_server,
        network["tokens"]["bob-codex"],
        "send_channel_message",
        {"channel": "general", "body": "internal roadmap", "idempotency_key": "bob-b-0002"},
    )
    page = login(browser, uvicorn_server, "stranger")
    page.goto(f"{uvicorn_server}/messages/")
    expect(page.get_by_role("heading", name="Messages")).to_be_visible()
    expect(page.locator("[data-conversations]")).not_to_contain_text("general")
    response = page.goto(f"{uvicorn_server}/messages/channels/{general.pk}/")
    assert response is not None and response.status == 404
    expect(page.locator("body")).not_to_contain_text("internal roadmap")


def test_channel_replies_and_a_new_direct_thread_arrive_live(uvicorn_server, browser, network):
    from playwright.sync_api import expect

    general, tokens = network["channel"], network["tokens"]
    page = login(browser, uvicorn_server, "owner")
    page.goto(f"{uvicorn_server}/messages/channels/{general.pk}/")
    wait_for_messages_feed(page)
    root = mcp(
        uvicorn_server,
        tokens["bob-codex"],
        "send_channel_message",
        {"channel": "general", "body": "Release at 5", "idempotency_key": "bob-c-0001"},
    )
    mcp(
        uvicorn_server,
        tokens["bob-codex"],
        "send_channel_message",
        {
            "channel": "general",
            "body": "Moved to 6",
            "thread_root_id": root["message_id"],
            "idempotency_key": "bob-c-0002",
        },
    )
    item = page.locator(f'[data-message-id="{root["message_id"]}"]')
    expect(item.locator("[data-reply-count]")).to_have_text("1")
    expect(page.locator("[data-message-list]")).not_to_contain_text("Moved to 6")
    sent = mcp(
        uvicorn_server,
        tokens["bob-codex"],
        "send_agent_message",
        {"to": "alice-claude", "body": "Which schema?", "idempotency_key": "bob-dm-0001"},
    )
    link = page.locator(f'[data-conversation="thread:{sent["message_id"]}"]')
    expect(link.locator("[data-unread]")).to_have_text("1")
    link.click()
    expect(page.locator(f'[data-message-id="{sent["message_id"]}"]')).to_contain_text(
        "Which schema?"
    )
    wait_for_messages_feed(page)
    reply = mcp(
        uvicorn_server,
        tokens["bob-codex"],
        "send_agent_message",
        {
            "to": "alice-claude",
            "body": "The orders one, v2",
            "thread_root_id": sent["message_id"],
            "idempotency_key": "bob-dm-0002",
        },
    )
    expect(page.locator(f'[data-message-id="{reply["message_id"]}"]')).to_contain_text("v2")
    assert page.locator(f'[data-message-id="{reply["message_id"]}"]').count() == 1
