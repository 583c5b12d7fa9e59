"""A push of a large app is answered before its versions are checked (rooms/git/version_checks.py):
the check runs after it and stores each verdict; until then nothing reports a verdict nobody
found. A snippet-sized app is checked within its push, and git prints the verdict."""

import pytest

from osfoundry.errors import Invalid
from rooms.git import repositories, version_checks
from rooms.git.repositories import Snapshot, list_room_repositories, pin_version
from rooms.models import Repository, RepositoryVersion
from rooms.runtime import runnable, verdicts
from rooms.runtime.rules import problem_at
from rooms.runtime.runnable import RunCheck
from rooms.services import propose_repo_version
from tests.rooms.gitclient import clone_url, git, wait_for_verdict, write_files
from tests.rooms.helpers import LEFT_PAD

NOT_AVAILABLE = "src/App.tsx:1:21: module 'left-pad' is not available"


def unchecked(project, files, commit):
    repository, _ = Repository.objects.get_or_create(project=project, name="timer")
    snapshot = Snapshot(commit_hash=commit, message="m", author="A <a@e>", files=files)
    version = pin_version(repository=repository, snapshot=snapshot, ref="main").version
    assert verdicts.known(version) is None
    return version


def propose(room, agent, version):
    return propose_repo_version(
        caller=agent,
        room_id=str(room.pk),
        name="Timer",
        repository_id=str(version.repository_id),
        version_id=str(version.pk),
        idempotency_key="verdict-key-01",
    )


def push_twice(server, project, agent, token, tmp_path, files) -> list[str]:
    """Push an app that runs, then one that cannot: git's output of each."""
    project.members.add(agent)
    home, work = tmp_path / "home", tmp_path / "work"
    work.mkdir()
    git(work, "init", "-q", "-b", "main", home=home)
    url = clone_url(server.url, project.name, "timer", token)
    pushes = []
    for message, app in (("runs", files), ("needs left-pad", files | {"src/App.tsx": LEFT_PAD})):
        write_files(work, app)
        git(work, "add", "-A", home=home)
        git(work, "commit", "-q", "-m", message, home=home)
        pushes.append(git(work, "push", url, "main", home=home).stderr)
    return pushes


def test_a_large_app_is_answered_first_and_its_versions_get_their_verdicts_after(
    asgi_server, project, agent, token_factory, tmp_path, files, monkeypatch
):
    monkeypatch.setattr(repositories, "CHECKED_WITHIN_PUSH_BYTES", 10)  # both apps are larger
    pushes = push_twice(asgi_server, project, agent, token_factory(agent), tmp_path, files)
    good, bad = RepositoryVersion.objects.order_by("imported_at")
    for push, version in zip(pushes, (good, bad), strict=True):
        assert (
            f"remote: version {version.pk} of main ({version.short_hash}): pinned; checking now "
            "whether it runs in the Room: list_room_repositories shows the result (runnable), "
            "propose_room_repo_app names any problem"
        ) in push
        assert "runs in the Room;" not in push and "cannot run" not in push
    assert wait_for_verdict(good) is True
    assert wait_for_verdict(bad) is False


def test_a_snippet_sized_app_gets_its_verdict_in_the_push(
    asgi_server, project, agent, token_factory, tmp_path, files
):
    pushes = push_twice(asgi_server, project, agent, token_factory(agent), tmp_path, files)
    good, bad = RepositoryVersion.objects.order_by("imported_at")
    assert (verdicts.known(good), verdicts.known(bad)) == (True, False)  # stored before the answers
    assert (
        f"remote: version {good.pk} of main ({good.short_hash}): runs in the Room; propose it "
        "with propose_room_repo_app"
    ) in pushes[0]
    assert (
        f"remote: version {bad.pk} of main ({bad.short_hash}): cannot run in the Room:"
        in (pushes[1])
    )
    assert f"remote:   {NOT_AVAILABLE}" in pushes[1]
    assert "checking now" not in pushes[0] + pushes[1]


def test_a_push_breaking_a_character_rule_is_told_so_at_once_and_on_every_branch_after(
    asgi_server, project, agent, token_factory, tmp_path, files
):
    # Proposing a version runs only the runnability check: these problems are named here.
    project.members.add(agent)
    home, work = tmp_path / "home", tmp_path / "work"
    work.mkdir()
    git(work, "init", "-q", "-b", "main", home=home)
    write_files(work, files | {"src/Note.ts": "export const note = 1; // \u202e\n"})
    git(work, "add", "-A", home=home)
    git(work, "commit", "-q", "-m", "hidden", home=home)
    url = clone_url(asgi_server.url, project.name, "timer", token_factory(agent))
    push = git(work, "push", url, "main", home=home).stderr
    version = RepositoryVersion.objects.get()
    assert f"({version.short_hash}): cannot run in the Room:" in push
    assert "remote:   src/Note.ts:1:27: bidirectional control U+202E" in push
    assert verdicts.known(version) is False  # stored before the answer, no check to wait for
    assert version.run_verdict is None  # the rules said so: nothing was compiled
    # The same commit pushed to another branch: its stored verdict, named again in full.
    again = git(work, "push", url, "main:topic", home=home).stderr
    assert f"({version.short_hash}): cannot run in the Room:" in again
    assert "remote:   src/Note.ts:1:27: bidirectional control U+202E" in again
    assert RepositoryVersion.objects.get().pk == version.pk


