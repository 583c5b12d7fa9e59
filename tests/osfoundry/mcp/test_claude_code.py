"""The real Claude Code CLI against a live server: `claude mcp add --transport http`, then
`claude mcp list`, which connects to each server and reports its state.

Claude Code is pinned in tools/claude-code (package.json and its lock) and installed on first use
into its git-ignored node_modules with `npm ci --ignore-scripts`: the native binary comes in the
platform package (@anthropic-ai/claude-code-linux-x64), which runs without Node and without the
install script that would copy it into place. It runs with a HOME of its own and every
non-essential request turned off (no telemetry, updates or error reports): this machine reaches
nothing but the package registries. Without npm or the package the tests skip, except in CI.
"""

import json
import subprocess
from pathlib import Path

import pytest

from osfoundry.mcp.protocol import MCPApp
from tests.npmtools import installed, unavailable

TOOLS = Path(__file__).resolve().parents[3] / "tools" / "claude-code"
# A first install downloads about 180 MB (about 8 s here); later ones come from npm's cache.
INSTALL_SECONDS = 600
RUN_SECONDS = 60


@pytest.fixture(scope="module")
def claude() -> Path:
    node_modules = installed(TOOLS, "Claude Code", timeout=INSTALL_SECONDS)
    binaries = sorted(node_modules.glob("@anthropic-ai/claude-code-*/claude"))
    if not binaries:
        unavailable("npm installed no Claude Code binary for this platform")
    return binaries[0]


def isolated_env(home: Path) -> dict[str, str]:
    """Nothing from this process's environment (no API keys, no proxies), a HOME of its own."""
    return {
        "HOME": str(home),
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "XDG_STATE_HOME": str(home / ".local" / "state"),
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_AUTOUPDATER": "1",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_ERROR_REPORTING": "1",
        "DISABLE_BUG_COMMAND": "1",
        "NO_COLOR": "1",
        "TERM": "dumb",
    }


def run(claude: Path, home: Path, *args: str) -> str:
    done = subprocess.run(
        [str(claude), "mcp", *args],
        cwd=home,
        env=isolated_env(home),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=RUN_SECONDS,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def status_after_adding(claude: Path, home: Path, url: str, *options: str) -> str:
    """What `claude mcp list` says of a server added at `url`: its line, after the URL."""
    run(claude, home, "add", "--transport", "http", "osfoundry", url, *options)
    listing = run(claude, home, "list")
    line = next((line for line in listing.splitlines() if line.startswith("osfoundry: ")), None)
    assert line is not None, listing
    assert line.startswith(f"osfoundry: {url} (HTTP) - "), line
    return line.removeprefix(f"osfoundry: {url} (HTTP) - ")


@pytest.mark.parametrize("path", ["/api/v1/mcp", "/api/v1/external-mcp"])
def test_claude_code_reports_a_token_config_connected_on_both_paths(
    claude, asgi_server, agent, token_factory, tmp_path, path
):
    header = f"Authorization: Bearer {token_factory(agent)}"
    status = status_after_adding(claude, tmp_path, asgi_server.url + path, "--header", header)
    assert status == "✔ Connected"


def test_claude_code_reports_an_oauth_config_on_the_mcp_path_as_needing_authentication(
    claude, asgi_server, tmp_path
):
    status = status_after_adding(claude, tmp_path, asgi_server.url + "/api/v1/mcp")
    assert "Connected" not in status
    assert status == "! Needs authentication"


def test_claude_code_reports_an_oauth_config_on_the_external_path_connected_before_sign_in(
    claude, asgi_server, tmp_path
):
    # Why /api/v1/mcp exists: initialize answers here without a token, so nothing tells the
    # person that they still have to sign in. Should a newer Claude Code see through it, this
    # test says so when the pin moves.
    status = status_after_adding(claude, tmp_path, asgi_server.url + "/api/v1/external-mcp")
    assert status == "✔ Connected"


@pytest.fixture
def requests_seen(monkeypatch):
    """Each MCP request the live server (in this process) is sent: its method and revision,
    read from the body before anything answers it."""
    seen: list[tuple[str, str | None]] = []
    handle = MCPApp.handle

    async def recording(self, request, body, watcher):
        message = json.loads(body or b"{}")
        params = message.get("params") if isinstance(message.get("params"), dict) else {}
        meta = params.get("_meta") or {}
        revision = meta.get("io.modelcontextprotocol/protocolVersion") or params.get(
            "protocolVersion"
        )
        seen.append((message.get("method"), revision))
        return await handle(self, request, body, watcher)

    monkeypatch.setattr(MCPApp, "handle", recording)
    return seen


@pytest.mark.parametrize("path", ["/api/v1/mcp", "/api/v1/external-mcp"])
def test_claude_code_speaks_the_2026_07_28_revision_it_is_offered(
    claude, asgi_server, agent, token_factory, tmp_path, path, requests_seen
):
    header = f"Authorization: Bearer {token_factory(agent)}"
    status = status_after_adding(claude, tmp_path, asgi_server.url + path, "--header", header)
    assert status == "✔ Connected"
    assert requests_seen, "Claude Code sent nothing"
    assert requests_seen[0] == ("server/discover", "2026-07-28")
    assert all(revision == "2026-07-28" for _, revision in requests_seen)
    assert "initialize" not in {method for method, _ in requests_seen}
