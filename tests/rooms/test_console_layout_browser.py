# ruff: noqa: F811 - the fixtures imported from test_console_browser
"""Pages that fit, in Chromium at 1280×800, 1440×900 and 390×844 (a phone, touch): nothing
overlaps or is clipped (the navigation, the card's sticky toolbar and file headers against the
code, the file tree against the window), the Room opens the app used last or says what to do,
a Room's name appears once, keyboard hints stay off touch screens, the navigation has one line
on a desktop and a menu on a phone, inbox rows of one name say what differs, and the Messages
sidebar's sentences read as sentences. Screenshots of every page at every size land in
artifacts/ (layout-<page>-<size>.png)."""

import httpx
import pytest
from playwright.sync_api import expect

from agents.tokens import create_access_token
from rooms.models import Repository, RepositoryVersion
from rooms.services import approve_proposal
from tests.rooms.console_pages import (
    SIZES,
    bottom,
    box,
    fits_the_width,
    open_page,
    overlap,
    shoot,
    visible_boxes,
)
from tests.rooms.test_console_browser import (  # noqa: F401 - fixtures
    browser,
    people,
    uvicorn_server,
    wait_for_feed,
)

pytestmark = pytest.mark.django_db(transaction=True)

NAV_PARTS = ".topbar .brand, .topbar .navtoggle, .mainnav .navlink, .navgroup-label, .usernav"


def many_files(files, count=21):
    out = dict(files)
    for index in range(count - len(files)):
        out[f"src/parts/Part{index:02}.tsx"] = "".join(
            f"export const part{index}_{line} = {line};\n" for line in range(40)
        )
    return out


def propose(room, agent, files, name, key):
    from tests.rooms.runtime_support import propose as propose_off_loop

    return propose_off_loop(room, agent, files, name=name, key=key)


def assert_navigation_in_one_piece(page):
    """The top bar is one line; none of its parts covers another or leaves the window."""
    parts = visible_boxes(page, NAV_PARTS)
    assert len(parts) >= 3
    for index, part in enumerate(parts):
        assert part["x"] >= 0 and part["x"] + part["width"] <= page.viewport_size["width"] + 0.5
        for other in parts[index + 1 :]:
            assert not overlap(part, other), (part, other)
    topbar = box(page.locator(".topbar"))
    line = page.evaluate(
        "parseFloat(getComputedStyle(document.documentElement).fontSize) * 3.2"
    )  # --topbar-h
    assert topbar["height"] <= line + 1, topbar


@pytest.mark.parametrize("size", list(SIZES))
def test_a_card_of_21_files_keeps_the_code_clear_of_the_toolbar_and_the_tree_in_the_window(
    uvicorn_server, browser, people, files, size
):
    room, agent = people["room"], people["agent"]
    proposal = propose(room, agent, many_files(files), "Twenty-one", f"fit-{size}")
    page = open_page(browser, uvicorn_server, "owner", size)
    page.goto(f"{uvicorn_server}/proposals/{proposal.pk}/")
    expect(page.get_by_role("heading", name="Review all proposed files (21)")).to_be_visible()
    assert fits_the_width(page)
    assert_navigation_in_one_piece(page)
    shoot(page, f"layout-card-{size}.png", full_page=False)
    phone = SIZES[size][2]
    topbar = box(page.locator(".topbar"))

    target = page.locator("[data-file]").nth(14)
    anchor = target.get_attribute("data-anchor")
    if phone:
        page.goto(f"{uvicorn_server}/proposals/{proposal.pk}/#{anchor}")
    else:
        page.locator(f'[data-file-list] a[href="#{anchor}"]').click()
    expect(page).to_have_url(f"{uvicorn_server}/proposals/{proposal.pk}/#{anchor}")
    head = box(target.locator(".file-head"))
    cover = topbar if phone else box(page.locator("[data-toolbar]"))
    # The file's header shows in full under the sticky bars, its first line under the header.
    assert head["y"] >= bottom(cover) - 1, (head, cover)
    first_line = box(target.locator(".code .line").first)
    assert first_line["y"] >= bottom(head) - 1

    # A line jumped to lands under the toolbar and the file's sticky header.
    page.goto(f"{uvicorn_server}/proposals/{proposal.pk}/#{anchor}-20")
    page.wait_for_timeout(200)  # the jump's scroll settles: a box read, not a timing assertion
    line = box(page.locator(f'[id="{anchor}-20"]').locator("xpath=.."))
    head = box(target.locator(".file-head"))
    assert not overlap(line, head) and line["y"] >= bottom(head) - 1, (line, head)
    assert bottom(line) <= page.viewport_size["height"], line  # on screen, not scrolled away
    if not phone:
        assert not overlap(line, box(page.locator("[data-toolbar]")))
        # The file tree stays in the window, under the top bar, scrolling inside itself.
        tree = box(page.locator(".filelist"))
        assert tree["y"] >= bottom(topbar) - 1
        assert bottom(tree) <= page.viewport_size["height"] + 1, tree
        assert not overlap(tree, box(page.locator("[data-toolbar]")))
    shoot(page, f"layout-card-scrolled-{size}.png", full_page=False)

    # Hints that need a keyboard are not on a touch screen.
    keys = page.locator("[data-keys-open]")
    hint = page.locator("[data-draft-summary] [data-keyboard-hint]")
    if phone:
        expect(keys).to_be_hidden()
        expect(hint).to_be_hidden()
    else:
        expect(keys).to_be_visible()
    page.context.close()


