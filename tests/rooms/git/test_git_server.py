"""The git server with Debian's real `git` client against a live server (rooms/git/server.py)."""

import os
import threading

import pytest

from rooms.git import server as git_server
from rooms.git.repositories import create_repository
from rooms.models import GitObject, GitRef, Repository, RepositoryVersion
from rooms.runtime import verdicts
from tests.rooms.gitclient import clone_url, git, write_files


@pytest.fixture
def setup(asgi_server, project, agent, stranger, token_factory, tmp_path):
    project.members.add(agent)

    class Setup:
        server = asgi_server
        home = tmp_path / "home"
        write_token = token_factory(agent)
        read_token = token_factory(agent, scopes="osfoundry:read")
        stranger_token = token_factory(stranger)

        def url(self, token, name="timer"):
            return clone_url(asgi_server.url, project.name, name, token)

    return Setup()


def commit_all(work, home, message):
    git(work, "add", "-A", home=home)
    git(work, "commit", "-q", "-m", message, home=home)
    return git(work, "rev-parse", "HEAD", home=home).stdout.strip()


def test_clone_an_empty_repository_commit_push_fetch_and_push_again(
    setup, tmp_path, files, project
):
    repository = create_repository(project=project, name="timer", created_by=None)
    work = tmp_path / "work"
    cloned = git(tmp_path, "clone", setup.url(setup.write_token), "work", home=setup.home)
    assert "empty repository" in cloned.stderr
    write_files(work, files)
    first = commit_all(work, setup.home, "Standup timer\n\nFirst version.")
    push = git(work, "push", "origin", "HEAD:main", home=setup.home)
    version = RepositoryVersion.objects.get(repository=repository, commit_hash=first)
    assert (version.ref, version.message) == ("main", "Standup timer\n\nFirst version.")
    assert version.author == "Agent Smith <agent@example.com>"
    assert version.files == files and verdicts.known(version)  # checked within the push
    assert (
        f"remote: version {version.pk} of main ({version.short_hash}): runs in the Room; "
        "propose it with propose_room_repo_app" in push.stderr
    )

    other = tmp_path / "other"
    git(tmp_path, "clone", setup.url(setup.read_token), "other", home=setup.home)
    assert git(other, "rev-parse", "HEAD", home=setup.home).stdout.strip() == first
    git(other, "fsck", "--full", home=setup.home)

    (work / "src" / "extra.ts").write_text("export const extra = 1;\n")
    second = commit_all(work, setup.home, "Second")
    git(work, "push", "origin", "HEAD:main", home=setup.home)
    git(other, "fetch", "origin", home=setup.home)
    assert git(other, "rev-parse", "origin/main", home=setup.home).stdout.strip() == second
    assert RepositoryVersion.objects.filter(repository=repository).count() == 2
    assert GitRef.objects.get(repository=repository, name="refs/heads/main").value == second


def test_a_push_to_a_new_name_creates_the_repository_for_its_pusher(setup, tmp_path, files, agent):
    work = tmp_path / "work"
    work.mkdir()
    git(work, "init", "-q", "-b", "main", home=setup.home)
    write_files(work, files)
    head = commit_all(work, setup.home, "first")
    git(work, "push", setup.url(setup.write_token, "new-app"), "main", home=setup.home)
    repository = Repository.objects.get(name="new-app")
    assert repository.created_by == agent
    assert repository.versions.get().commit_hash == head
    bad = git(
        work, "push", setup.url(setup.write_token, "bad~name"), "main", home=setup.home, check=False
    )
    assert bad.returncode != 0 and "is not a valid name" in bad.stderr


def test_a_bad_token_gets_401_with_the_basic_challenge(setup, tmp_path):
    import httpx

    url = setup.server.url + "/git/Demo/timer.git/info/refs?service=git-upload-pack"
    response = httpx.get(url, auth=("agent", "osf_wrong"))
    assert response.status_code == 401
    assert response.headers["www-authenticate"] == 'Basic realm="osFoundry"'
    result = git(tmp_path, "clone", setup.url("osf_wrong"), "x", home=setup.home, check=False)
    assert result.returncode != 0 and "Authentication failed" in result.stderr


