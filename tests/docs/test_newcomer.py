"""README.md as a newcomer follows it: a fresh checkout (this working tree's files, uncommitted
changes included), `make run` exactly as the quick start gives it (with PORT, as it says), the
console URL and owner login it prints, and the first approval in Chromium. The pages met on the
way are the README's screenshots (docs/screenshots/). Then every `demo` block of the docs runs
in that checkout against that demo, and the embedded backup copies what it made.

The checkout's .venv reuses this environment's packages instead of installing them again
(tests/docs/newcomer.py, reuse_venv); bench/newcomer.py times the whole way from a `git clone`,
with the full install, as a newcomer's first minutes.
"""

import email
import email.message
import json
import os
import re
import sqlite3
import subprocess
import time
from pathlib import Path

import pytest

from tests.browser import launch_chromium
from tests.docs import blocks
from tests.docs.newcomer import MakeRun, copy_checkout, first_approval, newcomer_env, reuse_venv
from tests.polling import until
from tests.servers import free_port

SCREENSHOTS = blocks.ROOT / "docs" / "screenshots"
# A reader runs a block in a shell that stops at the first failing command; curl then fails on
# an HTTP error too, showing the error's body, instead of printing it and going on.
SHELL_PREAMBLE = """set -euo pipefail
curl() { command curl --fail-with-body --show-error "$@"; }
"""
GIT_IDENTITY = {
    "GIT_AUTHOR_NAME": "New Comer",
    "GIT_AUTHOR_EMAIL": "newcomer@example.com",
    "GIT_COMMITTER_NAME": "New Comer",
    "GIT_COMMITTER_EMAIL": "newcomer@example.com",
    "GIT_TERMINAL_PROMPT": "0",
}


class Demo:
    def __init__(self, run: MakeRun):
        self.run = run
        self.checkout = run.checkout
        self.origin = run.wait_for_console()
        self.credentials = json.loads((self.checkout / "var" / "demo-credentials.json").read_text())

    @property
    def values(self) -> dict[str, str]:
        """What `make run` printed, for the placeholders of the docs' commands."""
        return {
            "osf_...": self.credentials["agent_tokens"]["write"],
            "<room_id>": self.credentials["room_id"],
            "<proposal_id>": self.credentials["changes_requested_proposal_id"],
        }


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    quick_start = blocks.named("quick-start")
    assert quick_start.commands()[0] == ["make", "run"], quick_start.text
    work = tmp_path_factory.mktemp("newcomer")
    checkout = copy_checkout(work / "osfoundry-rooms")
    reuse_venv(checkout)
    port = free_port()
    while port == 8000:  # the port the docs' commands name: the demo must serve elsewhere
        port = free_port()
    run = MakeRun(checkout, port, newcomer_env(), work / "make-run.log").start()
    try:
        yield Demo(run)
    finally:
        run.stop()


@pytest.fixture(scope="module")
def browser():
    with launch_chromium() as chromium:
        yield chromium


# Text that differs on every run of the demo (a content hash over fresh ids, a compile time, an
# age), written as one sample before the shot: a PNG then changes only when its page does.
STABLE_TEXT = {
    "[data-content-hash]": "4f1c9a2e7b30",
    "[data-app-status] .status-ok": "Running (compiled in 20 ms).",
    "[data-pending-rows] time, [data-decided-rows] time, .card-head time": "just now",
}


def screenshot(name: str, page) -> None:
    """docs/screenshots/<name>.png, the page as it is but for STABLE_TEXT (written only when it
    changed)."""
    for selector, text in STABLE_TEXT.items():
        page.locator(selector).evaluate_all(
            "(found, text) => found.forEach((el) => { el.textContent = text; })", text
        )
    png = page.screenshot(animations="disabled")
    target = SCREENSHOTS / f"{name}.png"
    if not target.exists() or target.read_bytes() != png:
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        target.write_bytes(png)