PAGES = {
    "inbox": "/",
    "rooms": "/rooms/",
    "room": "/rooms/{room}/",
    "versions": "/rooms/{room}/apps/{app}/revisions/",
    "version": "/rooms/{room}/apps/{app}/revisions/1/",
    "repository": "/repositories/{repository}/versions/{repo_version}/",
    "messages": "/messages/",
    "tokens": "/connected/tokens/",
    "clients": "/connected/apps/",
    "agents": "/connected/agents/",
    "settings": "/settings/notifications/",
}


@pytest.mark.parametrize("size", list(SIZES))
def test_every_page_fits_with_the_navigation_in_one_piece(
    uvicorn_server, browser, people, files, size
):
    room, agent, owner = people["room"], people["agent"], people["owner"]
    app = approve_proposal(
        owner=owner, proposal_id=propose(room, agent, files, "Fits", f"pages-{size}").pk
    )
    repository = Repository.objects.create(project=room.project, name=f"timer-{size}")
    repo_version = RepositoryVersion.objects.create(
        repository=repository, commit_hash="e" * 40, files=files | {"README.md": "# Timer\n"}
    )
    ids = {"room": room.pk, "app": app.pk, "repository": repository.pk}
    page = open_page(browser, uvicorn_server, "owner", size)
    for name, path in PAGES.items():
        page.goto(uvicorn_server + path.format(**ids, repo_version=repo_version.pk))
        assert fits_the_width(page), name
        assert_navigation_in_one_piece(page)
        shoot(page, f"layout-{name}-{size}.png")
    page.goto(f"{uvicorn_server}/accounts/logout/")
    shoot(page, f"layout-logout-{size}.png")

    # The navigation's names, once each; on a phone behind one menu.
    page.goto(f"{uvicorn_server}/")
    links = page.get_by_role("navigation", name="Main").get_by_role("link")
    names = ["Rooms", "Needs your approval", "Messages", "Tokens", "Connected apps", "My agents"]
    toggle = page.locator("[data-nav-toggle]")
    if SIZES[size][2]:
        expect(links.first).to_be_hidden()
        toggle.click()
        expect(toggle).to_have_attribute("aria-expanded", "true")
        shoot(page, f"layout-menu-{size}.png", full_page=False)
    else:
        expect(toggle).to_be_hidden()
    expect(links).to_have_count(len(names))
    for link, name in zip(links.all(), names, strict=True):
        expect(link).to_be_visible()
        expect(link).to_contain_text(name)
    expect(page.locator(".mainnav")).to_contain_text("Connected → Needs your approval")
    shown = [box(link) for link in links.all()]
    for index, one in enumerate(shown):
        for other in shown[index + 1 :]:
            assert not overlap(one, other), (one, other)
    if SIZES[size][2]:
        page.keyboard.press("Escape")
        expect(links.first).to_be_hidden()
        expect(toggle).to_be_focused()
        toggle.click()
        links.first.click()
        expect(page).to_have_url(f"{uvicorn_server}/rooms/")
    page.context.close()