def test_a_token_is_remembered_between_git_requests_until_it_is_revoked(
    setup, tmp_path, project, agent, monkeypatch
):
    from agents.tokens import create_access_token, revoke_access_token
    from osfoundry import auth, wakeups

    # One process here: its own wake-ups reach it only with a live subscription; force trust.
    monkeypatch.setattr(wakeups.registry, "is_reliable", lambda: True)
    reads = []
    real = auth.authenticate_bearer
    monkeypatch.setattr(
        auth, "authenticate_bearer", lambda raw, **kw: reads.append(raw) or real(raw, **kw)
    )
    create_repository(project=project, name="timer", created_by=None)
    token, raw = create_access_token(user=agent, scopes="osfoundry:read")
    for _ in range(2):
        git(tmp_path, "ls-remote", setup.url(raw), home=setup.home)
    assert reads == [raw]  # read once, remembered for the next requests

    revoke_access_token(token=token)
    refused = git(tmp_path, "ls-remote", setup.url(raw), home=setup.home, check=False)
    assert refused.returncode != 0 and "Authentication failed" in refused.stderr
    assert reads[1:] and set(reads) == {raw}  # asked the database again, which refused


def test_git_requests_draw_from_the_callers_one_rate_budget(setup, tmp_path, settings, project):
    import httpx

    settings.RATE_LIMIT = 3
    settings.RATE_WINDOW = 3600  # fixed on the clock: rarely turns during the test
    info_refs = setup.server.url + "/git/Demo/timer.git/info/refs?service=git-upload-pack"
    create_repository(project=project, name="timer", created_by=None)
    # One REST call and two git requests use the token's budget of 3.
    rest = httpx.get(
        setup.server.url + "/api/v1/rooms", headers={"Authorization": f"Bearer {setup.write_token}"}
    )
    assert rest.headers["x-ratelimit-remaining"] == "2"
    for _ in range(2):
        assert httpx.get(info_refs, auth=("agent", setup.write_token)).status_code == 200
    refused = httpx.get(info_refs, auth=("agent", setup.write_token))
    assert refused.status_code == 429
    assert refused.text.startswith("Rate limit of 3 calls per 3600 s reached; retry after")
    assert int(refused.headers["retry-after"]) >= 1
    result = git(tmp_path, "clone", setup.url(setup.write_token), "x", home=setup.home, check=False)
    assert result.returncode != 0 and "429" in result.stderr


def test_guessing_tokens_over_git_is_charged_to_the_address(setup, settings):
    import httpx

    settings.RATE_LIMIT = 3
    settings.RATE_WINDOW = 3600
    info_refs = setup.server.url + "/git/Demo/timer.git/info/refs?service=git-upload-pack"
    for _ in range(3):
        assert httpx.get(info_refs, auth=("agent", "osf_wrong")).status_code == 401
    refused = httpx.get(info_refs, auth=("agent", "osf_wrong"))  # refused before any check
    assert refused.status_code == 429 and "www-authenticate" not in refused.headers
    # A valid token has its own budget.
    assert httpx.get(info_refs, auth=("agent", setup.write_token)).status_code == 404


def test_a_token_made_for_another_project_finds_no_repository(setup, tmp_path, agent, project):
    from agents.tokens import create_access_token
    from rooms.models import Project

    other = Project.objects.create(name="Other")
    other.members.add(agent)
    create_repository(project=project, name="timer", created_by=None)
    _, scoped = create_access_token(
        user=agent, scopes="osfoundry:read osfoundry:write", project_id=other.pk
    )
    refused = git(tmp_path, "ls-remote", setup.url(scoped), home=setup.home, check=False)
    assert refused.returncode != 0
    assert f"Repository {project.name}/timer not found" in refused.stderr
    # Nor may it create one there by pushing; in its own project it may.
    work = tmp_path / "work"
    work.mkdir()
    git(work, "init", "-q", "-b", "main", home=setup.home)
    write_files(work, {"README.md": "x\n"})
    commit_all(work, setup.home, "first")
    pushed = git(work, "push", setup.url(scoped, "new"), "main", home=setup.home, check=False)
    assert pushed.returncode != 0 and "not found" in pushed.stderr
    assert not Repository.objects.filter(name="new").exists()
    own = clone_url(setup.server.url, "Other", "new", scoped)
    git(work, "push", "-q", own, "main", home=setup.home)
    assert Repository.objects.get(name="new").project == other


