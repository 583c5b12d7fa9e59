"""What a push may update (rooms/repositories.ref_problem): branches and tags, under git's own
rules for ref names, each judged before anything is stored; the limits and the snippet rules
hold for every ref a push moves, tags as much as branches."""

import pytest

from osfoundry.text import visible
from rooms.models import GitObject, GitRef, Repository, RepositoryVersion
from tests.rooms.gitclient import clone_url, git, write_files
from tests.rooms.gitpacks import ZERO, commit_of, entries_of, pack, receive_pack, report

NAMESPACES = "only branches (refs/heads/…) and tags (refs/tags/…) can be pushed"


@pytest.fixture
def member_token(project, agent, token_factory):
    project.members.add(agent)
    return token_factory(agent)


@pytest.fixture
def work(tmp_path, files):
    home, work = tmp_path / "home", tmp_path / "work"
    work.mkdir()
    git(work, "init", "-q", "-b", "main", home=home)
    write_files(work, files)
    git(work, "add", "-A", home=home)
    git(work, "commit", "-q", "-m", "first", home=home)
    return work, home


def url_of(asgi_server, token, name="timer"):
    return clone_url(asgi_server.url, "Demo", name, token)


def nothing_stored() -> bool:
    return not (
        Repository.objects.exists()
        or GitObject.objects.exists()
        or GitRef.objects.exists()
        or RepositoryVersion.objects.exists()
    )


@pytest.mark.parametrize(
    ("ref", "rule"),
    [
        (b"refs/heads/a..b", "invalid ref name: may not contain '..' (git check-ref-format)"),
        (
            b"refs/heads/x.lock",
            "invalid ref name: may not have a part that ends with '.lock' (git check-ref-format)",
        ),
        (b"refs/heads/../../y", "invalid ref name: may not contain '..' (git check-ref-format)"),
        (
            b"refs/heads/.hidden",
            "invalid ref name: may not have a part that starts with '.' (git check-ref-format)",
        ),
        (
            b"refs/heads/a~1",
            "invalid ref name: may not contain a space or ~ ^ : ? * [ \\ (git check-ref-format)",
        ),
        (b"refs/heads/x/", "invalid ref name: may not end with '/' or '.' (git check-ref-format)"),
        (
            b"refs/heads/a//b",
            "invalid ref name: may not contain an empty part ('//') (git check-ref-format)",
        ),
        (b"refs/heads/a@{1}", "invalid ref name: may not contain '@{' (git check-ref-format)"),
        (
            b"refs/heads/ma\xe2\x80\xaein",
            "ref name: column 14: bidirectional control U+202E (RIGHT-TO-LEFT OVERRIDE) can "
            "make the text around it read differently than it is; remove it from the ref name",
        ),
        (b"refs/heads/\xff", "a ref name must be UTF-8"),
        (b"refs/heads/" + b"x" * 250, "a ref name of 261 bytes, at most 255"),
        (b"HEAD", NAMESPACES),
        (b"refs/x/y", NAMESPACES),
        (b"refs/notes/commits", NAMESPACES),
    ],
)
def test_a_push_to_a_ref_git_would_not_name_is_refused_and_leaves_no_repository(
    asgi_server, member_token, ref, rule
):
    objects = commit_of({b"a.txt": b"a\n"})
    response = receive_pack(
        asgi_server.url,
        member_token,
        "Demo/fresh.git",
        [(ZERO, objects[-1].id, ref)],
        pack(entries_of(objects)),
    )
    assert response.status_code == 200
    text = report(response)
    assert "unpack ok" in text
    assert f"ng {ref.decode('utf-8', 'replace')} {rule}" in text
    assert f"error: {visible(ref.decode('utf-8', 'replace'))}: {rule}" in text
    assert nothing_stored()


def test_a_ref_update_line_that_does_not_parse_is_answered_with_an_error(asgi_server, member_token):
    objects = commit_of({b"a.txt": b"a\n"})
    response = receive_pack(
        asgi_server.url,
        member_token,
        "Demo/fresh.git",
        [(ZERO, objects[-1].id, b"refs/heads/a b")],  # a space: four words, not three
        pack(entries_of(objects)),
    )
    assert response.status_code == 200
    assert report(response)[4:].startswith("ERR Invalid ref update line from client: b'0000")
    assert nothing_stored()


def test_of_two_refs_in_one_push_the_valid_one_is_taken_and_the_other_refused(
    asgi_server, member_token
):
    objects = commit_of({b"a.txt": b"a\n"})
    tip = objects[-1].id
    text = report(
        receive_pack(
            asgi_server.url,
            member_token,
            "Demo/fresh.git",
            [(ZERO, tip, b"refs/heads/main"), (ZERO, tip, b"refs/x/y")],
            pack(entries_of(objects)),
        )
    )
    assert "ok refs/heads/main" in text and f"ng refs/x/y {NAMESPACES}" in text
    repository = Repository.objects.get(name="fresh")
    assert set(GitRef.objects.filter(repository=repository).values_list("name", flat=True)) == {
        "HEAD",
        "refs/heads/main",
    }
    assert repository.versions.get().commit_hash == tip.decode()


