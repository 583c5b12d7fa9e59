"""Tailwind utility classes render for an app that asks for Tailwind, and nothing of Tailwind
reaches an app that does not: no reset, no utilities, not even its script.

An app asks with a CSS file it loads that has `@import "tailwindcss"` (what a Vite or Sandpack
project with Tailwind 4 has in its index.css), v3's `@tailwind` directives, or an
`import "tailwindcss"` in code (tests/rooms/snippets/tailwind, plain-classes).
"""

import json

import pytest
from playwright.sync_api import expect

from tests.rooms.runtime_support import (
    FRAME,
    approved_app,
    log_in,
    open_tab,
    snippet_files,
    wait_state,
)

pytestmark = pytest.mark.django_db(transaction=True)

TAILWIND = snippet_files("tailwind")
V3_CSS = (
    "@tailwind base;\n@tailwind components;\n@tailwind utilities;\n\n"
    "@theme {\n  --color-brand: #7c3aed;\n}\n\n"
    ".btn {\n  @apply rounded-lg bg-blue-600 px-4 py-2 text-white;\n}\n"
)
ASKS = {
    "an @import in CSS": TAILWIND,
    "v3's @tailwind directives": TAILWIND | {"src/index.css": V3_CSS},
}
# What the plain app's elements look like with the browser's own styles: what they must stay.
PLAIN_STYLES = {
    "body": {"margin-top": "8px"},
    "main": {"padding-top": "0px"},
    "h1": {"font-size": "32px", "margin-top": "21.44px", "font-weight": "700"},
    "p": {"font-size": "16px", "margin-top": "16px"},
    "ul": {"padding-left": "40px", "list-style-type": "disc"},
    "button": {"font-style": "italic", "background-color": "rgb(239, 239, 239)"},
}
COMPUTED = """
(wanted) => Object.fromEntries(Object.entries(wanted).map(([selector, properties]) => {
  const style = getComputedStyle(document.querySelector(selector));
  const values = properties.map((name) => [name, style.getPropertyValue(name)]);
  return [selector, Object.fromEntries(values)];
}))
"""


def assert_tailwind_styles(frame):
    section = frame.locator("section")
    expect(section).to_have_css("padding-top", "24px")  # p-6
    expect(section).to_have_css("border-top-left-radius", "12px")  # rounded-xl
    expect(section).to_have_css("background-color", "rgb(255, 255, 255)")
    title = frame.locator("h1")
    expect(title).to_have_css("font-size", "24px")  # text-2xl
    expect(title).to_have_css("margin-top", "0px")  # the preflight reset
    expect(title).to_have_css("color", "rgb(124, 58, 237)")  # @theme's --color-brand
    button = frame.get_by_role("button", name="Next speaker")
    expect(button).to_have_css("color", "rgb(255, 255, 255)")  # @apply text-white
    expect(button).to_have_css("padding-left", "16px")  # @apply px-4
    expect(frame.locator("li").first).to_have_css("font-weight", "600")


@pytest.mark.parametrize("files", list(ASKS.values()), ids=list(ASKS))
def test_an_app_that_asks_for_tailwind_renders_its_utility_classes(
    page, context, live_server_url, room, owner, agent, files
):
    app = approved_app(room, agent, files, name="Tailwind")
    log_in(context, live_server_url, owner)
    errors = []
    page.on("console", lambda message: message.type == "error" and errors.append(message.text))
    frame = open_tab(page, live_server_url, app)
    wait_state(page, "mounted")
    assert_tailwind_styles(frame)
    frame.get_by_role("button", name="Next speaker").click()
    # Classes the app sets after its first render get their utilities too.
    expect(frame.locator("li").nth(1)).to_have_css("color", "oklch(0.488 0.243 264.376)")
    expect(frame.locator("li").first).to_have_css("font-weight", "400")
    assert errors == []


def test_import_tailwindcss_in_code_gives_the_default_stylesheet(
    page, context, live_server_url, room, owner, agent
):
    files = {
        "src/App.tsx": 'import "tailwindcss";\n\nexport default function App() {\n'
        '  return <h1 className="p-4 text-3xl underline">Hello</h1>;\n}\n'
    }
    app = approved_app(room, agent, files, name="Tailwind import")
    log_in(context, live_server_url, owner)
    frame = open_tab(page, live_server_url, app)
    wait_state(page, "mounted")
    title = frame.locator("h1")
    expect(title).to_have_css("font-size", "30px")
    expect(title).to_have_css("padding-top", "16px")
    expect(title).to_have_css("text-decoration-line", "underline")


def plain_styles(frame) -> dict:
    wanted = {selector: list(properties) for selector, properties in PLAIN_STYLES.items()}
    return frame.locator("html").evaluate(f"(_) => ({COMPUTED})({json.dumps(wanted)})")


def test_a_plain_app_beside_a_tailwind_app_keeps_the_browsers_styles(
    page, context, live_server_url, room, owner, agent
):
    tailwind = approved_app(room, agent, TAILWIND, name="Tailwind")
    plain = approved_app(room, agent, snippet_files("plain-classes"), name="Plain")
    log_in(context, live_server_url, owner)
    requests = []
    page.on("request", lambda request: requests.append(request.url))
    frame = open_tab(page, live_server_url, plain)
    wait_state(page, "mounted")
    assert plain_styles(frame) == PLAIN_STYLES
    assert not [url for url in requests if "/libs/tailwindcss/" in url]

    # Side by side: the Tailwind app in the Room's tab, the plain one in a second frame on
    # the same page, both running at once.
    page.locator(f'[data-launcher] [data-instance-id="{tailwind.pk}"]').click()
    wait_state(page, "mounted")
    assert_tailwind_styles(page.frame_locator(FRAME))
    page.evaluate(
        """(files) => new Promise((resolve) => {
          const box = document.createElement("div");
          box.dataset.plainBox = "";
          document.body.appendChild(box);
          window.OsfAppFrame.mount(box, {
            frameUrl: "/rooms/frame/", files, entry: "src/App.tsx", storageKey: null,
            onStatus: (status) => status.type === "osf:mounted" && resolve(),
          });
        })""",
        snippet_files("plain-classes"),
    )
    assert plain_styles(page.frame_locator("[data-plain-box] iframe")) == PLAIN_STYLES
    assert_tailwind_styles(page.frame_locator(f"[data-app-area] {FRAME}"))