def test_a_read_token_cannot_push(setup, tmp_path, files):
    work = tmp_path / "work"
    work.mkdir()
    git(work, "init", "-q", "-b", "main", home=setup.home)
    write_files(work, files)
    commit_all(work, setup.home, "m")
    result = git(work, "push", setup.url(setup.read_token), "main", home=setup.home, check=False)
    assert result.returncode != 0 and "403" in result.stderr
    assert not Repository.objects.filter(name="timer").exists()


def test_outside_the_project_a_repository_is_not_found(setup, tmp_path, files, project):
    Repository.objects.create(project=project, name="timer")
    for name in ("timer", "missing"):
        result = git(
            tmp_path,
            "clone",
            setup.url(setup.stranger_token, name),
            name,
            home=setup.home,
            check=False,
        )
        assert result.returncode != 0 and "not found" in result.stderr


def test_a_file_over_the_limit_is_refused_and_nothing_is_stored(setup, tmp_path, files):
    work = tmp_path / "work"
    work.mkdir()
    git(work, "init", "-q", "-b", "main", home=setup.home)
    write_files(work, files | {"data/big.txt": "x" * 1_000_001})
    commit_all(work, setup.home, "too big")
    result = git(work, "push", setup.url(setup.write_token), "main", home=setup.home, check=False)
    assert result.returncode != 0
    assert "remote: error: data/big.txt: 1000001 bytes, at most 1000000 per file" in result.stderr
    assert "rejected" in result.stderr
    assert not GitObject.objects.exists() and not RepositoryVersion.objects.exists()
    assert not Repository.objects.exists()  # the push to a new name created nothing
    assert not GitRef.objects.filter(name="refs/heads/main").exists()


def test_of_two_racing_pushes_to_one_branch_one_is_rejected(setup, tmp_path, files, monkeypatch):
    base = tmp_path / "base"
    base.mkdir()
    git(base, "init", "-q", "-b", "main", home=setup.home)
    write_files(base, files)
    commit_all(base, setup.home, "base")
    git(base, "push", setup.url(setup.write_token), "main", home=setup.home)
    heads, results = {}, {}
    for name in ("a", "b"):
        work = tmp_path / name
        git(tmp_path, "clone", "-q", setup.url(setup.write_token), name, home=setup.home)
        (work / "src" / f"{name}.ts").write_text(f"export const {name} = 1;\n")
        heads[name] = commit_all(work, setup.home, name)

    # Both pushes meet in the server, each about to move main from the same old commit: the
    # race is decided by the database's conditional update, every run.
    meet = threading.Barrier(2, timeout=20)
    update = git_server.PushHandler._update

    def update_together(handler, ref, old, new):
        meet.wait()
        return update(handler, ref, old, new)

    monkeypatch.setattr(git_server.PushHandler, "_update", update_together)

    def push(name):
        results[name] = git(tmp_path / name, "push", "origin", "main", home=setup.home, check=False)

    threads = [threading.Thread(target=push, args=(name,)) for name in heads]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    (winner,) = [name for name in heads if results[name].returncode == 0]
    (loser,) = [name for name in heads if name != winner]
    assert GitRef.objects.get(name="refs/heads/main").value == heads[winner]
    rejected = results[loser].stderr
    assert "remote: error: refs/heads/main: refs/heads/main was moved by another push" in rejected
    assert "[remote rejected] main -> main (failed to write)" in rejected


