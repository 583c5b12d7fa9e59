"""Apps that use the curated libraries run in the Room: one realistic app per library, proposed,
approved and opened from the launcher; what the library draws appears, and nothing logs an error.

The apps are in tests/rooms/snippets/lib-*; the frame loads each library only when an app
imports it (static/vendor/libraries.json, rooms/runtime/libraries.py).
"""

import re

import pytest
from playwright.sync_api import expect

from tests.rooms.runtime_support import approved_app, log_in, open_tab, snippet_files, wait_state

pytestmark = pytest.mark.django_db(transaction=True)


def console_errors(page) -> list[str]:
    errors: list[str] = []
    page.on("console", lambda message: message.type == "error" and errors.append(message.text))
    page.on("pageerror", lambda error: errors.append(str(error)))
    return errors


def library_requests(page) -> list[str]:
    loaded: list[str] = []
    page.on(
        "request",
        lambda request: (
            "/static/vendor/libs/" in request.url
            and loaded.append(request.url.split("/static/vendor/libs/")[1].split("/")[0])
        ),
    )
    return loaded


def run_library_app(page, context, live_server_url, room, owner, agent, folder):
    app = approved_app(room, agent, snippet_files(folder), name=folder)
    log_in(context, live_server_url, owner)
    errors = console_errors(page)
    loaded = library_requests(page)
    frame = open_tab(page, live_server_url, app)
    wait_state(page, "mounted")
    return frame, errors, loaded


def draws_lucide_icons(frame):
    expect(frame.locator("svg.lucide-plus")).to_have_count(1)
    expect(frame.locator("svg.lucide-trash-2")).to_have_count(2)
    frame.get_by_placeholder("New card").fill("Send the minutes")
    frame.get_by_role("button", name="Add card").click()
    expect(frame.locator("svg.lucide-trash-2")).to_have_count(3)


def draws_recharts_charts(frame):
    expect(frame.locator(".by-month .recharts-line-curve")).to_have_count(1)
    expect(frame.locator(".recharts-bar-rectangle")).to_have_count(12)
    expect(frame.locator(".recharts-legend-item-text")).to_have_text(["food", "travel"])


def formats_french_dates(frame):
    expect(frame.locator("h1")).to_have_text("Semaine du 15 juin 2026")
    expect(frame.locator("#week li")).to_have_text(
        [
            "lundi 15",
            "mardi 16",
            "mercredi 17",
            "jeudi 18",
            "vendredi 19",
            "samedi 20",
            "dimanche 21",
        ]
    )
    expect(frame.locator("#deadline")).to_have_text("1296 days to the deadline")


def groups_with_lodash(frame):
    expect(frame.locator("#groups li")).to_have_text(
        ["Engines: Ada (32 h)", "Compilers: Barbara, Grace (68 h)", "Kernels: Linus (12 h)"]
    )
    frame.get_by_placeholder("Search").fill("gr")  # debounced
    expect(frame.locator("#groups li")).to_have_text(["Compilers: Grace (40 h)"])


def draws_d3_bars(frame):
    expect(frame.locator("rect.bar")).to_have_count(4)
    expect(frame.locator("g.tick text").first).to_have_text("North")


def keeps_a_zustand_store(frame):
    frame.get_by_role("button", name="Add Bread").click()
    frame.get_by_role("button", name="Add Bread").click()
    frame.get_by_role("button", name="Add Cheese").click()
    expect(frame.locator("li")).to_have_text(["Bread × 2", "Cheese × 1"])
    expect(frame.locator("#total")).to_have_text("3 items")


def joins_classes_with_clsx(frame):
    expect(frame.locator(".tab.active")).to_have_text("Overview")
    expect(frame.locator(".tab.muted")).to_have_text("Settings")
    frame.get_by_role("button", name="Settings").click()
    expect(frame.locator(".tab.active")).to_have_text("Settings")
    expect(frame.locator(".tab.muted")).to_have_count(0)


def parses_csv_with_papaparse(frame):
    expect(frame.locator("th")).to_have_text(["date", "description", "amount"])
    expect(frame.locator("tbody tr")).to_have_count(3)
    expect(frame.locator("tbody tr").nth(1)).to_have_text("2026-06-02Train, return23")
    expect(frame.locator("#total")).to_have_text("Total: 95.70")


def makes_ids_with_uuid(frame):
    frame.get_by_role("button", name="Add task").click()
    expect(frame.locator("li[data-valid=true]")).to_have_count(2)
    ids = frame.locator("li code").all_text_contents()
    assert len(set(ids)) == 2
    assert all(
        re.fullmatch(r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}", i)
        for i in ids
    )


def evaluates_with_mathjs(frame):
    expect(frame.locator("#result")).to_have_text("4000 mm")
    frame.locator("input").fill("det([1, 2; 3, 4])")
    expect(frame.locator("#result")).to_have_text("-2")


def renders_a_three_scene(frame):
    canvas = frame.locator(".stage canvas")
    expect(canvas).to_have_attribute("data-engine", re.compile(r"^three\.js r187"))
    expect(canvas).to_have_attribute("width", "400")


def draws_a_chartjs_bar_chart(frame):
    expect(frame.locator("canvas[role=img]")).to_have_count(1)
    expect(frame.locator("main.chart")).to_have_attribute("data-drawn", "true")


def animates_with_framer_motion(frame):
    expect(frame.locator("li.note")).to_have_count(2)
    frame.get_by_role("button", name="Add note").click()
    expect(frame.locator("li.note")).to_have_count(3)
    expect(frame.locator("li.note").last).to_have_css("opacity", "1")
    frame.locator("li.note", has_text="Ship the release").click()
    expect(frame.locator("li.note")).to_have_count(2)


# (the app's folder, the library files the frame loads for it, what the app must show)
APPS = [
    ("lib-lucide-react", ["lucide-react"], draws_lucide_icons),
    ("lib-recharts", ["recharts"], draws_recharts_charts),
    ("lib-date-fns", ["date-fns", "date-fns-locale"], formats_french_dates),
    ("lib-lodash", ["lodash"], groups_with_lodash),
    ("lib-d3", ["d3"], draws_d3_bars),
    ("lib-zustand", ["zustand"], keeps_a_zustand_store),
    ("lib-clsx", ["clsx"], joins_classes_with_clsx),
    ("lib-papaparse", ["papaparse"], parses_csv_with_papaparse),
    ("lib-uuid", ["uuid"], makes_ids_with_uuid),
    ("lib-mathjs", ["mathjs"], evaluates_with_mathjs),
    ("lib-three", ["three", "three-orbit-controls"], renders_a_three_scene),
    ("lib-chartjs", ["chartjs", "react-chartjs-2"], draws_a_chartjs_bar_chart),
    ("lib-framer-motion", ["framer-motion"], animates_with_framer_motion),
]


@pytest.mark.parametrize(("folder", "files", "shows"), APPS, ids=[app[0] for app in APPS])
def test_an_app_using_a_curated_library_runs_in_the_room_and_loads_only_that_library(
    page, context, live_server_url, room, owner, agent, folder, files, shows
):
    frame, errors, loaded = run_library_app(
        page, context, live_server_url, room, owner, agent, folder
    )
    shows(frame)
    # The libraries this app imports, and nothing else, in the order they must run.
    assert loaded == files
    assert errors == []
