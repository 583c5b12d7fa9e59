"""The runnable check (rooms/runnable.py) as proposals, their results and the cards use it.

A snippet is checked when it is proposed; a repository version's verdict is cached by version
(a pinned version never changes) and by the compiler's fingerprint, for its proposals and its
card. Neither kind is stored when it cannot run: SPEC §3, "the app must be able to run"; a card
whose approval makes a tab that only shows an error helps nobody, and the agent can fix its
files, or push a fixed commit and propose that version, in one more call.
"""

from functools import cache

from django.conf import settings
from django.core.cache import cache as django_cache

from osfoundry.errors import Invalid, Problem

from . import jsengine, libraries, rules, runnable
from .models import Proposal, RepositoryVersion
from .rules import ENTRY, problem_at, text_bytes
from .runnable import RunCheck

VERDICT_SECONDS = 24 * 3600
# The card lists this many problems; the proposal's refusal lists them all.
CARD_PROBLEMS = 3


@cache
def fingerprint() -> str:
    # A verdict depends on the compiler and on what the curated set has.
    return f"{jsengine.fingerprint()}-{libraries.fingerprint()}"


def check_snippet(files: dict[str, str]) -> RunCheck:
    """The verdict on a snippet the rules accepted, compiled as the Room will run it."""
    return runnable.check_app(files)


def check_version(version: RepositoryVersion) -> RunCheck:
    """The verdict on what the Room runs of a repository version: its src/ folder."""
    key = f"rooms:runcheck:{fingerprint()}:{version.pk}"
    if (cached := django_cache.get(key)) is not None:
        return RunCheck.from_dict(cached)
    files = rules.app_files(version)
    # The rules the Room page applies when it opens the tab (a 409 there), applied now.
    if why := rules.cannot_start(version, files):
        return RunCheck(problems=[problem_at(ENTRY, 1, 1, why)])
    check = runnable.check_app(files)
    if not check.is_transient:  # a timeout on a loaded machine must not stick to a version
        django_cache.set(key, check.as_dict(), VERDICT_SECONDS)
    return check


def run_problems_beside(rule_problems: list[Problem], files: dict[str, str]) -> list[Problem]:
    """What would keep the app from running, beside what the snippet rules already refused:
    the check runs on the files the rules accepted (a refused file is text the engine may not
    be given), so one answer lists every problem."""
    refused = {problem.field for problem in rule_problems}
    accepted = {path: text for path, text in files.items() if f"files.{path}" not in refused}
    if ENTRY not in accepted:
        return []  # the rules said the entry is missing or refused: nothing runs to check
    total = sum(text_bytes(text) for text in accepted.values())
    if len(accepted) > settings.SNIPPET_MAX_FILES or total > settings.SNIPPET_MAX_TOTAL_BYTES:
        return []  # refused for its size: an app that size is not worth compiling
    return check_snippet(accepted).problems


def refuse_unless_runnable(check: RunCheck) -> None:
    """Raise Invalid naming every problem that keeps the app from running, at once; the field
    is `files.<path>` of the first file that cannot run. (The snippet rules' problems were
    refused before, with the run problems beside them: run_problems_beside.)"""
    if problems := check.problems:
        raise Invalid("; ".join(problems), code="not_runnable", field=problems[0].field)


def proposal_check(proposal: Proposal) -> RunCheck:
    """The verdict on what a proposal runs, cached like a version's: its files never change."""
    if proposal.kind == Proposal.Kind.REPO:
        assert proposal.repository_version is not None  # a database constraint
        return check_version(proposal.repository_version)
    key = f"rooms:runcheck:{fingerprint()}:proposal:{proposal.pk}"
    if proposal.pk and (cached := django_cache.get(key)) is not None:
        return RunCheck.from_dict(cached)
    check = runnable.check_app(proposal.files)
    if proposal.pk and not check.is_transient:
        django_cache.set(key, check.as_dict(), VERDICT_SECONDS)
    return check


def proposal_warnings(proposal: Proposal, check: RunCheck | None, files_warning: int) -> list[str]:
    """What the proposer should know that did not stop the proposal; `check` is its verdict
    (None: find it). A card with more than `files_warning` files warns of its size."""
    check = check or proposal_check(proposal)
    warnings = []
    if proposal.kind == Proposal.Kind.SNIPPET and proposal.file_count > files_warning:
        warnings.append(
            f"{proposal.file_count} files: the owner's card warns that an app this size belongs "
            "in a repository. Push it to a repository of the Room's project "
            "(list_room_repositories gives its clone URL) and propose the pinned version: "
            "propose_room_repo_app, or "
            f"POST /api/v1/rooms/{proposal.room_id}/proposals/repo."
        )
    if check.unused:
        shown = ", ".join(check.unused[:10]) + (" …" if len(check.unused) > 10 else "")
        warnings.append(
            f"Not loaded from {ENTRY}, so they never run in the Room ({len(check.unused)}): "
            f"{shown}. Import what the app needs; leave out the rest."
        )
    if check.problems:  # only a proposal stored before the check, or under an older runtime
        warnings.append("This app cannot run in the Room: " + first_problems(check))
    return warnings


def summary(check: RunCheck) -> str:
    """What of a runnable app runs, in a sentence for its card."""
    loads = len(check.loaded) - 1
    text = f"{ENTRY} and the {loads} file{'s' if loads != 1 else ''} it loads."
    if check.unused:
        text += f" Never loaded, so never run: {', '.join(check.unused[:10])}"
        text += " …" if len(check.unused) > 10 else "."
    return text


def first_problems(check: RunCheck) -> str:
    shown = "; ".join(check.problems[:CARD_PROBLEMS])
    more = len(check.problems) - CARD_PROBLEMS
    return shown + (f"; and {more} more" if more > 0 else "")
