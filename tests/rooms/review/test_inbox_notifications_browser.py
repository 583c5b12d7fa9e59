# ruff: noqa: F811 - the fixtures imported from test_console_browser
"""The inbox as a notification centre, in Chromium: the pending count in the title and badge on
every page, Recently decided, filters by Room and agent, and one websocket per tab."""

import json
import re

import pytest
from django.contrib.auth import get_user_model

from agents.services import claim_connected_profile
from agents.tokens import connection_key, create_access_token
from rooms.models import Room
from rooms.services import decline_proposal
from tests.rooms.test_console_browser import (  # noqa: F401 (fixtures)
    PASSWORD,
    agent_token,
    browser,
    login,
    people,
    propose_via_api,
    screenshot,
    uvicorn_server,
    wait_for_feed,
)

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def second_room(people):
    """Another Room of the owner's, where a second agent proposes."""
    room = Room.objects.create(
        project=people["room"].project, name="Team Heron", owner=people["owner"]
    )
    other = get_user_model().objects.create_user("heron-bot", "heron@example.com", PASSWORD)
    room.members.add(people["owner"], other)
    token = create_access_token(user=other, scopes="osfoundry:read osfoundry:write")[1]
    return {"room": room, "agent": other, "token": token}


def decline_on_card(page, base, proposal_id, reason="Not now"):
    from playwright.sync_api import expect

    page.goto(f"{base}/proposals/{proposal_id}/")
    page.get_by_text("Decline…").click()
    page.fill("#decline-reason", reason)
    page.get_by_role("button", name="Decline").click()
    expect(page.locator("[data-decided]")).to_contain_text("Declined by owner on")


def test_the_title_and_badge_carry_the_pending_count_live_on_every_page(
    uvicorn_server, browser, people, agent_token, files
):
    from playwright.sync_api import expect

    room = people["room"]
    page = login(browser, uvicorn_server, "owner")
    expect(page).to_have_title("Needs your approval · osFoundry")
    page.goto(f"{uvicorn_server}/rooms/{room.pk}/")
    wait_for_feed(page)
    created = propose_via_api(uvicorn_server, agent_token, room, files, key="title-key-1")
    expect(page).to_have_title("(1) Team Falcon · osFoundry")
    expect(page.locator(".mainnav [data-pending-count]")).to_have_text("1")

    page.goto(f"{uvicorn_server}/")
    expect(page).to_have_title("(1) Needs your approval · osFoundry")
    wait_for_feed(page)
    propose_via_api(uvicorn_server, agent_token, room, {"a.txt": "a"} | files, key="title-key-2")
    expect(page).to_have_title("(2) Needs your approval · osFoundry")

    other_tab = page.context.new_page()
    decline_on_card(other_tab, uvicorn_server, created["proposal_id"])
    expect(page).to_have_title("(1) Needs your approval · osFoundry")
    expect(page.locator(".mainnav [data-pending-count]")).to_have_text("1")


def test_one_websocket_per_tab_follows_every_room(
    uvicorn_server, browser, people, agent_token, second_room, files
):
    from playwright.sync_api import expect

    page = login(browser, uvicorn_server, "owner").context.new_page()
    sockets = []
    page.on("websocket", lambda socket: sockets.append(socket.url))
    page.goto(f"{uvicorn_server}/")
    wait_for_feed(page)
    propose_via_api(uvicorn_server, agent_token, people["room"], files, key="one-key-1")
    propose_via_api(
        uvicorn_server, second_room["token"], second_room["room"], files, name="Heron board"
    )
    rows = page.locator("[data-pending-rows] tr")
    expect(rows.filter(has_text="Standup timer")).to_contain_text("Team Falcon")
    expect(rows.filter(has_text="Heron board")).to_contain_text("Team Heron")
    assert len(sockets) == 1 and sockets[0].endswith("/ws/events/")


