"""Opt-in: an app's package.json resolved from a real npm registry, and run in the Room.

Skipped unless NPM_REGISTRY_TEST_URL names a registry; .ci/run sets it from the machine's npm
configuration (`npm config get registry`). Bounded: two small packages (ms, CommonJS; nanoid,
an ES module package whose `exports` has a browser condition), at most 10 packages and 30 s.
"""

import json
import os

import pytest
from playwright.sync_api import expect

from rooms import services
from tests.rooms.runtime_support import approved_app, log_in, open_tab, wait_state

REGISTRY = os.environ.get("NPM_REGISTRY_TEST_URL", "").strip()
pytestmark = [
    pytest.mark.skipif(not REGISTRY, reason="NPM_REGISTRY_TEST_URL is not set (opt-in)"),
    pytest.mark.django_db(transaction=True),
]

APP = {
    "src/App.tsx": """import ms from "ms";
import {nanoid} from "nanoid";

export default function App() {
  const id = nanoid();
  return (
    <main>
      <p className="duration">{ms(2 * 24 * 60 * 60 * 1000, {long: true})}</p>
      <p className="id" data-length={id.length}>{id}</p>
    </main>
  );
}
""",
    "package.json": json.dumps({"dependencies": {"ms": "^2.1.3", "nanoid": "^5.0.0"}}),
}


@pytest.fixture
def public_registry(settings):
    settings.NPM_REGISTRY_URL = REGISTRY.rstrip("/")
    settings.NPM_MAX_PACKAGES = 10
    settings.NPM_RESOLVE_SECONDS = 30


def test_a_real_registry_resolves_checks_and_runs_two_small_packages(
    page, context, live_server_url, room, owner, agent, public_registry
):
    app = approved_app(room, agent, APP, name="Durations")
    lock = app.proposal.packages
    assert [p["name"] for p in lock["packages"]] == ["ms", "nanoid"]
    for package in lock["packages"]:
        assert package["version"].count(".") == 2
        assert package["integrity"].startswith("sha512-")
        assert package["key"] == package["integrity"]  # the tarball matched it
        assert package["osi"] is True
    assert lock["imports"]["nanoid"].endswith("/index.browser.js")  # the browser condition
    assert [p.origin for p in services.app_packages(app.proposal)] == ["registry", "registry"]

    log_in(context, live_server_url, owner)
    errors: list[str] = []
    page.on("console", lambda message: message.type == "error" and errors.append(message.text))
    frame = open_tab(page, live_server_url, app)
    wait_state(page, "mounted")
    expect(frame.locator("p.duration")).to_have_text("2 days")
    expect(frame.locator("p.id")).to_have_attribute("data-length", "21")
    assert errors == []