@pytest.mark.parametrize("size", list(SIZES))
def test_the_room_opens_the_app_used_last_or_says_what_to_do(
    uvicorn_server, browser, people, files, size
):
    room, agent, owner = people["room"], people["agent"], people["owner"]
    app = approve_proposal(
        owner=owner, proposal_id=propose(room, agent, files, "Last used", f"last-{size}").pk
    )
    page = open_page(browser, uvicorn_server, "member", size)
    room_url = f"{uvicorn_server}/rooms/{room.pk}/"
    page.goto(room_url)
    area = page.locator("[data-app-area]")
    hint = area.locator("[data-app-placeholder]")
    expect(hint).to_contain_text("Open an app: choose its tab above")
    # No empty stage: one line that says what to do, not a box waiting to be filled.
    assert box(area)["height"] < 120, box(area)
    keyboard_hint = hint.locator("[data-keyboard-hint]")
    if SIZES[size][2]:
        expect(keyboard_hint).to_be_hidden()
    else:
        expect(keyboard_hint).to_be_visible()
    # The Room's name, once on its page.
    assert page.locator("main").inner_text().count(room.name) == 1
    shoot(page, f"layout-room-empty-{size}.png", full_page=False)

    page.locator("[data-launcher] [role=tab]", has_text="Last used").click()
    expect(area).to_have_attribute("data-state", "mounted", timeout=30_000)
    page.goto(room_url)
    expect(page).to_have_url(f"{room_url}apps/{app.pk}/")
    expect(area).to_have_attribute("data-state", "mounted", timeout=30_000)
    expect(page.locator("[data-launcher] [aria-selected=true]")).to_have_text("Last used")
    shoot(page, f"layout-room-last-used-{size}.png", full_page=False)
    area.get_by_role("button", name="Close").click()
    page.goto(room_url)
    expect(hint).to_be_visible()
    expect(page).to_have_url(room_url)
    page.context.close()


def test_a_card_names_its_room_once(uvicorn_server, browser, people, files):
    room, agent = people["room"], people["agent"]
    proposal = propose(room, agent, files, "Named once", "room-once-01")
    page = open_page(browser, uvicorn_server, "owner")
    page.goto(f"{uvicorn_server}/proposals/{proposal.pk}/")
    assert page.locator("main").inner_text().count(room.name) == 1
    expect(page.locator("[data-room-link]")).to_have_attribute("href", f"/rooms/{room.pk}/")
    page.context.close()


def test_rows_of_one_name_arriving_live_say_what_differs(uvicorn_server, browser, people, files):
    room = people["room"]
    token = create_access_token(user=people["agent"], scopes="osfoundry:read osfoundry:write")[1]
    page = open_page(browser, uvicorn_server, "owner")
    expect(page.locator("html")).to_have_attribute("data-feeds-open", "1")
    made = []
    for index, marker in enumerate(("one", "two")):
        response = httpx.post(
            f"{uvicorn_server}/api/v1/rooms/{room.pk}/proposals/snippet",
            json={
                "name": "Same name",
                "files": {**files, "src/App.tsx": files["src/App.tsx"] + f"\n// {marker}\n"},
                "idempotency_key": f"same-name-{index:04d}",
            },
            headers={"Authorization": f"Bearer {token}"},
            timeout=10,
        )
        assert response.status_code == 201, response.text
        made.append(response.json())
    rows = page.locator("[data-pending-rows] tr")
    expect(rows).to_have_count(2)
    for created in made:
        detail = page.locator(f'tr[data-proposal-id="{created["proposal_id"]}"] [data-row-detail]')
        expect(detail).to_contain_text("revision 1 · ")
        expect(detail).to_contain_text(f"content {created['content_hash'][:8]}")
    page.reload()
    for created in made:
        detail = page.locator(f'tr[data-proposal-id="{created["proposal_id"]}"] [data-row-detail]')
        expect(detail).to_contain_text(f"content {created['content_hash'][:8]}")
    shoot(page, "layout-inbox-same-name.png", full_page=False)
    page.context.close()


def test_the_messages_sidebar_reads_its_sentences_as_sentences(uvicorn_server, browser, people):
    page = open_page(browser, uvicorn_server, "member", "1280x800")
    page.goto(f"{uvicorn_server}/messages/")
    empty = page.locator("[data-agents] li.side-empty")
    expect(empty).to_contain_text("No agent of yours has a handle yet")
    line_height = empty.evaluate("el => parseFloat(getComputedStyle(el).lineHeight)")
    # About fifteen words in a 270 px sidebar: a few lines, not one word a line.
    assert box(empty)["height"] <= 5 * line_height, box(empty)
    shoot(page, "layout-messages-empty-1280x800.png", full_page=False)
    page.context.close()


