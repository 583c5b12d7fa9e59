"""A package.json app through the real interfaces: proposed over MCP (the official client against
a live server) and REST, its registry packages listed by read_room_proposal and
read_room_app_status and on the owner's card, and a registry that is down answered as a
retryable refusal on both: REST 503 with Retry-After, an MCP tool error with retry_after."""

import hashlib
import json

import pytest
from django.urls import reverse

from rooms import services
from rooms.models import NpmPackage, Proposal
from rooms.runtime import verdicts
from tests.mcpclient import call_tool
from tests.rooms.registry_packages import DEPENDENCIES, app_files

DOWN = (
    "The npm registry could not be used: the registry answered HTTP 503 for the packument of "
    "{name}. Nothing was stored; propose again in 30 s (the same idempotency_key is fine)."
)


def listed(packages: list[dict]) -> list[tuple]:
    return [(p["name"], p["version"], p["origin"], p["license"]) for p in packages]


REGISTRY_ROWS = [
    ("tiny-format", "1.2.0", "registry", "MIT"),
    ("tiny-pad", "2.1.0", "registry", "MIT"),
    ("tiny-pad", "3.0.0", "registry", "MIT"),
    ("ui-badge", "1.0.0", "registry", "ISC"),
]


def rest_propose(client, room, token, key="rest-key-0001"):
    return client.post(
        f"/api/v1/rooms/{room.pk}/proposals/snippet",
        json.dumps({"name": "Price tag", "files": app_files(), "idempotency_key": key}),
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {token}",
    )


@pytest.mark.django_db(transaction=True)
def test_proposed_over_mcp_the_packages_are_listed_by_the_read_tools(
    asgi_server, room, owner, agent, token_factory, npm_registry
):
    token = token_factory(agent)
    arguments = {
        "room_id": str(room.pk),
        "name": "Price tag",
        "files": app_files(),
        "idempotency_key": "mcp-key-0001",
    }
    result = call_tool(asgi_server.mcp_url, token, "propose_room_snippet_app", arguments)
    assert not result.is_error, result.content
    proposal_id = result.structured_content["proposal_id"]
    review = call_tool(
        asgi_server.mcp_url, token, "read_room_proposal", {"proposal_id": proposal_id}
    )
    assert listed(review.structured_content["packages"]) == REGISTRY_ROWS
    app = services.approve_proposal(owner=owner, proposal_id=proposal_id)
    status = call_tool(
        asgi_server.mcp_url,
        token,
        "read_room_app_status",
        {"room_id": str(room.pk), "instance_id": str(app.pk)},
    )
    packages = status.structured_content["packages"]
    assert listed(packages) == REGISTRY_ROWS
    assert packages[0]["url"] == "https://www.npmjs.com/package/tiny-format/v/1.2.0"
    assert packages[0]["install_scripts"] == [] and packages[0]["advisories"] == []


@pytest.mark.django_db(transaction=True)
def test_over_mcp_a_registry_that_is_down_is_a_retryable_tool_error(
    asgi_server, room, agent, token_factory, npm_registry
):
    npm_registry.down = True
    arguments = {
        "room_id": str(room.pk),
        "name": "Price tag",
        "files": app_files(),
        "idempotency_key": "mcp-key-0002",
    }
    result = call_tool(
        asgi_server.mcp_url, token_factory(agent), "propose_room_snippet_app", arguments
    )
    assert result.is_error
    error = result.structured_content["error"]
    assert error["code"] == "registry_unavailable"
    assert error["retry_after"] == 30
    assert error["field"] == "files.package.json"
    assert error["message"] in {DOWN.format(name=name) for name in DEPENDENCIES}
    assert not Proposal.objects.exists()


@pytest.mark.django_db
def test_over_rest_a_registry_that_is_down_answers_503_with_retry_after_then_the_retry_succeeds(
    client, room, agent, token_factory, npm_registry
):
    token = token_factory(agent)
    npm_registry.down = True
    response = rest_propose(client, room, token)
    assert response.status_code == 503
    assert response["Retry-After"] == "30"
    error = response.json()["error"]
    assert (error["code"], error["retry_after"]) == ("registry_unavailable", 30)
    assert not Proposal.objects.exists() and not NpmPackage.objects.exists()
    # Back up: the same call with the same key is accepted.
    npm_registry.down = False
    response = rest_propose(client, room, token)
    assert response.status_code == 201, response.json()
    proposal = Proposal.objects.get()
    review = client.get(
        f"/api/v1/proposals/{proposal.pk}", HTTP_AUTHORIZATION=f"Bearer {token}"
    ).json()
    assert listed(review["packages"]) == REGISTRY_ROWS


@pytest.mark.django_db
def test_over_rest_a_refused_package_is_a_400_naming_it(
    client, room, agent, token_factory, npm_registry
):
    npm_registry.publish("evil-pad", "1.0.0", {"index.js": "1"}, wrong_integrity=True)
    response = client.post(
        f"/api/v1/rooms/{room.pk}/proposals/snippet",
        json.dumps(
            {
                "name": "Price tag",
                "files": app_files(**DEPENDENCIES, **{"evil-pad": "1.0.0"}),
                "idempotency_key": "rest-key-0002",
            }
        ),
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {token_factory(agent)}",
    )
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["field"] == "files.package.json"
    assert (
        "evil-pad@1.0.0 (for package.json) cannot be used: its tarball does not match"
        in (error["message"])
    )