def test_two_first_pushes_to_a_new_name_make_one_repository(setup, tmp_path, files, monkeypatch):
    heads, results = {}, {}
    for name in ("a", "b"):
        work = tmp_path / name
        work.mkdir()
        git(work, "init", "-q", "-b", "main", home=setup.home)
        write_files(work, files | {f"src/{name}.ts": f"export const {name} = 1;\n"})
        heads[name] = commit_all(work, setup.home, name)
    # Both pushes are about to store the repository the name does not have yet.
    meet = threading.Barrier(2, timeout=20)
    store = git_server.SingleRepositoryBackend.store_repository

    def store_together(backend):
        meet.wait()
        store(backend)

    monkeypatch.setattr(git_server.SingleRepositoryBackend, "store_repository", store_together)

    def push(name):
        url = setup.url(setup.write_token, name="fresh")
        results[name] = git(tmp_path / name, "push", url, "main", home=setup.home, check=False)

    threads = [threading.Thread(target=push, args=(name,)) for name in heads]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    (repository,) = Repository.objects.filter(name="fresh")
    (winner,) = [name for name in heads if results[name].returncode == 0]
    (loser,) = [name for name in heads if name != winner]
    assert GitRef.objects.get(repository=repository, name="refs/heads/main").value == heads[winner]
    assert "refs/heads/main was created by another push" in results[loser].stderr
    clone = git(tmp_path, "clone", setup.url(setup.read_token, name="fresh"), "c", home=setup.home)
    assert clone.returncode == 0
    assert (
        git(tmp_path / "c", "rev-parse", "HEAD", home=setup.home).stdout.strip() == (heads[winner])
    )


@pytest.mark.parametrize(
    ("limit", "value", "expected"),
    [
        ("git.repositories.MAX_TREE_FILES", 1, "remote: error: more than 1 files in the tree of"),
        ("git.pack.MAX_PUSH_BYTES", 200, "remote: error: push larger than 0 MB (200 bytes)"),
    ],
)
def test_a_push_over_a_limit_is_refused_with_its_line(
    setup, tmp_path, files, monkeypatch, limit, value, expected
):
    monkeypatch.setattr(f"rooms.{limit}", value)
    work = tmp_path / "work"
    work.mkdir()
    git(work, "init", "-q", "-b", "main", home=setup.home)
    write_files(work, files)
    commit_all(work, setup.home, "over")
    result = git(work, "push", setup.url(setup.write_token), "main", home=setup.home, check=False)
    assert result.returncode != 0 and expected in result.stderr
    assert not GitObject.objects.exists() and not RepositoryVersion.objects.exists()
    assert not Repository.objects.exists()


def test_a_real_push_over_50_mb_is_refused_and_nothing_is_stored(setup, tmp_path, files):
    # 54 files of 1 MB that do not compress: a pack of about 54 MB, over the real limit (50 MiB).
    work = tmp_path / "work"
    (work / "data").mkdir(parents=True)
    git(work, "init", "-q", "-b", "main", home=setup.home)
    write_files(work, files)
    for n in range(54):
        (work / "data" / f"noise-{n:02}.bin").write_bytes(os.urandom(1_000_000))
    commit_all(work, setup.home, "too large")
    result = git(work, "push", setup.url(setup.write_token), "main", home=setup.home, check=False)
    assert result.returncode != 0
    assert "remote: error: push larger than 50 MB (52428800 bytes)" in result.stderr
    assert not GitObject.objects.exists() and not RepositoryVersion.objects.exists()
    assert not Repository.objects.exists()


def test_a_force_push_moves_the_branch_but_keeps_the_pinned_version(setup, tmp_path, files):
    work = tmp_path / "work"
    work.mkdir()
    git(work, "init", "-q", "-b", "main", home=setup.home)
    write_files(work, files)
    first = commit_all(work, setup.home, "first")
    url = setup.url(setup.write_token)
    git(work, "push", url, "main", home=setup.home)
    git(work, "commit", "-q", "--amend", "-m", "rewritten", home=setup.home)
    rewritten = git(work, "rev-parse", "HEAD", home=setup.home).stdout.strip()
    refused = git(work, "push", url, "main", home=setup.home, check=False)
    assert refused.returncode != 0  # git itself refuses a non-fast-forward without --force
    git(work, "push", "--force", url, "main", home=setup.home)
    assert GitRef.objects.get(name="refs/heads/main").value == rewritten
    versions = RepositoryVersion.objects.order_by("imported_at")
    assert [v.commit_hash for v in versions] == [first, rewritten]
    assert GitObject.objects.filter(sha=first).exists()  # objects are never deleted