def test_recently_decided_lists_outcome_who_and_when_live_and_after_a_reload(
    uvicorn_server, browser, people, agent_token, files
):
    from playwright.sync_api import expect

    inbox = login(browser, uvicorn_server, "owner")
    wait_for_feed(inbox)
    created = propose_via_api(
        uvicorn_server, agent_token, people["room"], files, key="decided-key-1"
    )
    expect(inbox.locator("[data-pending-rows] tr", has_text="Standup timer")).to_be_visible()
    expect(inbox.locator("[data-decided-empty]")).to_be_visible()

    card = inbox.context.new_page()
    decline_on_card(card, uvicorn_server, created["proposal_id"])

    decided = inbox.locator("[data-decided-rows] tr", has_text="Standup timer")
    expect(decided).to_contain_text("Declined")
    expect(decided).to_contain_text("owner")
    expect(decided).to_contain_text("just now")
    expect(inbox.locator("[data-pending-rows] tr")).to_have_count(0)
    expect(inbox.locator("[data-decided-empty]")).to_be_hidden()

    inbox.reload()
    decided = inbox.locator("[data-decided-rows] tr", has_text="Standup timer")
    expect(decided.locator("[data-outcome]")).to_have_text("Declined")
    expect(decided).to_contain_text("Team Falcon")
    expect(decided).to_contain_text("agent")
    expect(decided.locator("time")).to_have_attribute("datetime", re.compile(r"^\d{4}-\d\d-\d\dT"))
    screenshot(inbox, "inbox-decided.png")


def test_filters_by_room_and_agent_hold_for_live_rows_and_refuse_unknown_values(
    uvicorn_server, browser, people, agent_token, second_room, files
):
    from playwright.sync_api import expect

    propose_via_api(uvicorn_server, agent_token, people["room"], files, key="filter-key-1")
    propose_via_api(
        uvicorn_server, second_room["token"], second_room["room"], files, name="Heron board"
    )
    page = login(browser, uvicorn_server, "owner")
    rows = page.locator("[data-pending-rows] tr")
    expect(rows).to_have_count(2)

    page.select_option("select[name=room]", label="Team Heron")
    page.get_by_role("button", name="Filter").click()
    expect(rows).to_have_count(1)
    expect(rows.first).to_contain_text("Heron board")
    wait_for_feed(page)
    # Live: a proposal to the other Room stays out; the next one to this Room comes in, after it
    # on the same socket, so the first has been seen and skipped by then.
    propose_via_api(
        uvicorn_server, agent_token, people["room"], {"b.txt": "b"} | files, key="filter-key-2"
    )
    propose_via_api(
        uvicorn_server,
        second_room["token"],
        second_room["room"],
        {"c.txt": "c"} | files,
        name="Heron poll",
        key="filter-key-3",
    )
    expect(rows.filter(has_text="Heron poll")).to_be_visible()
    expect(rows).to_have_count(2)
    screenshot(page, "inbox-filtered.png")

    page.goto(f"{uvicorn_server}/?agent=agent")
    expect(rows).to_have_count(2)
    expect(rows.filter(has_text="Heron")).to_have_count(0)
    expect(page.locator("select[name=agent]")).to_have_value("agent")

    page.goto(f"{uvicorn_server}/?room=not-a-room&agent=nobody")
    expect(page.locator("[data-filter-error]")).to_have_count(2)
    expect(page.locator("[data-filter-error]").first).to_contain_text("No Room of yours")
    expect(rows).to_have_count(4)


# Chromium's headless Notification shows nothing; this records what the page asked to show.
RECORD_NOTIFICATIONS = """
window.Notification = class extends EventTarget {
  static permission = "granted";
  static async requestPermission() { return "granted"; }
  constructor(title, options) {
    super();
    const shown = JSON.parse(document.documentElement.dataset.shown || "[]");
    shown.push({ title, body: options.body, tag: options.tag });
    document.documentElement.dataset.shown = JSON.stringify(shown);
  }
};
"""


