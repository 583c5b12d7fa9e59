"""The verdict on whether an app runs is found once and stored (rooms/runtime/verdicts.py): a
replay of a proposal, identical content collapsing onto its pending card, the card, the packages an
app brings and list_room_repositories read it and never compile the app again. A verdict found
under another fingerprint (compiler, curated libraries, rules) is found again when read.

Every count below is of the embedded V8's compile calls (rooms/runtime/jsengine.py). A Django cache
is a process's own (LocMemCache) or may be emptied: the tests empty it where another worker
process, or a restart, would start without it. Last, the verdicts' texts: what a card and a
proposer read about what runs, and what a check skips."""

import json

import pytest
from django.core.cache import cache
from django.urls import reverse

from rooms.git.repositories import list_room_repositories
from rooms.models import Proposal, Repository, RepositoryVersion
from rooms.runtime import jsengine, runnable, verdicts
from rooms.runtime.rules import problem_at
from rooms.runtime.runnable import RunCheck
from rooms.services import approve_proposal, propose_repo_version, propose_snippet
from tests.mcpclient import call_tool

NEVER_LOADED = {"src/old.ts": "export const old = 1;\n"}


@pytest.fixture
def compiles(monkeypatch):
    """The apps the engine compiles from here on (its warm-up, in a server's thread, aside)."""
    seen: list[dict] = []
    check = jsengine.engine.check

    def counted(files, *, timeout):
        if files != jsengine.WARM_UP:
            seen.append(files)
        return check(files, timeout=timeout)

    monkeypatch.setattr(jsengine.engine, "check", counted)
    return seen


@pytest.fixture
def version(project, files):
    repository = Repository.objects.create(project=project, name="timer")
    return RepositoryVersion.objects.create(
        repository=repository, commit_hash="a" * 40, files={**files, **NEVER_LOADED}
    )


def rest_post(client, token, path, body):
    return client.post(
        path,
        json.dumps(body),
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {token}",
    )


def test_a_rest_replay_and_a_fresh_key_retry_of_a_snippet_never_compile_it_again(
    client, room, agent, token_factory, files, compiles
):
    token = token_factory(agent)
    path = f"/api/v1/rooms/{room.pk}/proposals/snippet"
    body = {"name": "Timer", "files": {**files, **NEVER_LOADED}, "idempotency_key": "verdict-01"}
    first = rest_post(client, token, path, body)
    assert first.status_code == 201
    assert len(compiles) == 1
    cache.clear()  # the retry may reach another worker process
    replay = rest_post(client, token, path, body)
    collapsed = rest_post(client, token, path, {**body, "idempotency_key": "verdict-02"})
    assert (replay.json()["replay"], collapsed.json()["duplicate_of_pending"]) == (True, True)
    assert replay.json()["proposal_id"] == collapsed.json()["proposal_id"]
    assert len(compiles) == 1  # both answered from the verdict stored with the proposal
    # The warnings derive from that stored verdict, the same in all three answers.
    warning = (
        "Not loaded from src/App.tsx, so they never run in the Room (1): src/old.ts. Import what "
        "the app needs; leave out the rest."
    )
    for answer in (first, replay, collapsed):
        assert answer.json()["warnings"] == [warning]


def test_an_mcp_replay_and_a_fresh_key_retry_of_a_snippet_never_compile_it_again(
    asgi_server, room, agent, token_factory, files, compiles
):
    token = token_factory(agent)
    arguments = {"room_id": str(room.pk), "name": "Timer", "files": files}
    first = call_tool(
        asgi_server.mcp_url,
        token,
        "propose_room_snippet_app",
        {**arguments, "idempotency_key": "verdict-mcp-01"},
    )
    assert not first.is_error and len(compiles) == 1
    replay = call_tool(
        asgi_server.mcp_url,
        token,
        "propose_room_snippet_app",
        {**arguments, "idempotency_key": "verdict-mcp-01"},
    )
    collapsed = call_tool(
        asgi_server.mcp_url,
        token,
        "propose_room_snippet_app",
        {**arguments, "idempotency_key": "verdict-mcp-02"},
    )
    assert replay.structured_content["replay"] is True
    assert collapsed.structured_content["duplicate_of_pending"] is True
    assert len(compiles) == 1
    assert Proposal.objects.count() == 1