def test_a_commit_over_the_limits_is_refused_under_a_tag_too(asgi_server, member_token, work):
    work, home = work
    (work / "big.bin").write_bytes(b"x" * 3_000_000)
    git(work, "add", "-A", home=home)
    git(work, "commit", "-q", "-m", "big", home=home)
    git(work, "tag", "big", home=home)
    result = git(
        work, "push", url_of(asgi_server, member_token), "refs/tags/big", home=home, check=False
    )
    assert result.returncode != 0
    assert "remote: error: big.bin: 3000000 bytes, at most 1000000 per file" in result.stderr
    assert "[remote rejected] big -> big (rejected by policy)" in result.stderr
    assert nothing_stored()


def test_a_push_to_another_namespace_is_refused_by_git_itself_in_its_output(
    asgi_server, member_token, work
):
    work, home = work
    result = git(
        work, "push", url_of(asgi_server, member_token), "HEAD:refs/x/y", home=home, check=False
    )
    assert result.returncode != 0
    assert f"[remote rejected] HEAD -> refs/x/y ({NAMESPACES})" in result.stderr
    assert nothing_stored()


def test_tags_are_pinned_and_served_to_clones(asgi_server, member_token, work, tmp_path):
    work, home = work
    head = git(work, "rev-parse", "HEAD", home=home).stdout.strip()
    git(work, "tag", "v1", home=home)
    git(work, "tag", "-a", "v1-notes", "-m", "the first", home=home)
    git(work, "push", url_of(asgi_server, member_token), "main", "--tags", home=home)
    version = RepositoryVersion.objects.get()
    assert (version.commit_hash, version.ref) == (head, "main")  # one commit, one version
    listed = git(tmp_path, "ls-remote", "--tags", url_of(asgi_server, member_token), home=home)
    assert f"{head}\trefs/tags/v1" in listed.stdout
    assert "refs/tags/v1-notes^{}" in listed.stdout
    git(
        tmp_path,
        "clone",
        "-q",
        "--branch",
        "v1-notes",
        url_of(asgi_server, member_token),
        "c",
        home=home,
    )
    assert git(tmp_path / "c", "rev-parse", "HEAD", home=home).stdout.strip() == head


def test_a_tag_of_a_commit_no_branch_holds_pins_a_version_named_after_it(
    asgi_server, member_token, work
):
    work, home = work
    git(work, "push", url_of(asgi_server, member_token), "main", home=home)
    (work / "src" / "extra.ts").write_text("export const extra = 1;\n")
    git(work, "add", "-A", home=home)
    git(work, "commit", "-q", "-m", "tagged only", home=home)
    tagged = git(work, "rev-parse", "HEAD", home=home).stdout.strip()
    git(work, "tag", "-a", "v2", "-m", "second", home=home)
    push = git(work, "push", url_of(asgi_server, member_token), "v2", home=home)
    version = RepositoryVersion.objects.get(commit_hash=tagged)
    assert version.ref == "tags/v2"
    assert f"remote: version {version.pk} of tags/v2 ({version.short_hash})" in push.stderr


def test_a_tag_of_something_other_than_a_commit_is_refused(asgi_server, member_token, work):
    work, home = work
    blob = git(work, "rev-parse", "HEAD:src/App.tsx", home=home).stdout.strip()
    git(work, "tag", "-a", "not-a-commit", "-m", "a file", blob, home=home)
    result = git(
        work,
        "push",
        url_of(asgi_server, member_token),
        "main",
        "refs/tags/not-a-commit",
        home=home,
        check=False,
    )
    assert result.returncode != 0
    assert f"remote: error: {blob} is not a commit" in result.stderr
    assert nothing_stored()


def test_a_deleted_branch_is_gone_and_a_deleted_ref_elsewhere_is_refused(
    asgi_server, member_token, work
):
    work, home = work
    url = url_of(asgi_server, member_token)
    git(work, "push", url, "main", "main:feature", home=home)
    git(work, "push", url, ":feature", home=home)
    assert not GitRef.objects.filter(name="refs/heads/feature").exists()
    result = git(work, "push", url, ":refs/x/y", home=home, check=False)
    assert f"[remote rejected] refs/x/y ({NAMESPACES})" in result.stderr


def test_a_tag_of_a_tag_is_followed_to_its_commit_but_not_past_the_depth_limit():
    from dulwich.objects import Commit, Tag

    from osfoundry.errors import Invalid
    from rooms.git.server import MAX_TAG_DEPTH, peeled

    def tag_of(sha: bytes, n: int) -> Tag:
        tag = Tag()
        tag.object = (Tag if n else Commit, sha)
        return tag

    commit = b"c" * 40
    chain = {
        f"{n:040d}".encode(): tag_of(f"{n - 1:040d}".encode() if n else commit, n) for n in range(3)
    }
    assert peeled(lambda sha: chain.get(sha), f"{2:040d}".encode()) == commit
    assert peeled(lambda sha: chain.get(sha), commit) == commit

    endless = {b"t" * 40: tag_of(b"t" * 40, 1)}
    with pytest.raises(Invalid) as refused:
        peeled(lambda sha: endless[sha], b"t" * 40)
    assert str(refused.value) == f"{'t' * 40}: tags of tags nested past {MAX_TAG_DEPTH}"