def test_desktop_notifications_are_opt_in_per_browser(
    uvicorn_server, browser, people, agent_token, files
):
    from playwright.sync_api import expect

    page = login(browser, uvicorn_server, "owner")
    page.context.add_init_script(RECORD_NOTIFICATIONS)
    page.goto(f"{uvicorn_server}/settings/notifications/")
    expect(page.locator("[data-desktop-state]")).to_have_text("Off in this browser.")
    wait_for_feed(page)
    propose_via_api(uvicorn_server, agent_token, people["room"], files, key="desk-key-1")
    expect(page.locator(".mainnav [data-pending-count]")).to_have_text("1")
    assert page.locator("html").get_attribute("data-shown") is None  # not opted in yet

    page.get_by_role("button", name="Turn on").click()
    expect(page.locator("[data-desktop-state]")).to_have_text("On in this browser.")
    created = propose_via_api(
        uvicorn_server, agent_token, people["room"], {"d.txt": "d"} | files, key="desk-key-2"
    )
    expect(page.locator(".mainnav [data-pending-count]")).to_have_text("2")
    shown = json.loads(page.locator("html").get_attribute("data-shown"))
    assert shown == [
        {
            "title": "New proposal: Standup timer",
            "body": "agent asks for your approval.",
            "tag": f"proposal-{created['proposal_id']}",
        }
    ]


def test_a_live_row_says_who_proposed_as_the_reloaded_inbox_does(
    uvicorn_server, browser, people, second_room, files
):
    from playwright.sync_api import expect

    token, raw = create_access_token(
        user=second_room["agent"], scopes="osfoundry:read osfoundry:write", name="Codex laptop"
    )
    claim_connected_profile(
        user=second_room["agent"], connection_key=connection_key(token), handle="heron-codex"
    )
    page = login(browser, uvicorn_server, "owner")
    wait_for_feed(page)
    propose_via_api(uvicorn_server, raw, second_room["room"], files, name="Heron board")
    row = page.locator("[data-pending-rows] tr", has_text="Heron board")
    expect(row).to_contain_text("heron-codex · Codex laptop")
    expect(row.locator(".agent bdi")).to_have_text("heron-codex")
    screenshot(page, "inbox-live-byline.png")
    page.set_viewport_size({"width": 390, "height": 844})
    screenshot(page, "inbox-live-byline-390.png")
    page.reload()
    row = page.locator("[data-pending-rows] tr", has_text="Heron board")
    expect(row).to_contain_text("heron-codex · Codex laptop")


def test_an_open_inbox_follows_a_room_the_person_comes_to_own(
    uvicorn_server, browser, people, agent_token, files
):
    """The Room changes owner in the admin (in the server, as an operator would) while the
    inbox is open: its pending proposal and its decided one appear without a reload."""
    from playwright.sync_api import expect

    owner, agent = people["owner"], people["agent"]
    owner.is_staff = owner.is_superuser = True
    owner.save(update_fields=["is_staff", "is_superuser"])
    room = Room.objects.create(project=people["room"].project, name="Team Osprey", owner=agent)
    room.members.add(agent)
    first = propose_via_api(
        uvicorn_server, agent_token, room, files, name="Old board", key="osprey-1"
    )
    propose_via_api(uvicorn_server, agent_token, room, files, name="Osprey clock", key="osprey-2")
    decline_proposal(owner=agent, proposal_id=first["proposal_id"], reason="Superseded")

    page = login(browser, uvicorn_server, "owner")
    wait_for_feed(page)
    rows = page.locator("[data-pending-rows] tr")
    expect(rows).to_have_count(0)

    admin = page.context.new_page()
    admin.goto(f"{uvicorn_server}/admin/rooms/room/{room.pk}/change/")
    # The owner field is the admin's autocomplete; its <select> is what the form posts.
    admin.evaluate(
        """(id) => {
          const select = document.querySelector("select[name=owner]");
          select.add(new Option("owner", id, true, true));
        }""",
        str(owner.pk),
    )
    admin.get_by_role("button", name="Save", exact=True).click()
    expect(admin.locator(".messagelist")).to_contain_text("was changed successfully")

    expect(rows.filter(has_text="Osprey clock")).to_contain_text("Team Osprey")
    expect(rows).to_have_count(1)
    decided = page.locator("[data-decided-rows] tr", has_text="Old board")
    expect(decided).to_contain_text("Declined")
    expect(page).to_have_title("(1) Needs your approval · osFoundry")
    # And live from then on.
    more = {"n.txt": "n"} | files
    propose_via_api(uvicorn_server, agent_token, room, more, name="Osprey map", key="osprey-3")
    expect(rows.filter(has_text="Osprey map")).to_be_visible()
    expect(page).to_have_title("(2) Needs your approval · osFoundry")
