"""rooms/runchecks.py's texts: what a card and a proposer read about what runs, and what a
check skips."""

from rooms import runchecks
from rooms.models import Proposal
from rooms.runnable import Problem, RunCheck


def problems(n: int) -> list[Problem]:
    return [Problem(f"src/F{i}.tsx", i, 1, "bad") for i in range(1, n + 1)]


def test_the_card_names_three_problems_and_counts_the_rest():
    check = RunCheck(problems=problems(5))
    assert runchecks.first_problems(check) == (
        "src/F1.tsx:1:1: bad; src/F2.tsx:2:1: bad; src/F3.tsx:3:1: bad; and 2 more"
    )
    assert runchecks.first_problems(RunCheck(problems=problems(3))).endswith("3:1: bad")


def test_a_stored_proposal_that_cannot_run_warns_its_proposer(room, agent):
    proposal = Proposal(room=room, kind=Proposal.Kind.SNIPPET, files={"src/App.tsx": "x"})
    warnings = runchecks.proposal_warnings(proposal, RunCheck(problems=problems(4)), 20)
    assert warnings == [
        "This app cannot run in the Room: src/F1.tsx:1:1: bad; src/F2.tsx:2:1: bad; "
        "src/F3.tsx:3:1: bad; and 1 more"
    ]


def test_the_summary_lists_ten_unused_files_then_an_ellipsis():
    loaded = ["src/App.tsx", "src/a.ts"]
    few = RunCheck(loaded=loaded, unused=["src/x.ts"])
    assert runchecks.summary(few) == (
        "src/App.tsx and the 1 file it loads. Never loaded, so never run: src/x.ts."
    )
    many = RunCheck(loaded=loaded[:1], unused=[f"src/u{i:02}.ts" for i in range(12)])
    text = runchecks.summary(many)
    assert text.startswith("src/App.tsx and the 0 files it loads. Never loaded, so never run: ")
    assert text.endswith("src/u09.ts …") and "src/u10.ts" not in text


def test_a_snippet_over_the_size_limits_is_not_compiled(settings, monkeypatch):
    # The snippet rules refuse it for its size; the engine is not asked what else is wrong.
    settings.SNIPPET_MAX_FILES = 2
    settings.SNIPPET_MAX_TOTAL_BYTES = 10
    failing = RunCheck(problems=[Problem("src/App.tsx", 1, 1, "does not compile")])
    monkeypatch.setattr(runchecks.runnable, "check_app", lambda files, packages=None: failing)
    files = {"src/App.tsx": "a", "src/b.ts": "b", "src/c.ts": "c"}
    assert runchecks.run_problems_beside([], files) == []
    assert runchecks.run_problems_beside([], {"src/App.tsx": "a" * 11}) == []
    (problem,) = runchecks.run_problems_beside([], {"src/App.tsx": "a" * 10, "src/b.ts": ""})
    assert (problem, problem.field) == ("src/App.tsx:1:1: does not compile", "files.src/App.tsx")
