"""rooms/runtime/verdicts.py's texts: what a card and a proposer read about what runs, and what a
check skips."""

from rooms.runtime import verdicts
from rooms.runtime.rules import problem_at
from rooms.runtime.runnable import RunCheck


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
