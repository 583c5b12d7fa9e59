"""The runnable check through every interface: the exact refusal over MCP (official client) and
REST, review_url and warnings in every proposal result, the repo card's verdict, the timeout."""

import json
import re

import pytest
from django.urls import reverse

from rooms.models import Proposal, Repository, RepositoryVersion
from rooms.runtime import runnable
from rooms.services import propose_repo_version
from tests.mcpclient import call_tool, rpc
from tests.rooms.helpers import APP, LEFT_PAD, LEFT_PAD_REFUSED, stored_unchecked

REFUSAL = {
    "code": "not_runnable",
    # Word for word: what is available, so the agent can fix the import in one retry.
    "message": LEFT_PAD_REFUSED,
    "field": "files.src/App.tsx",
}


def snippet_arguments(room, files, key="iface-key-01"):
    return {"room_id": str(room.pk), "name": "App", "files": files, "idempotency_key": key}


def rest_propose(client, room, token, files, key="iface-key-01"):
    body = {"name": "App", "files": files, "idempotency_key": key}
    return client.post(
        f"/api/v1/rooms/{room.pk}/proposals/snippet",
        json.dumps(body),
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {token}",
    )


def many_files() -> dict[str, str]:
    files = {"src/App.tsx": "".join(f"import './p{n}';\n" for n in range(20)) + APP}
    return files | {f"src/p{n}.ts": f"export const p{n} = {n};\n" for n in range(20)}


# --------------------------------------------------------------------------------------- MCP


def test_an_app_that_cannot_run_is_refused_exactly_over_mcp(
    asgi_server, room, agent, token_factory
):
    result = call_tool(
        asgi_server.mcp_url,
        token_factory(agent),
        "propose_room_snippet_app",
        snippet_arguments(room, {"src/App.tsx": LEFT_PAD}),
    )
    assert result.is_error
    assert result.structured_content == {"error": REFUSAL}
    assert json.loads(result.content[0].text) == {"error": REFUSAL}
    assert not Proposal.objects.exists()


def test_an_mcp_proposal_result_carries_its_absolute_review_url_and_warnings(
    asgi_server, room, agent, token_factory
):
    result = call_tool(
        asgi_server.mcp_url,
        token_factory(agent),
        "propose_room_snippet_app",
        snippet_arguments(room, many_files()),
    )
    assert not result.is_error
    proposal = Proposal.objects.get()
    data = result.structured_content
    assert data["review_url"] == f"{asgi_server.url}/proposals/{proposal.pk}/"
    assert data["warnings"] == [
        "21 files: the owner's card warns that an app this size belongs in a repository. "
        "Push it to a repository of the Room's project (list_room_repositories gives its clone "
        "URL) and propose the pinned version: "
        f"propose_room_repo_app, or POST /api/v1/rooms/{room.pk}/proposals/repo."
    ]
    assert "review_url" in data["next_step"]
    tools = {
        tool["name"] for tool in rpc(asgi_server.mcp_url, "tools/list").json()["result"]["tools"]
    }
    named = set(re.findall(r"\b[a-z]+(?:_[a-z]+)+\b", data["next_step"] + data["warnings"][0]))
    # Identifiers that are not tools: a field, a parameter and an event name.
    assert named - {"review_url", "after_sequence", "changes_requested"} <= tools


def test_review_url_is_on_the_public_origin_when_one_is_set(
    asgi_server, room, agent, token_factory, settings
):
    settings.PUBLIC_ORIGIN = "https://rooms.example.com"
    result = call_tool(
        asgi_server.mcp_url,
        token_factory(agent),
        "propose_room_snippet_app",
        snippet_arguments(room, {"src/App.tsx": APP}),
    )
    proposal = Proposal.objects.get()
    assert result.structured_content["review_url"] == (
        f"https://rooms.example.com/proposals/{proposal.pk}/"
    )


# -------------------------------------------------------------------------------------- REST


def test_an_app_that_cannot_run_is_refused_exactly_over_rest(client, room, agent, token_factory):
    response = rest_propose(client, room, token_factory(agent), {"src/App.tsx": LEFT_PAD})
    assert response.status_code == 400
    assert response.json() == {"error": REFUSAL}
    assert not Proposal.objects.exists()


