"""A large app the way agents work, end to end: an agent pushes with Debian's git, finds the
version with list_room_repositories and proposes it over MCP (the official client); the owner
reviews the files on the repo card, opens the pinned version's page, and approves; the app runs
in its tab."""

import pytest
from playwright.sync_api import expect

from rooms.models import LauncherApp
from tests.rooms.gitclient import clone_url, git, write_files
from tests.rooms.review.test_revisions_browser import FRAME, both_widths, mcp
from tests.rooms.test_console_browser import (  # noqa: F401 - fixtures
    agent_token,
    browser,
    login,
    people,
    uvicorn_server,
)

pytestmark = pytest.mark.django_db(transaction=True)

APP = {
    "src/App.tsx": (
        'import { Greeting } from "./parts/Greeting";\n'
        "export default function App() {\n"
        '  return <div><h1>Hello from git</h1><Greeting name="Room" /></div>;\n'
        "}\n"
    ),
    "src/parts/Greeting.tsx": (
        "export function Greeting({ name }: { name: string }) {\n"
        "  return <p>Welcome, {name}</p>;\n"
        "}\n"
    ),
    "README.md": "# Hello app\n\nA greeting for the **Room**.\n\n- pushed with git\n",
    "docs/notes.md": "Not part of what the Room runs.\n",
}


def test_agent_pushes_proposes_owner_reviews_approves_and_the_app_runs(
    uvicorn_server,  # noqa: F811 - the imported fixtures
    browser,  # noqa: F811
    people,  # noqa: F811
    agent_token,  # noqa: F811
    tmp_path,
):
    room = people["room"]
    room.project.members.add(people["agent"])
    home, work = tmp_path / "home", tmp_path / "work"
    work.mkdir()
    git(work, "init", "-q", "-b", "main", home=home)
    write_files(work, APP)
    git(work, "add", "-A", home=home)
    git(work, "commit", "-q", "-m", "Hello app\n\nA greeting.", home=home)
    url = clone_url(uvicorn_server, room.project.name, "hello", agent_token)
    pushed = git(work, "push", url, "main", home=home)
    assert "runs in the Room; propose it with propose_room_repo_app" in pushed.stderr

    (repository,) = mcp(
        uvicorn_server, agent_token, "list_room_repositories", {"room_id": str(room.pk)}
    )["repositories"]
    (version,) = repository["latest_versions"]
    assert version["runnable"] and version["ref"] == "main"
    proposal = mcp(
        uvicorn_server,
        agent_token,
        "propose_room_repo_app",
        {
            "room_id": str(room.pk),
            "name": "Hello",
            "repository_id": repository["repository_id"],
            "version_id": version["version_id"],
            "idempotency_key": "e2e-repo-0001",
        },
    )

    owner = login(browser, uvicorn_server, "owner")
    owner.goto(proposal["review_url"])
    files = owner.locator("[data-file-list] li[data-path]")
    expect(files).to_have_count(2)
    expect(owner.locator("[data-file][data-path='src/parts/Greeting.tsx'] .code")).to_contain_text(
        "Welcome"
    )
    owner.locator("[data-file][data-path='src/App.tsx'] [data-viewed]").check()
    expect(owner.locator("[data-viewed-count]")).to_have_text("1/2 viewed")
    expect(owner.get_by_text("This path does not build or deploy a bundle.")).to_be_visible()
    both_widths(owner, "repo-card")

    owner.get_by_role("link", name="Review repository code before approving").click()
    expect(owner.locator("[data-readme] h1")).to_have_text("Hello app")
    expect(owner.locator("[data-author]")).to_have_text("Agent Smith <agent@example.com>")
    expect(owner.locator("[data-tree] summary").first).to_have_text("docs/")
    both_widths(owner, "repo-version")
    owner.go_back()

    owner.get_by_role("button", name="Approve and create").click()
    owner.get_by_role("button", name="Approve anyway").click()  # one of two files viewed
    expect(owner.locator("[data-decided]")).to_contain_text("Approved by owner on")
    app = LauncherApp.objects.get(room=room)
    owner.goto(f"{uvicorn_server}/rooms/{room.pk}/apps/{app.pk}/")
    expect(owner.frame_locator(FRAME).locator("h1")).to_have_text("Hello from git")
    expect(owner.frame_locator(FRAME).locator("p")).to_have_text("Welcome, Room")

    # The next commit: proposing its version updates the app; the card shows the diff.
    greeting = work / "src" / "parts" / "Greeting.tsx"
    greeting.write_text(greeting.read_text().replace("Welcome", "Welcome back"))
    git(work, "commit", "-q", "-am", "Warmer greeting", home=home)
    git(work, "push", url, "main", home=home)
    (repository,) = mcp(
        uvicorn_server, agent_token, "list_room_repositories", {"room_id": str(room.pk)}
    )["repositories"]
    newest = repository["latest_versions"][0]
    assert newest["message"] == "Warmer greeting"
    update = mcp(
        uvicorn_server,
        agent_token,
        "propose_room_repo_app",
        {
            "room_id": str(room.pk),
            "name": "Hello",
            "repository_id": repository["repository_id"],
            "version_id": newest["version_id"],
            "idempotency_key": "e2e-repo-0002",
        },
    )
    owner.goto(update["review_url"])
    expect(owner.get_by_text("Changes since the approved version (v1")).to_be_visible()
    expect(owner.locator("[data-file-list] li")).to_have_count(1)
    expect(owner.locator("[data-file-list] li")).to_contain_text("src/parts/Greeting.tsx")
    both_widths(owner, "repo-update-card")
    owner.get_by_role("button", name="Approve as v2, replacing v1").click()
    owner.get_by_role("button", name="Approve anyway").click()  # its file not marked viewed
    expect(owner.locator("[data-decided]")).to_contain_text("Approved by owner on")
    owner.goto(f"{uvicorn_server}/rooms/{room.pk}/apps/{app.pk}/")
    expect(owner.frame_locator(FRAME).locator("p")).to_have_text("Welcome back, Room")
