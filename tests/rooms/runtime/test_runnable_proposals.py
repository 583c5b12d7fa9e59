"""Proposals that cannot run are refused, every problem at once, nothing stored (SPEC §3)."""

import pytest

from osfoundry.errors import Invalid
from rooms.models import Proposal, ProposalKey, Repository, RepositoryVersion, RoomEvent
from rooms.runtime import runnable
from rooms.runtime.jsengine import EngineTimeout
from rooms.services import CARD_FILES_WARNING, propose_repo_version, propose_snippet
from tests.rooms.helpers import APP, LEFT_PAD, LEFT_PAD_REFUSED


def propose(room, agent, files, key="run-key-0001"):
    return propose_snippet(
        caller=agent, room_id=str(room.pk), name="App", files=files, idempotency_key=key
    )


def version_of(project, files, commit="e" * 40):
    repository, _ = Repository.objects.get_or_create(project=project, name="app")
    return RepositoryVersion.objects.create(repository=repository, commit_hash=commit, files=files)


def propose_version(room, agent, version, key="run-repo-0001"):
    return propose_repo_version(
        caller=agent,
        room_id=str(room.pk),
        name="App from repo",
        repository_id=str(version.repository_id),
        version_id=str(version.pk),
        idempotency_key=key,
    )


def assert_nothing_stored():
    assert not Proposal.objects.exists()
    assert not ProposalKey.objects.exists()
    assert not RoomEvent.objects.exists()


def test_an_unknown_package_is_refused_with_its_position_and_the_fix(room, agent):
    with pytest.raises(Invalid) as refused:
        propose(room, agent, {"src/App.tsx": LEFT_PAD})
    assert refused.value.code == "not_runnable"
    assert refused.value.field == "files.src/App.tsx"
    # Word for word: the package, and what is available instead.
    assert refused.value.message == LEFT_PAD_REFUSED
    assert_nothing_stored()


def test_every_problem_is_reported_at_once(room, agent):
    files = {
        "src/App.tsx": (
            "import {x} from './util';\nimport d from './d.json';\nexport const y = [x, d];\n"
        ),
        "src/Broken.tsx": "export const = 1;\n",
        "src/d.json": "{'a': 1}",
    }
    with pytest.raises(Invalid) as refused:
        propose(room, agent, files)
    problems = refused.value.message.split("; ")
    assert problems[0] == "src/Broken.tsx:1:14: Unexpected token"
    assert refused.value.field == "files.src/Broken.tsx"
    message = refused.value.message
    assert "src/App.tsx:1:17: cannot find './util'" in message
    assert "src/d.json:1:2: invalid JSON" in message
    assert "src/App.tsx:1:1: no default export" in message
    assert_nothing_stored()


def test_the_snippet_rules_and_the_runtime_report_together(room, agent):
    with pytest.raises(Invalid) as refused:
        propose(room, agent, {"src/App.tsx": LEFT_PAD, "/etc/hosts": "x"})
    assert refused.value.code == "invalid_files"
    assert refused.value.field == "files./etc/hosts"  # the first problem's place
    assert refused.value.message.startswith("unsafe path '/etc/hosts'")
    assert "src/App.tsx:1:21: module 'left-pad' is not available" in refused.value.message
    assert_nothing_stored()


def test_a_runnable_snippet_is_stored_and_names_the_files_that_never_run(room, agent):
    files = {
        "src/App.tsx": "import './style.css';\n" + APP,
        "src/style.css": "p { color: red; }\n",
        "src/App.test.tsx": "import {test} from 'vitest';\n",
        "README.md": "# App\n",
    }
    result = propose(room, agent, files)
    assert result.proposal.files == files
    assert result.as_dict()["warnings"] == [
        "Not loaded from src/App.tsx, so they never run in the Room (2): README.md, "
        "src/App.test.tsx. Import what the app needs; leave out the rest."
    ]


def test_a_replay_gives_the_same_warnings(room, agent):
    files = {"src/App.tsx": APP, "notes.md": "todo\n"}
    first = propose(room, agent, files)
    again = propose(room, agent, files)
    assert again.replay
    assert again.warnings == first.warnings != ()


def test_more_than_20_files_are_accepted_with_a_warning_pointing_to_the_repository_route(
    room, agent
):
    files = {"src/App.tsx": "".join(f"import './p{n}';\n" for n in range(20)) + APP}
    files |= {f"src/p{n}.ts": f"export const p{n} = {n};\n" for n in range(20)}
    assert len(files) == CARD_FILES_WARNING + 1
    result = propose(room, agent, files)
    assert Proposal.objects.get() == result.proposal
    assert result.warnings == (
        f"21 files: the owner's card warns that an app this size belongs in a repository. "
        "Push it to a repository of the Room's project (list_room_repositories gives its clone "
        "URL) and propose the pinned version: "
        f"propose_room_repo_app, or POST /api/v1/rooms/{room.pk}/proposals/repo.",
    )