def test_a_rest_proposal_result_carries_review_url_and_warnings(
    client, room, agent, token_factory, settings
):
    token = token_factory(agent)
    response = rest_propose(client, room, token, many_files())
    assert response.status_code == 201
    body = response.json()
    proposal = Proposal.objects.get()
    assert body["review_url"] == f"http://testserver/proposals/{proposal.pk}/"
    assert body["warnings"][0].startswith("21 files: the owner's card warns")
    settings.PUBLIC_ORIGIN = "https://rooms.example.com"
    replay = rest_propose(client, room, token, many_files())
    assert replay.status_code == 200 and replay.json()["replay"] is True
    assert replay.json()["review_url"] == f"https://rooms.example.com/proposals/{proposal.pk}/"
    assert replay.json()["warnings"] == body["warnings"]
    status = client.get(
        f"/api/v1/proposals/{proposal.pk}", HTTP_AUTHORIZATION=f"Bearer {token}"
    ).json()
    assert status["review_url"] == replay.json()["review_url"]


def test_the_rest_next_step_and_warnings_name_routes_that_exist(client, room, agent, token_factory):
    token = token_factory(agent)
    body = rest_propose(client, room, token, many_files()).json()
    routes = re.findall(
        r"\b(GET|POST) (/api/v1/\S+?)[.,)]?(?:\s|$)",
        " ".join([body["next_step"], *body["warnings"]]),
    )
    assert {method for method, _ in routes} == {"GET", "POST"}
    for method, path in routes:
        path = path.replace("after_sequence=N", "after_sequence=0")
        auth = {"HTTP_AUTHORIZATION": f"Bearer {token}"}
        if method == "GET":
            response = client.get(path, **auth)
        else:
            response = client.post(path, "{}", content_type="application/json", **auth)
        assert response.status_code in (200, 400), (method, path, response.content)
        assert response.json().get("error", {}).get("code") != "not_found"


def test_a_file_that_compiles_too_slowly_is_refused_over_rest(
    client, room, agent, token_factory, monkeypatch
):
    monkeypatch.setattr(runnable, "CHECK_BASE_SECONDS", 0.05)
    monkeypatch.setattr(runnable, "CHECK_SECONDS_PER_MB", 0.0)
    chain = "const v = a?.b?.c?.d?.e?.f?.g?.h?.i?.j?.k?.l?.m?.n?.o?.p?.q?.r?.s?.t;\n"
    files = {"src/App.tsx": APP, "src/Slow.ts": chain * 1200}
    response = rest_propose(client, room, token_factory(agent), files)
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["field"] == "files.src/Slow.ts"
    assert "src/Slow.ts:1:1: took too long to compile" in error["message"]
    assert not Proposal.objects.exists()


# ----------------------------------------------------------------------------------- console


@pytest.fixture
def repository(project):
    return Repository.objects.create(project=project, name="app")


def repo_card(client, owner, proposal):
    client.force_login(owner)
    return client.get(reverse("rooms:proposal", args=[proposal.pk])).content.decode()


def test_the_repo_card_says_the_version_runs_in_the_room(client, owner, room, agent, repository):
    version = RepositoryVersion.objects.create(
        repository=repository,
        commit_hash="f" * 40,
        files={"src/App.tsx": "import './a.css';\n" + APP, "src/a.css": "", "src/old.ts": "1"},
    )
    proposal = propose_repo_version(
        caller=agent,
        room_id=str(room.pk),
        name="App",
        repository_id=str(repository.pk),
        version_id=str(version.pk),
        idempotency_key="card-key-01",
    ).proposal
    html = repo_card(client, owner, proposal)
    assert (
        "<strong>Runs in the Room</strong>: src/App.tsx and the 1 file it loads. "
        "Never loaded, so never run: src/old.ts."
    ) in html


def test_the_repo_card_shows_the_first_problems_of_a_version_that_cannot_run(
    client, owner, room, agent, repository
):
    # Refused when proposed now; a card stored before the check still tells the owner.
    broken = {f"src/B{n}.tsx": "export const = 1;\n" for n in range(4)}
    version = RepositoryVersion.objects.create(
        repository=repository, commit_hash="9" * 40, files={"src/App.tsx": LEFT_PAD, **broken}
    )
    html = repo_card(client, owner, stored_unchecked(room, agent, version=version))
    assert "<strong>Cannot run in the Room</strong>" in html
    assert "<li><code>src/B0.tsx:1:14: Unexpected token; fix the syntax</code></li>" in html
    assert "src/B2.tsx:1:14" in html and "src/B3.tsx:1:14" not in html
    assert "and 2 more." in html  # B3 and left-pad
    assert "Runs in the Room" not in html
