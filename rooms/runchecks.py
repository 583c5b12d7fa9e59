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

from osfoundry.errors import Invalid, Unavailable
from osfoundry.errors import Problem as ErrorProblem

from . import jsengine, libraries, runnable
from .models import Proposal, RepositoryVersion
from .registry.dependencies import read_dependencies
from .registry.lock import StoredIndex
from .runnable import ENTRY, PackageIndex, Problem, RunCheck
from .snippets import runnable_files, text_bytes

VERDICT_SECONDS = 24 * 3600
# The card lists this many problems; the proposal's refusal lists them all.
CARD_PROBLEMS = 3


@cache
def fingerprint() -> str:
    # A verdict depends on the compiler and on what the curated set has.
    return f"{jsengine.fingerprint()}-{libraries.fingerprint()}"


class Deferred:
    """The packages package.json names for the registry, before they are resolved: their
    imports are not held against the app while other problems are being listed."""

    def __init__(self, names):
        self.names = set(names)

    def owns(self, spec: str) -> bool:
        return libraries.package_name(spec) in self.names

    def problem(self, spec: str) -> str | None:
        return None


def check_snippet(files: dict[str, str], packages: PackageIndex | None = None) -> RunCheck:
    """The verdict on a snippet the rules accepted, compiled as the Room will run it, with the
    registry packages its package.json resolved to, if any."""
    return runnable.check_app(files, packages)


def check_version(version: RepositoryVersion, packages: PackageIndex | None = None) -> RunCheck:
    """The verdict on what the Room runs of a repository version: its src/ folder (cached by
    version, unless it is checked with registry packages: those are a proposal's)."""
    key = f"rooms:runcheck:{fingerprint()}:{version.pk}"
    if packages is None and (cached := django_cache.get(key)) is not None:
        return RunCheck.from_dict(cached)
    try:
        # The rules the Room page applies when it opens the tab (a 409 there), applied now.
        files = runnable_files(
            proposal=Proposal(kind=Proposal.Kind.REPO, repository_version=version)
        )
    except Unavailable as exc:
        return RunCheck(problems=[Problem(ENTRY, 1, 1, exc.message)])
    check = runnable.check_app(files, packages)
    # A timeout on a loaded machine must not stick to a version.
    if packages is None and not check.is_transient:
        django_cache.set(key, check.as_dict(), VERDICT_SECONDS)
    return check


def run_problems_beside(
    rule_problems: list[ErrorProblem], files: dict[str, str]
) -> list[ErrorProblem]:
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
    # The registry's packages are resolved only once the rest is right.
    deferred = Deferred(read_dependencies(accepted).registry)
    return [
        ErrorProblem(str(problem), field=f"files.{problem.path}")
        for problem in check_snippet(accepted, deferred).problems
    ]


def refuse_unless_runnable(check: RunCheck) -> None:
    """Raise Invalid naming every problem that keeps the app from running, at once; the field
    is `files.<path>` of the first file that cannot run. (The snippet rules' problems were
    refused before, with the run problems beside them: run_problems_beside.)"""
    if problems := check.problems:
        message = "; ".join(str(problem) for problem in problems)
        raise Invalid(message, code="not_runnable", field=f"files.{problems[0].path}")


def proposal_check(proposal: Proposal) -> RunCheck:
    """The verdict on what a proposal runs, cached like a version's: its files never change,
    nor do the registry packages it was proposed with (its lock)."""
    packages = StoredIndex(proposal.packages) if proposal.packages else None
    if proposal.kind == Proposal.Kind.REPO:
        assert proposal.repository_version is not None  # a database constraint
        if packages is None:
            return check_version(proposal.repository_version)
    key = f"rooms:runcheck:{fingerprint()}:proposal:{proposal.pk}"
    if proposal.pk and (cached := django_cache.get(key)) is not None:
        return RunCheck.from_dict(cached)
    if proposal.kind == Proposal.Kind.REPO:
        assert proposal.repository_version is not None
        check = check_version(proposal.repository_version, packages)
    else:
        check = runnable.check_app(proposal.files, packages)
    if proposal.pk and not check.is_transient:
        django_cache.set(key, check.as_dict(), VERDICT_SECONDS)
    return check


def proposal_warnings(proposal: Proposal, check: RunCheck | None, files_warning: int) -> list[str]:
    """What the proposer should know that did not stop the proposal; `check` is its verdict
    (None: find it). A card with more than `files_warning` files warns of its size."""
    check = check or proposal_check(proposal)
    warnings = list(read_dependencies(app_manifest(proposal)).warnings)
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
    shown = "; ".join(str(problem) for problem in check.problems[:CARD_PROBLEMS])
    more = len(check.problems) - CARD_PROBLEMS
    return shown + (f"; and {more} more" if more > 0 else "")


def app_manifest(proposal: Proposal) -> dict[str, str]:
    """The app's package.json, as {"package.json": text}, or {} (a repository version's is at
    its root)."""
    if proposal.kind == Proposal.Kind.SNIPPET:
        files = proposal.files
    else:
        assert proposal.repository_version is not None
        files = proposal.repository_version.files
    text = files.get("package.json")
    return {"package.json": text} if isinstance(text, str) else {}
