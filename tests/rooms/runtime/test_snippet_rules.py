"""Server rules on snippet files, what JSON Schema cannot express: which inputs are refused, and
each refusal word for word (its text, the field it names, the limits at their edges)."""

import pytest

from osfoundry.errors import Invalid
from rooms.models import Proposal
from rooms.runtime.snippet_rules import (
    MAX_PATH_CHARS,
    collisions,
    name_problems,
    path_problem,
    snippet_problems,
)
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


# The snippet rules word for word: each refusal's text, the field it names, and the limits at their
# edges (one under, at, one over). An agent reads these texts to fix its proposal, so a changed
# word is a changed product.

BACKSLASH = "backslash; use '/' between folders"
ABSOLUTE = "absolute path; use a path relative to the app root, e.g. 'src/App.tsx'"
DRIVE = "drive letter; use a path relative to the app root"
DOTDOT = "'..' segment; paths must stay inside the app"
EMPTY_SEGMENT = "empty segment ('//' or a trailing '/'); write each folder once"
DOT = "'.' segment; write the path without './'"


def texts_and_fields(problems):
    return [(str(problem), problem.field) for problem in problems]


@pytest.mark.parametrize(
    ("path", "text"),
    [
        ("", "empty path"),
        ("s/" + "a" * (MAX_PATH_CHARS - 1), f"longer than {MAX_PATH_CHARS} characters"),
        (
            "src/a\x00.ts",
            "column 6: control character U+0000 (NULL) in a path; "
            "name the file with visible characters only",
        ),
        ("src\\x.ts", BACKSLASH),
        ("/x", ABSOLUTE),
        ("C:", DRIVE),
        ("C:/x.ts", DRIVE),
        ("..", DOTDOT),
        ("src/..", DOTDOT),
        ("src/../x", DOTDOT),
        ("src//x", EMPTY_SEGMENT),
        ("src/", EMPTY_SEGMENT),
        (".", DOT),
        ("src/./x", DOT),
        ("x/.", DOT),
    ],
)
def test_each_unsafe_path_is_told_what_is_wrong_and_how_to_fix_it(path, text):
    assert path_problem(path) == text


@pytest.mark.parametrize(
    "path", ["s/" + "a" * (MAX_PATH_CHARS - 2), "ab:c.ts", "x", "src/.well-known.ts", "src/..x"]
)
def test_paths_at_the_edges_of_the_rules_pass(path):
    # 255 characters exactly; a colon that is not a drive letter's; one character; dots that
    # are part of a name, not a segment of their own.
    assert path_problem(path) is None


def test_an_unsafe_path_is_reported_under_its_own_field_and_nothing_else_about_it():
    problems = snippet_problems({**ENTRY, "src//x.ts": "\x00"})
    assert texts_and_fields(problems) == [
        (f"unsafe path 'src//x.ts': {EMPTY_SEGMENT}", "files.src//x.ts")
    ]


def test_an_invisible_character_in_a_path_is_spelled_as_an_escape_in_the_field():
    (problem,) = snippet_problems({**ENTRY, "src/a\u200b.ts": "x"})
    assert problem.field == "files.src/a\\u200B.ts"


def test_limits_are_inclusive_and_each_refusal_is_word_for_word(settings):
    settings.SNIPPET_MAX_FILES = 2
    settings.SNIPPET_MAX_FILE_BYTES = 4
    settings.SNIPPET_MAX_TOTAL_BYTES = 8
    assert snippet_problems({"src/App.tsx": "abcd", "src/b.ts": "éé"}) == []
    problems = snippet_problems({"src/App.tsx": "abcde", "src/b.ts": "ab", "src/c.ts": "abc"})
    assert texts_and_fields(problems) == [
        (
            "files: 3 files, at most 2 allowed; an app this size belongs in a repository: "
            "use propose_room_repo_app",
            "files",
        ),
        (
            "files['src/App.tsx']: 5 bytes, at most 4 per file; split it, or use "
            "propose_room_repo_app for large apps",
            "files.src/App.tsx",
        ),
        (
            "files: 10 bytes in all, at most 8; an app this size belongs in a repository: "
            "use propose_room_repo_app",
            "files",
        ),
    ]


def test_a_missing_entry_names_the_entry_as_its_field():
    assert texts_and_fields(snippet_problems({"src/main.tsx": "x"})) == [
        ("src/App.tsx missing", "files.src/App.tsx")
    ]


def test_no_files_is_one_problem_about_the_files_field():
    assert texts_and_fields(snippet_problems({})) == [
        ("files: empty; add at least src/App.tsx", "files")
    ]


def test_a_refused_character_in_a_file_is_reported_at_its_line_and_column():
    problems = snippet_problems({"src/App.tsx": "ok\nx\u202ey"})
    assert texts_and_fields(problems) == [
        (
            "src/App.tsx:2:2: bidirectional control U+202E (RIGHT-TO-LEFT OVERRIDE) can make code "
            "read differently than it runs; write it as an escape (\\u202E) inside a string if "
            "you need it",
            "files.src/App.tsx",
        )
    ]


def test_three_colliding_paths_are_each_named_against_the_first():
    files = {"src/A.ts": "1", "src/a.ts": "2", "SRC/a.ts": "3"}
    assert texts_and_fields(collisions(files)) == [
        (
            "paths 'src/A.ts' and 'src/a.ts' collide (they differ only in case or Unicode "
            "normalisation); rename one",
            "files.src/a.ts",
        ),
        (
            "paths 'src/A.ts' and 'SRC/a.ts' collide (they differ only in case or Unicode "
            "normalisation); rename one",
            "files.SRC/a.ts",
        ),
    ]


def test_an_unsafe_path_takes_no_part_in_collisions():
    # '/src/a.ts' is refused on its own; it must not also be said to collide with 'src/A.ts'...
    assert collisions({"/x.ts": "1", "/X.ts": "2", "src/a.ts": "3"}) == []
    # ...nor hide a later collision between two safe paths.
    problems = collisions({"/x.ts": "1", "x.ts": "2", "X.ts": "3"})
    assert [problem.field for problem in problems] == ["files.X.ts"]


def test_a_name_problem_names_the_name_field_and_the_column():
    assert texts_and_fields(name_problems("Timer\tapp")) == [
        (
            "name: column 6: control character U+0009 (CHARACTER TABULATION) has no place in a "
            "one-line value; remove it from the name",
            "name",
        )
    ]
    assert name_problems("Timer app") == []