@pytest.mark.parametrize("size", list(SIZES))
def test_a_room_of_60_apps_pages_its_table_and_says_its_tab_bar_holds_more(
    uvicorn_server, browser, people, size
):
    from tests.rooms.launcher.test_console_room import apps_in_bulk

    room, agent, owner = people["room"], people["agent"], people["owner"]
    made = apps_in_bulk(room, owner, agent, 60)
    page = open_page(browser, uvicorn_server, "owner", size)
    page.goto(f"{uvicorn_server}/rooms/{room.pk}/")
    launcher = page.locator("[data-launcher]")
    expect(launcher.locator("[role=tab]")).to_have_count(60)
    # The tabs do not all fit: the bar's end says how many there are and leads to the table.
    every = page.locator("[data-launcher-all]")
    expect(every).to_have_text("All 60 apps ↓")
    assert not overlap(box(every), box(launcher))
    pager = page.locator("[data-pager]")
    expect(pager).to_contain_text("1–50 of 60 apps")
    expect(page.locator("[data-app-rows] tr")).to_have_count(50)
    assert fits_the_width(page)
    assert_navigation_in_one_piece(page)
    shoot(page, f"layout-room-60-apps-{size}.png")

    pager.get_by_role("link", name="Next").click()
    expect(page.locator("[data-app-rows] tr")).to_have_count(10)
    # A name in the table opens its tab, scrolled into the bar's view.
    page.locator("[data-app-rows]").get_by_role("link", name="App 59").click()
    selected = launcher.locator("[aria-selected=true]")
    expect(selected).to_have_text("App 59")
    expect(page).to_have_url(f"{uvicorn_server}/rooms/{room.pk}/apps/{made[59].pk}/")
    bar, tab = box(launcher), box(selected)
    assert bar["x"] - 1 <= tab["x"] and tab["x"] + tab["width"] <= bar["x"] + bar["width"] + 1
    page.context.close()


def row_numbers(page) -> list[str]:
    return page.locator("[data-app-rows] td.num").all_inner_texts()


def test_a_paged_apps_table_numbers_its_rows_and_counts_the_room_live(
    uvicorn_server, browser, people
):
    """Removing and restoring a tab renumbers every open page's rows by the tab bar's order,
    and each pager says what its rows now are: no gap, no stale total."""
    from tests.rooms.launcher.test_console_room import apps_in_bulk

    room, agent, owner = people["room"], people["agent"], people["owner"]
    apps_in_bulk(room, owner, agent, 60)
    first, last = (open_page(browser, uvicorn_server, "member") for _ in range(2))
    first.goto(f"{uvicorn_server}/rooms/{room.pk}/")
    last.goto(f"{uvicorn_server}/rooms/{room.pk}/?page=2")
    for page in (first, last):
        wait_for_feed(page)
    assert row_numbers(first) == [str(n) for n in range(1, 51)]
    assert row_numbers(last) == [str(n) for n in range(51, 61)]

    owner_page = open_page(browser, uvicorn_server, "owner")
    owner_page.goto(f"{uvicorn_server}/rooms/{room.pk}/")
    owner_page.get_by_role("button", name="Remove “App 2” from the launcher").click()
    expect(owner_page.get_by_role("button", name="Restore “App 2”")).to_be_visible()

    expect(first.locator("[data-app-rows] tr")).to_have_count(49)
    expect(first.locator("[data-pager-summary]")).to_have_text("1–49 of 59 apps")
    expect(first.locator("[data-launcher-all]")).to_have_text("All 59 apps ↓")
    assert row_numbers(first) == [str(n) for n in range(1, 50)]
    expect(last.locator("[data-pager-summary]")).to_have_text("50–59 of 59 apps")
    assert row_numbers(last) == [str(n) for n in range(50, 60)]

    # Restored at the end of the tab bar: it joins the last page's rows only.
    owner_page.get_by_role("button", name="Restore “App 2”").click()
    restored = last.locator("[data-app-rows] tr").last
    expect(restored).to_contain_text("App 2")
    expect(last.locator("[data-pager-summary]")).to_have_text("50–60 of 60 apps")
    assert row_numbers(last) == [str(n) for n in range(50, 61)]
    expect(first.locator("[data-pager-summary]")).to_have_text("1–49 of 60 apps")
    expect(first.locator("[data-app-rows] tr")).to_have_count(49)
    shoot(last, "layout-room-60-apps-live-last-page.png", full_page=False)
    for page in (first, last, owner_page):
        page.context.close()