def test_a_replay_and_a_fresh_key_retry_of_a_repository_version_never_compile_it_again(
    client, room, agent, token_factory, version, compiles
):
    token = token_factory(agent)
    path = f"/api/v1/rooms/{room.pk}/proposals/repo"
    body = {
        "name": "Timer",
        "repository_id": str(version.repository_id),
        "version_id": str(version.pk),
        "idempotency_key": "verdict-repo-01",
    }
    assert rest_post(client, token, path, body).status_code == 201
    assert len(compiles) == 1
    cache.clear()  # the retries may reach another worker process
    replay = rest_post(client, token, path, body)
    collapsed = rest_post(client, token, path, {**body, "idempotency_key": "verdict-repo-02"})
    assert (replay.json()["replay"], collapsed.json()["duplicate_of_pending"]) == (True, True)
    assert len(compiles) == 1
    version.refresh_from_db()
    assert verdicts.stored(version) is not None  # on the version: the proposals read it there


def test_the_cards_read_their_stored_verdicts_and_never_compile(
    client, room, owner, agent, files, version, compiles
):
    snippet = propose_snippet(
        caller=agent, room_id=str(room.pk), name="Timer", files=files, idempotency_key="card-01"
    ).proposal
    repo = propose_repo_version(
        caller=agent,
        room_id=str(room.pk),
        name="Timer from git",
        repository_id=str(version.repository_id),
        version_id=str(version.pk),
        idempotency_key="card-02",
    ).proposal
    assert len(compiles) == 2
    cache.clear()  # the owner's card may be served by another worker process
    client.force_login(owner)
    html = client.get(reverse("rooms:proposal", args=[repo.pk])).content.decode()
    assert "Runs in the Room" in html
    assert "src/App.tsx and the 1 file it loads. Never loaded, so never run: src/old.ts." in html
    assert client.get(reverse("rooms:proposal", args=[snippet.pk])).status_code == 200
    assert len(compiles) == 2


def test_an_apps_packages_and_build_state_come_from_its_stored_verdict(
    client, room, owner, agent, token_factory, compiles
):
    entry = 'import clsx from "clsx";\nexport default () => <p className={clsx("a")} />;\n'
    app_files = {"src/App.tsx": entry}
    proposal = propose_snippet(
        caller=agent, room_id=str(room.pk), name="Classes", files=app_files, idempotency_key="k-01"
    ).proposal
    cache.clear()
    app = approve_proposal(owner=owner, proposal_id=proposal.pk)
    assert app.build_detail == "Checked when proposed: src/App.tsx and the 0 files it loads."
    status = client.get(
        f"/api/v1/rooms/{room.pk}/apps/{app.pk}",
        HTTP_AUTHORIZATION=f"Bearer {token_factory(agent)}",
    ).json()
    assert [package["name"] for package in status["packages"]] == ["clsx"]
    assert len(compiles) == 1  # when it was proposed, only


def test_listing_reads_the_verdict_a_push_stored(room, agent, version, compiles):
    assert verdicts.version_problems(version) == []  # what a push, or the check after it, does
    assert len(compiles) == 1
    cache.clear()
    fresh = RepositoryVersion.objects.get(pk=version.pk)
    assert verdicts.known(fresh) is True
    (listed,) = list_room_repositories(agent, str(room.pk), origin="http://testserver")
    assert listed["latest_versions"][0]["runnable"] is True
    assert len(compiles) == 1


def test_a_verdict_found_under_another_fingerprint_is_found_again_and_stored(
    room, agent, files, compiles
):
    proposal = propose_snippet(
        caller=agent, room_id=str(room.pk), name="Timer", files=files, idempotency_key="fp-01"
    ).proposal
    Proposal.objects.filter(pk=proposal.pk).update(run_verdict_fingerprint="an-older-runtime")
    proposal.refresh_from_db()
    assert verdicts.stored(proposal) is None
    assert verdicts.of(proposal).runs
    assert len(compiles) == 2
    proposal.refresh_from_db()
    assert proposal.run_verdict_fingerprint == verdicts.fingerprint()
    assert verdicts.of(proposal).runs  # stored again: read, not compiled
    assert len(compiles) == 2