@pytest.mark.django_db
def test_the_card_shows_each_registry_package_its_origin_and_its_marks(
    client, room, owner, agent, npm_registry
):
    npm_registry.publish(
        "native-thing",
        "1.0.0",
        {"index.js": "module.exports = 1;\n"},
        scripts={"install": "node-gyp rebuild"},
        license="UNLICENSED",
    )
    npm_registry.advisories["ui-badge"] = [
        {
            "id": 7,
            "title": "Badge text is not escaped",
            "severity": "moderate",
            "url": "https://github.com/advisories/GHSA-aaaa-bbbb-cccc",
            "vulnerable_versions": "<=1.0.0",
        }
    ]
    files = app_files(**DEPENDENCIES, **{"native-thing": "1.0.0"})
    proposal = services.propose_snippet(
        caller=agent,
        room_id=str(room.pk),
        name="Price tag",
        files=files,
        idempotency_key="card-001",
    ).proposal
    client.force_login(owner)
    html = client.get(reverse("rooms:proposal", args=[proposal.pk])).content.decode()
    section = html.split("data-packages>")[1].split("</section>")[0]
    assert "Third-party packages (5)" in html
    assert section.count('<span class="pill pill-registry"') == 5
    native = section.split('<tr data-package="native-thing"')[1].split("</tr>")[0]
    assert "has install scripts (never run)" in native and "licence not OSI-approved" in native
    assert "not loaded" in native  # the app never imports it
    notes = section.split('data-package-notes="native-thing"')[1].split("</tr>")[0]
    assert "Install script, never run: <code>install: node-gyp rebuild</code>" in notes
    badge = section.split('data-package-notes="ui-badge"')[1].split("</tr>")[0]
    assert '<a href="https://github.com/advisories/GHSA-aaaa-bbbb-cccc"' in badge
    assert 'Badge text is not escaped</a> <span class="muted">(affects &lt;=1.0.0)</span>' in badge
    assert "checked against the registry's integrity hashes" in section


# ------------------------------------------------------------------- the module table's URL


def table_url(client, room, owner, agent):
    proposal = services.propose_snippet(
        caller=agent,
        room_id=str(room.pk),
        name="Price tag",
        files=app_files(),
        idempotency_key="t-00001",
    ).proposal
    app = services.approve_proposal(owner=owner, proposal_id=proposal.pk)
    client.force_login(owner)
    files = client.get(reverse("rooms:app_files", args=[room.pk, app.pk])).json()
    return app, files["packages"]["url"]


@pytest.mark.django_db
def test_the_module_table_is_served_immutable_to_whoever_may_open_the_app(
    client, room, owner, member, stranger, agent, npm_registry
):
    app, url = table_url(client, room, owner, agent)
    assert url == reverse(
        "rooms:app_packages", args=[room.pk, app.pk, app.proposal.package_bundle_id]
    )
    response = client.get(url, HTTP_ACCEPT_ENCODING="gzip")
    assert response.status_code == 200
    assert response["Content-Encoding"] == "gzip"
    assert response["Cache-Control"] == "private, max-age=31536000, immutable"
    plain = client.get(url)
    table = json.loads(plain.content)
    assert sorted(table["imports"]) == ["tiny-format", "ui-badge", "ui-badge/badge.css"]
    assert hashlib.sha256(plain.content).hexdigest() == app.proposal.package_bundle_id
    client.force_login(member)
    assert client.get(url).status_code == 200
    client.force_login(stranger)
    assert client.get(url).status_code == 404
    client.force_login(owner)
    assert client.get(url.replace(app.proposal.package_bundle_id, "0" * 64)).status_code == 404
    client.logout()
    assert client.get(url).status_code == 401


@pytest.mark.django_db
def test_a_pending_proposals_module_table_is_the_owners_preview_only(
    client, room, owner, member, agent, npm_registry
):
    proposal = services.propose_snippet(
        caller=agent,
        room_id=str(room.pk),
        name="Price tag",
        files=app_files(),
        idempotency_key="t-00002",
    ).proposal
    client.force_login(owner)
    files = client.get(reverse("rooms:proposal_preview_files", args=[proposal.pk])).json()
    url = files["packages"]["url"]
    assert client.get(url).status_code == 200
    client.force_login(member)
    assert client.get(url).status_code == 404


@pytest.mark.django_db
def test_a_repository_versions_package_json_is_resolved_too(room, project, agent, npm_registry):
    from rooms.models import Repository, RepositoryVersion
    from rooms.services import propose_repo_version

    files = app_files()
    repo = Repository.objects.create(project=project, name="price-tag")
    version = RepositoryVersion.objects.create(repository=repo, commit_hash="e" * 40, files=files)
    proposal = propose_repo_version(
        caller=agent,
        room_id=str(room.pk),
        name="Price tag",
        repository_id=str(repo.pk),
        version_id=str(version.pk),
        idempotency_key="repo-key-01",
    ).proposal
    assert listed([p.as_dict() for p in services.app_packages(proposal)]) == REGISTRY_ROWS
    assert proposal.package_bundle_id == proposal.packages["bundle"]
    # The proposal's verdict is its own, found with its lock; the version's own (a push's,
    # list_room_repositories') does not hold the registry's imports against it either.
    assert proposal.run_verdict["packages"] == ["tiny-format", "ui-badge", "ui-badge/badge.css"]
    assert verdicts.runs(version)
    proposal.run_verdict_fingerprint = "another"  # as after an upgrade: found again, the same
    assert verdicts.of(proposal).packages == proposal.run_verdict["packages"]
