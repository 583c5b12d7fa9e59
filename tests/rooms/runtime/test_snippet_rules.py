"""Server rules on snippet files: what JSON Schema cannot express."""

import pytest

from osfoundry.errors import Invalid
from rooms.models import Proposal
from rooms.runtime.snippet_rules import path_problem, snippet_problems
from rooms.services import propose_snippet

ENTRY = {"src/App.tsx": "export default () => null;"}


@pytest.mark.parametrize(
    "path",
    [
        "/etc/hosts",
        "src/../../x.ts",
        "../x.ts",
        "src/..",
        "src\\x.ts",
        "src/./App.tsx",
        "./src/App.tsx",
        "src//x.ts",
        "src/",
        "",
        "src/a\x00.ts",
        "src/a\n.ts",
        "src/a\x1b.ts",
        "src/a\u200b.ts",
        "C:/x.ts",
        "s/" + "a" * 260,
    ],
)
def test_unsafe_paths_are_refused(path):
    assert path_problem(path) is not None
    problems = snippet_problems({**ENTRY, path: "x"})
    assert any(p.startswith(f"unsafe path {path!r}") for p in problems)


@pytest.mark.parametrize(
    "path", ["src/App.tsx", "src/components/Timer.tsx", "README.md", "src/.env.example", "a..b.ts"]
)
def test_safe_paths_pass(path):
    assert path_problem(path) is None


def test_case_collision_between_two_keys_is_refused():
    problems = snippet_problems({**ENTRY, "src/Util.ts": "a", "src/util.ts": "b"})
    assert problems == [
        "paths 'src/Util.ts' and 'src/util.ts' collide (they differ only in case or Unicode "
        "normalisation); rename one"
    ]


def test_unicode_normalisation_collision_is_refused():
    composed, decomposed = "src/caf\u00e9.ts", "src/cafe\u0301.ts"
    problems = snippet_problems({**ENTRY, composed: "a", decomposed: "b"})
    assert len(problems) == 1 and "collide" in problems[0]


def test_missing_entry_is_named_exactly():
    assert snippet_problems({"src/main.tsx": "x"}) == ["src/App.tsx missing"]


def test_empty_files_ask_for_the_entry():
    assert snippet_problems({}) == ["files: empty; add at least src/App.tsx"]


def test_every_problem_is_reported_at_once():
    problems = snippet_problems({"/etc/hosts": "x", "src\\x.ts": "y"})
    assert problems[0].startswith("unsafe path '/etc/hosts'")
    assert problems[1].startswith("unsafe path 'src\\\\x.ts'")
    assert problems[2] == "src/App.tsx missing"


def test_too_many_files_points_to_the_repository_route(settings):
    settings.SNIPPET_MAX_FILES = 3
    files = {**ENTRY, **{f"src/f{i}.ts": "x" for i in range(3)}}
    (problem,) = snippet_problems(files)
    assert problem.startswith("files: 4 files, at most 3 allowed")
    assert "propose_room_repo_app" in problem


def test_a_file_over_the_byte_limit_is_named(settings):
    settings.SNIPPET_MAX_FILE_BYTES = 10
    (problem,) = snippet_problems({"src/App.tsx": "é" * 6})
    assert problem.startswith("files['src/App.tsx']: 12 bytes, at most 10 per file")


def test_total_size_points_to_the_repository_route(settings):
    settings.SNIPPET_MAX_TOTAL_BYTES = 20
    (problem,) = snippet_problems({"src/App.tsx": "x" * 15, "src/b.ts": "y" * 15})
    assert problem.startswith("files: 30 bytes in all, at most 20")
    assert "propose_room_repo_app" in problem


def test_refused_snippet_stores_nothing(room, agent):
    with pytest.raises(Invalid) as error:
        propose_snippet(
            caller=agent,
            room_id=str(room.pk),
            name="Bad",
            files={**ENTRY, "/etc/hosts": "y"},
            idempotency_key="key-bad-01",
        )
    assert error.value.field == "files./etc/hosts"
    assert not Proposal.objects.exists()
    assert not room.events.exists()
    assert not room.proposals.exists()


def test_blank_name_is_refused(room, agent):
    with pytest.raises(Invalid) as error:
        propose_snippet(
            caller=agent, room_id=str(room.pk), name="  ", files=ENTRY, idempotency_key="key-01234"
        )
    assert error.value.field == "name"
    assert error.value.message == "name: must not be empty; give the app a short title"
    assert not Proposal.objects.exists()