def test_a_verdict_cut_short_when_found_again_is_never_stored(
    room, agent, files, version, monkeypatch
):
    proposal = propose_snippet(
        caller=agent, room_id=str(room.pk), name="Timer", files=files, idempotency_key="fp-02"
    ).proposal
    Proposal.objects.filter(pk=proposal.pk).update(run_verdict_fingerprint="an-older-runtime")
    proposal.refresh_from_db()
    stopped = RunCheck(
        problems=[problem_at("src/App.tsx", 1, 1, "took too long")], is_transient=True
    )
    monkeypatch.setattr(
        runnable, "check_app", lambda files, packages=None: stopped
    )  # a loaded machine
    for subject in (proposal, version):
        assert verdicts.of(subject) == stopped
        subject.refresh_from_db()
        assert verdicts.stored(subject) is None  # the next reader finds it again
    assert RepositoryVersion.objects.get(pk=version.pk).run_verdict is None
    assert Proposal.objects.get(pk=proposal.pk).run_verdict_fingerprint == "an-older-runtime"


# What a card and a proposer read about what runs, and what a check skips, word for word.


def problems(n: int) -> list:
    return [problem_at(f"src/F{i}.tsx", i, 1, "bad") for i in range(1, n + 1)]


def test_the_card_names_three_problems_and_counts_the_rest():
    check = RunCheck(problems=problems(5))
    assert verdicts.first_problems(check) == (
        "src/F1.tsx:1:1: bad; src/F2.tsx:2:1: bad; src/F3.tsx:3:1: bad; and 2 more"
    )
    assert verdicts.first_problems(RunCheck(problems=problems(3))).endswith("3:1: bad")


def test_a_stored_proposal_that_cannot_run_warns_its_proposer():
    assert verdicts.warnings(RunCheck(problems=problems(4))) == [
        "This app cannot run in the Room: src/F1.tsx:1:1: bad; src/F2.tsx:2:1: bad; "
        "src/F3.tsx:3:1: bad; and 1 more"
    ]


def test_the_summary_lists_ten_unused_files_then_an_ellipsis():
    loaded = ["src/App.tsx", "src/a.ts"]
    few = RunCheck(loaded=loaded, unused=["src/x.ts"])
    assert verdicts.summary(few) == (
        "src/App.tsx and the 1 file it loads. Never loaded, so never run: src/x.ts."
    )
    many = RunCheck(loaded=loaded[:1], unused=[f"src/u{i:02}.ts" for i in range(12)])
    text = verdicts.summary(many)
    assert text.startswith("src/App.tsx and the 0 files it loads. Never loaded, so never run: ")
    assert text.endswith("src/u09.ts …") and "src/u10.ts" not in text


def test_the_summary_of_an_app_that_cannot_run_names_its_problems():
    # Only a proposal stored before the check, or judged again under a newer runtime.
    assert verdicts.summary(RunCheck(problems=problems(1))) == (
        "This app cannot run in the Room: src/F1.tsx:1:1: bad"
    )


def test_a_stored_verdict_reads_back_as_it_was_found():
    check = RunCheck(
        problems=problems(2), loaded=["src/App.tsx"], unused=["src/x.ts"], libraries=["clsx"]
    )
    again = RunCheck.from_dict(check.as_dict())
    assert again == check
    assert [problem.field for problem in again.problems] == ["files.src/F1.tsx", "files.src/F2.tsx"]


def test_a_snippet_over_the_size_limits_is_not_compiled(settings, monkeypatch):
    # The snippet rules refuse it for its size; the engine is not asked what else is wrong.
    settings.SNIPPET_MAX_FILES = 2
    settings.SNIPPET_MAX_TOTAL_BYTES = 10
    failing = RunCheck(problems=[problem_at("src/App.tsx", 1, 1, "does not compile")])
    monkeypatch.setattr(verdicts.runnable, "check_app", lambda files, packages=None: failing)
    files = {"src/App.tsx": "a", "src/b.ts": "b", "src/c.ts": "c"}
    assert verdicts.run_problems_beside([], files) == []
    assert verdicts.run_problems_beside([], {"src/App.tsx": "a" * 11}) == []
    (problem,) = verdicts.run_problems_beside([], {"src/App.tsx": "a" * 10, "src/b.ts": ""})
    assert (problem, problem.field) == ("src/App.tsx:1:1: does not compile", "files.src/App.tsx")