def test_listing_checks_a_version_not_checked_yet_and_stores_its_verdict(room, agent, files):
    good = unchecked(room.project, files, "a" * 40)
    bad = unchecked(room.project, {"src/App.tsx": LEFT_PAD}, "b" * 40)
    (listed,) = list_room_repositories(agent, str(room.pk), origin="http://testserver")
    runnable = {item["version_id"]: item["runnable"] for item in listed["latest_versions"]}
    assert runnable == {str(good.pk): True, str(bad.pk): False}
    good.refresh_from_db()
    bad.refresh_from_db()
    assert (verdicts.known(good), verdicts.known(bad)) == (True, False)


def test_a_check_cut_short_is_never_reported_runnable_nor_stored(room, agent, files, monkeypatch):
    version = unchecked(room.project, files, "a" * 40)
    stopped = RunCheck(
        problems=[problem_at("src/App.tsx", 1, 1, "took too long")], is_transient=True
    )
    monkeypatch.setattr(runnable, "check_app", lambda files, packages=None: stopped)
    (listed,) = list_room_repositories(agent, str(room.pk), origin="http://testserver")
    assert listed["latest_versions"][0]["runnable"] is False
    version.refresh_from_db()
    assert verdicts.known(version) is None  # the next reader checks again
    assert version.run_verdict is None


def test_proposing_a_version_not_checked_yet_refuses_it_when_it_cannot_run(room, agent):
    version = unchecked(room.project, {"src/App.tsx": LEFT_PAD, "README.md": "# App\n"}, "c" * 40)
    with pytest.raises(Invalid) as refused:
        propose(room, agent, version)
    assert refused.value.code == "not_runnable"
    assert refused.value.field == "files.src/App.tsx"
    assert refused.value.message.startswith(NOT_AVAILABLE)


def test_proposing_a_version_not_checked_yet_that_runs_makes_its_card(room, agent, files):
    version = unchecked(room.project, files, "d" * 40)
    assert propose(room, agent, version).proposal.repository_version == version


def test_a_check_cut_short_by_its_deadline_is_not_remembered(room, files, monkeypatch):
    # Long `?.` chains are quadratic in Sucrase: with a tight deadline a small file is too slow.
    chain = "const v = a?.b?.c?.d?.e?.f?.g?.h?.i?.j?.k?.l?.m?.n?.o?.p?.q?.r?.s?.t;\n"
    version = unchecked(room.project, files | {"src/Slow.ts": chain * 250}, "e" * 40)  # ~1 s
    monkeypatch.setattr(runnable, "CHECK_BASE_SECONDS", 0.05)
    monkeypatch.setattr(runnable, "CHECK_SECONDS_PER_MB", 0.0)
    (problem,) = verdicts.version_problems(version)
    assert problem.startswith("src/Slow.ts:1:1: took too long to compile")
    version.refresh_from_db()
    assert verdicts.known(version) is None
    monkeypatch.setattr(runnable, "CHECK_BASE_SECONDS", 60.0)  # the next reader checks again
    assert verdicts.version_problems(version) == []
    version.refresh_from_db()
    assert verdicts.known(version) is True


@pytest.mark.django_db(transaction=True)
def test_the_checking_thread_skips_versions_gone_or_judged_and_checks_the_rest(room, files, caplog):
    judged = unchecked(room.project, files, "1" * 40)
    # Say a reader judged it meanwhile.
    RepositoryVersion.objects.filter(pk=judged.pk).update(rule_problems=["src/App.tsx: judged"])
    gone = unchecked(room.project, files, "2" * 40)
    gone_id = gone.pk
    gone.delete()
    fresh = unchecked(room.project, files, "3" * 40)
    version_checks.check_later([judged.pk, gone_id, fresh.pk])
    assert wait_for_verdict(fresh) is True  # one thread, in order: the others came first
    judged.refresh_from_db()
    assert verdicts.known(judged) is False  # not checked again (its files would run)
    assert judged.run_verdict is None
    assert "failed" not in caplog.text
