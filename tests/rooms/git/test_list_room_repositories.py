"""list_room_repositories: the Room's project repositories with clone URL and latest versions,
over the official MCP client and REST; strangers get not-found."""

from rooms.git.repositories import Snapshot, pin_version
from rooms.models import Repository
from tests.mcpclient import call_tool
from tests.refusals import api_not_found


def pushed(project, files, *, commit="a" * 40, message="First\n\nbody"):
    repository, _ = Repository.objects.get_or_create(project=project, name="timer")
    snapshot = Snapshot(commit_hash=commit, message=message, author="A <a@e>", files=files)
    return pin_version(repository=repository, snapshot=snapshot, ref="main").version


def test_agents_find_what_they_pushed_over_mcp(asgi_server, room, agent, token_factory, files):
    version = pushed(room.project, files)
    broken = pushed(room.project, {"README.md": "no app"}, commit="b" * 40, message="Docs")
    result = call_tool(
        asgi_server.mcp_url,
        token_factory(agent, "osfoundry:read"),
        "list_room_repositories",
        {"room_id": str(room.pk)},
    )
    assert not result.is_error, result.content
    (repository,) = result.structured_content["repositories"]
    assert repository["name"] == "timer"
    assert repository["clone_url"] == f"{asgi_server.url}/git/Demo/timer.git"
    newest, first = repository["latest_versions"]
    assert (newest["version_id"], newest["runnable"], newest["message"]) == (
        str(broken.pk),
        False,
        "Docs",
    )
    assert first == {
        "version_id": str(version.pk),
        "commit": "a" * 40,
        "ref": "main",
        "message": "First",
        "pushed_at": version.imported_at.isoformat(),
        "runnable": True,
    }


def test_the_rest_mirror_lists_them_and_strangers_get_not_found(
    client, room, agent, stranger, token_factory, files
):
    version = pushed(room.project, files)
    path = f"/api/v1/rooms/{room.pk}/repositories"
    headers = {"HTTP_AUTHORIZATION": f"Bearer {token_factory(agent, 'osfoundry:read')}"}
    body = client.get(path, **headers).json()
    (repository,) = body["repositories"]
    assert repository["clone_url"] == "http://testserver/git/Demo/timer.git"
    assert repository["latest_versions"][0]["version_id"] == str(version.pk)
    response = client.get(path, HTTP_AUTHORIZATION=f"Bearer {token_factory(stranger)}")
    api_not_found(response, "Room", "room_id")