def api(demo: Demo, path: str) -> dict:
    token = demo.credentials["agent_tokens"]["write"]
    done = subprocess.run(
        ["curl", "-sS", "--fail-with-body", "-H", f"Authorization: Bearer {token}"]
        + [demo.origin + path],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return json.loads(done.stdout)


def test_a_newcomer_goes_from_make_run_to_a_first_approval(demo, browser):
    username, password = demo.run.owner_login()
    assert username == "owner"
    assert demo.origin == f"http://127.0.0.1:{demo.run.port}"
    pending = {
        demo.credentials["pending_proposal_id"],
        demo.credentials["update_proposal_id"],
    }
    approved = first_approval(browser, demo.origin, username, password, shoot=screenshot)
    elapsed = time.monotonic() - demo.run.started_at

    proposal_id = approved["card_url"].rstrip("/").rsplit("/", 1)[1]
    assert proposal_id in pending, approved
    read = api(demo, f"/api/v1/proposals/{proposal_id}")
    assert read["status"] == "approved" and read["name"] == approved["name"], read
    marks = ", ".join(f"{what} at {seconds:.1f} s" for what, seconds in demo.run.marks.items())
    print(f"\nmake run → first approval ({approved['name']}): {elapsed:.1f} s ({marks})")


def printed_emails(output: str) -> list[email.message.Message]:
    """The emails Django's console backend printed: each message, then a line of 79 dashes."""
    found = []
    for match in re.finditer(r"^Content-Type: .*?^-{79}$", output, re.MULTILINE | re.DOTALL):
        found.append(email.message_from_string(match.group(0).removesuffix("-" * 79)))
    return found


def test_the_proposal_email_links_to_the_port_make_run_serves_on(demo):
    # The mailer thread sends at start-up what the seed left pending (both proposals, unless
    # the owner was quicker), each with its card's link; the console backend prints it.
    until(lambda: printed_emails(demo.run.output()), "the proposal email", seconds=120)
    (sent,) = printed_emails(demo.run.output())
    assert sent["To"] == "owner@example.com" and "need your approval" in sent["Subject"]
    body = sent.get_payload(decode=True).decode()
    cards = {
        f"{demo.origin}/proposals/{demo.credentials[key]}/"
        for key in ("update_proposal_id", "pending_proposal_id")
    }
    links = set(re.findall(r"http://\S+", body))
    assert links & cards and links <= cards | {f"{demo.origin}/settings/notifications/"}, body
    assert "127.0.0.1:8000" not in demo.run.output()


DEMO_BLOCKS = [block for block in blocks.all_blocks() if block.kind == "demo"]


@pytest.mark.parametrize("block", DEMO_BLOCKS, ids=[block.where for block in DEMO_BLOCKS])
def test_a_demo_block_of_the_docs_runs_against_make_runs_demo(demo, block):
    text = blocks.demo_text(block, origin=demo.origin, values=demo.values)
    if block.language == "python":
        command, stdin = [str(demo.checkout / ".venv" / "bin" / "python"), "-"], text
    else:
        command, stdin = ["bash", "-c", SHELL_PREAMBLE + text], None
    before = set(os.listdir(demo.checkout))
    try:
        done = subprocess.run(
            command,
            cwd=demo.checkout,
            env=newcomer_env() | GIT_IDENTITY,
            input=stdin,
            capture_output=True,
            text=True,
            timeout=300,
        )
    finally:
        # Each block starts from what `make run` left (a clone a block made goes).
        for name in set(os.listdir(demo.checkout)) - before:
            subprocess.run(["rm", "-rf", str(demo.checkout / name)], check=True)
    assert done.returncode == 0, f"{block.where}:\n{text}\n{done.stdout}\n{done.stderr}"


def test_the_embedded_backup_copies_what_the_demo_made(demo):
    demo.run.stop()  # the docs say: stop the server first
    block = blocks.named("backup-embedded")
    done = subprocess.run(
        ["bash", "-c", SHELL_PREAMBLE + block.text],
        cwd=demo.checkout,
        env=newcomer_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    (backup,) = demo.checkout.glob("var-backup-*")
    for name in ("db.sqlite3", "secret_key", "oidc_private_key.pem", "demo-credentials.json"):
        assert (backup / name).read_bytes() == (demo.checkout / "var" / name).read_bytes(), name

    def rows(path: Path) -> dict[str, int]:
        with sqlite3.connect(path) as db:
            tables = [n for (n,) in db.execute("SELECT name FROM sqlite_master WHERE type='table'")]
            return {t: db.execute(f'SELECT count(*) FROM "{t}"').fetchone()[0] for t in tables}

    copied = rows(backup / "db.sqlite3")
    assert copied == rows(demo.checkout / "var" / "db.sqlite3")
    assert copied["rooms_proposal"] >= 3 and copied["rooms_gitobject"] > 0
