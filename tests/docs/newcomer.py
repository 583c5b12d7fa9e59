"""A newcomer following README.md: a fresh checkout, `make run`, the printed console URL and owner
login, and the first approval in Chromium. tests/docs/test_newcomer.py runs it on a copy of this
checkout; bench/newcomer.py times it from a real `git clone`, with the full install."""

import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import sysconfig
import time
from dataclasses import dataclass, field
from pathlib import Path

from tests.docs.blocks import ROOT

# A hang guard, not a timing assertion: a cold install from PyPI on a loaded machine included.
START_SECONDS = 900.0
CONSOLE_LINE = re.compile(r"^\s*Console: (http://127\.0\.0\.1:(\d+))/", re.MULTILINE)
OWNER_LINE = re.compile(r"^\s*Owner login:\s+(\S+) / (\S+)", re.MULTILINE)


def checkout_files(root: Path = ROOT) -> list[str]:
    """What a commit of the working tree would hold: tracked files as they are now, and new
    files git does not ignore; not .venv, var/, staticfiles/ or anything else ignored."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=root,
        capture_output=True,
        check=True,
    ).stdout.decode()
    return [name for name in listed.split("\0") if name and (root / name).is_file()]


def copy_checkout(dest: Path, root: Path = ROOT) -> Path:
    for name in checkout_files(root):
        target = dest / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(root / name, target)
    return dest


def reuse_venv(checkout: Path) -> None:
    """Give `checkout` a .venv that sees this environment's installed packages instead of
    installing them again (minutes, and PyPI) without touching this environment: a venv of its
    own whose site-packages has a .pth line naming ours (so ours' own .pth files, such as the
    editable install of this checkout, stay out), and its own `pip` and `uvicorn` scripts.
    `make run` then finds .venv/bin/python and skips creating it, and its `pip install -e .`
    installs only this project, into the checkout's venv (pip will not uninstall ours: "outside
    environment"). Everything else it does is a newcomer's `make run`."""
    venv = checkout / ".venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    purelib = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    (Path(purelib) / "shared-packages.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    for script in ("pip", "uvicorn"):
        ours = (Path(sys.prefix) / "bin" / script).read_text().splitlines(keepends=True)
        assert ours[0].startswith("#!"), f"{script} is not a script: {ours[0]!r}"
        target = venv / "bin" / script
        target.write_text(f"#!{python}\n" + "".join(ours[1:]))
        target.chmod(0o755)


def newcomer_env(root: Path = ROOT) -> dict[str, str]:
    """This process's environment without anything a newcomer's shell would not have: no
    setting of the service (every name .env.example lists), nothing pytest, coverage, an outer
    `make` or this checkout's venv put there."""
    settings = set(re.findall(r"^([A-Z][A-Z0-9_]*)=", (root / ".env.example").read_text(), re.M))
    dropped_prefixes = ("DJANGO_", "COVERAGE_", "PYTEST_", "MAKE", "MFLAGS")
    dropped = settings | {"PYTHONPATH", "VIRTUAL_ENV", "MUTANT_UNDER_TEST", "MALLOC_ARENA_MAX"}
    env = {
        name: value
        for name, value in os.environ.items()
        if name not in dropped and not name.startswith(dropped_prefixes)
    }
    venv_bin = str(Path(sys.prefix) / "bin")
    env["PATH"] = os.pathsep.join(p for p in env.get("PATH", "").split(os.pathsep) if p != venv_bin)
    return env


@dataclass
class MakeRun:
    """`make run PORT=<port>` in `checkout`, its output (make's, the seed's, the server's) in
    `log_path`. Started in a session of its own, so stop() ends make and the server together."""

    checkout: Path
    port: int
    env: dict[str, str]
    log_path: Path
    process: subprocess.Popen | None = None
    started_at: float = 0.0
    origin: str = ""
    marks: dict[str, float] = field(default_factory=dict)

    def start(self) -> "MakeRun":
        log = open(self.log_path, "w")
        self.started_at = time.monotonic()
        self.process = subprocess.Popen(
            ["make", "run", f"PORT={self.port}"],
            cwd=self.checkout,
            env=self.env,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        log.close()
        return self

    def output(self) -> str:
        return self.log_path.read_text(errors="replace")

    def wait_for_console(self, timeout: float = START_SECONDS) -> str:
        """The console URL `make run` prints, once the server behind it accepts connections."""
        assert self.process is not None
        deadline = time.monotonic() + timeout
        while not (found := CONSOLE_LINE.search(self.output())):
            self._still_running(deadline)
            time.sleep(0.2)
        self.marks["console printed"] = time.monotonic() - self.started_at
        self.origin = found.group(1)
        while True:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                break
            except OSError:
                self._still_running(deadline)
                time.sleep(0.1)
        self.marks["server answers"] = time.monotonic() - self.started_at
        return self.origin

    def _still_running(self, deadline: float) -> None:
        assert self.process is not None
        tail = self.output()[-4000:]
        if self.process.poll() is not None:
            raise AssertionError(f"make run exited ({self.process.returncode}):\n{tail}")
        if time.monotonic() > deadline:
            raise AssertionError(f"make run printed no console URL that answers:\n{tail}")

    def owner_login(self) -> tuple[str, str]:
        found = OWNER_LINE.search(self.output())
        assert found, f"make run printed no owner login:\n{self.output()[-4000:]}"
        return found.group(1), found.group(2)

    def stop(self) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        os.killpg(self.process.pid, signal.SIGTERM)
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=10)
        # uvicorn, in make's session, may outlive make by its graceful shutdown.
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                os.killpg(self.process.pid, 0)
            except ProcessLookupError:
                return
            time.sleep(0.1)
        os.killpg(self.process.pid, signal.SIGKILL)


def first_approval(browser, origin: str, username: str, password: str, *, shoot=None) -> dict:
    """Log in where `make run` said, open the first proposal waiting in the inbox, approve it on
    its card and open its tab in the Room. `shoot(name, page)`, when given, is called on the
    inbox, the card and the Room page. Returns the approved proposal's name and card URL."""
    from playwright.sync_api import expect

    context = browser.new_context(viewport={"width": 1280, "height": 800})
    context.set_default_timeout(30_000)
    expect.set_options(timeout=30_000)
    page = context.new_page()
    page.on("dialog", lambda dialog: dialog.accept())  # "Approve without opening …?": yes
    page.goto(origin + "/")
    page.fill("#id_login", username)
    page.fill("#id_password", password)
    page.get_by_role("button", name="Log in").click()
    page.wait_for_url(origin + "/")
    # Settled: the live feed is open and the page's fonts are drawn.
    expect(page.locator("html")).to_have_attribute("data-feeds-open", re.compile(r"^[1-9]"))
    first = page.locator("[data-pending-rows] tr").first.locator('a[href*="/proposals/"]')
    expect(first).to_be_visible()
    name = first.inner_text().strip()
    if shoot:
        shoot("inbox", page)
    first.click()
    page.wait_for_url(re.compile(r"/proposals/[^/]+/$"))
    card_url = page.url
    approve = page.locator("[data-approve]")
    expect(approve).to_be_visible()
    if shoot:
        shoot("card", page)
    approve.click()
    expect(page.locator("[data-decided]")).to_contain_text(f"Approved by {username} on")
    page.get_by_role("link", name=re.compile(r"^Open the tab in ")).click()
    expect(page.locator("[data-app-area]")).to_have_attribute("data-state", "mounted")
    if shoot:
        shoot("room", page)
    context.close()
    return {"name": name, "card_url": card_url}