def test_a_file_that_takes_too_long_to_compile_is_refused_not_waited_for(room, agent, monkeypatch):
    # Valid code, but long `?.` chains are quadratic in Sucrase (2.8 s at 80 KB): with a
    # tighter deadline a small file is enough to show what happens.
    monkeypatch.setattr(runnable, "CHECK_BASE_SECONDS", 0.05)
    monkeypatch.setattr(runnable, "CHECK_SECONDS_PER_MB", 0.0)
    chain = "const v = a?.b?.c?.d?.e?.f?.g?.h?.i?.j?.k?.l?.m?.n?.o?.p?.q?.r?.s?.t;\n"
    files = {"src/App.tsx": APP, "src/Slow.ts": chain * 1200}
    with pytest.raises(Invalid) as refused:
        propose(room, agent, files)
    assert refused.value.field == "files.src/Slow.ts"
    assert refused.value.message.startswith(
        "src/Slow.ts:1:1: took too long to compile (the check stopped after 0.2 s)"
    )  # 0.05 s, then once more with 4 times that
    assert_nothing_stored()
    assert propose(room, agent, {"src/App.tsx": APP}).proposal.pk  # the engine goes on


def test_a_check_slowed_by_a_busy_machine_gets_a_second_longer_chance(room, agent, monkeypatch):
    calls = []
    check = runnable.engine.check

    def first_one_times_out(files, *, timeout):
        calls.append(timeout)
        if len(calls) == 1:
            raise EngineTimeout("src/App.tsx")
        return check(files, timeout=timeout)

    monkeypatch.setattr(runnable.engine, "check", first_one_times_out)
    assert propose(room, agent, {"src/App.tsx": APP}).proposal.pk
    assert calls[1] == calls[0] * runnable.SLOW_RETRY_FACTOR


def test_a_repository_version_that_cannot_run_is_refused(room, agent, project):
    version = version_of(project, {"src/App.tsx": LEFT_PAD, "README.md": "# App\n"})
    with pytest.raises(Invalid) as refused:
        propose_version(room, agent, version)
    assert refused.value.code == "not_runnable"
    assert refused.value.field == "files.src/App.tsx"
    assert refused.value.message.startswith("src/App.tsx:1:21: module 'left-pad' is not available")
    assert_nothing_stored()


def test_a_repository_version_without_its_entry_is_refused(room, agent, project):
    version = version_of(project, {"index.html": "<p>hi</p>", "src/main.ts": "1"})
    with pytest.raises(Invalid) as refused:
        propose_version(room, agent, version)
    assert refused.value.message == (
        f"src/App.tsx:1:1: {version} has no src/App.tsx, so the Room cannot run it in a tab: "
        "the runtime starts from src/App.tsx. Propose a version that has it."
    )
    assert_nothing_stored()


def test_a_repository_version_with_too_much_app_code_is_refused(room, agent, project):
    # Five files of 1,000,000 bytes (the most a pushed file may have) and the entry: over the
    # 5,000,000 bytes the Room runs in the browser. Outside src/ nothing counts.
    data = {f"src/data{n}.json": "0" * 1_000_000 for n in range(5)}
    files = {"src/App.tsx": APP, **data, "assets/data.json": "1" * 1_000_000}
    version = version_of(project, files)
    total = 5_000_000 + len(APP)
    with pytest.raises(Invalid) as refused:
        propose_version(room, agent, version)
    assert refused.value.message == (
        f"src/App.tsx:1:1: {version} has {total} bytes of app code under src/; the Room runs "
        "at most 5000000 bytes in the browser; trim src/ and propose that version."
    )
    assert_nothing_stored()


def test_a_repository_version_runs_from_src_and_names_what_never_runs(room, agent, project):
    files = {
        "src/App.tsx": APP,
        "src/old.tsx": "import x from 'left-pad';\n",
        "server/index.ts": "import express from 'express';\n",  # outside src/: not the app
        "README.md": "# App\n",
    }
    result = propose_version(room, agent, version_of(project, files))
    assert result.proposal.kind == Proposal.Kind.REPO
    assert result.warnings == (
        "Not loaded from src/App.tsx, so they never run in the Room (1): src/old.tsx. "
        "Import what the app needs; leave out the rest.",
    )


def test_files_without_the_entry_are_all_unused_and_their_compile_errors_still_named():
    check = runnable.check_app(
        {"src/util.ts": "export const one = 1;\n", "src/broken.ts": "export const = ;\n"}
    )
    assert check.unused == ["src/broken.ts", "src/util.ts"]
    assert check.loaded == []
    assert [problem.field for problem in check.problems] == ["files.src/broken.ts"]
