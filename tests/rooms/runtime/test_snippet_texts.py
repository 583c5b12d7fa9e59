"""The snippet rules word for word: each refusal's text, the field it names, and the limits at
their edges (one under, at, one over). An agent reads these texts to fix its proposal, so a
changed word is a changed product; test_snippet_rules.py holds which inputs are refused."""

import pytest

from rooms.runtime.snippet_rules import (
    MAX_PATH_CHARS,
    collisions,
    name_problems,
    path_problem,
    snippet_problems,
)

ENTRY = {"src/App.tsx": "export default () => null;"}
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
