"""The verdict on whether an app runs in the Room: found once, stored, and read everywhere.

The run check (rooms/runtime/runnable.py) compiles the files the Room runs (rules.app_files) with
the frame's own compiler. Its verdict is stored on what it judges (rooms/verdictmodels.py): on a
snippet proposal when it is proposed, on a repository version within its push, in the check after
it (rooms/git/version_checks.py) or when first read. Each is stored with the fingerprint of what
found it (the compiler and its fact-finding script, the curated libraries, the rules); one found
under another fingerprint is found again when read, and stored again. A check cut short by a
deadline or the memory limit (a loaded machine) is never stored: the next reader checks again.

Everything else derives from the stored verdict and never compiles: the card's summary and
problems, the proposer's warnings, the packages an app brings (services.app_packages), the
`runnable` flag of list_room_repositories, what git prints after a push, an approved app's
build state. A replay of a proposal, or identical content collapsing onto its pending card,
reads the verdict stored with it.

SPEC §3, "the app must be able to run": a proposal whose verdict has problems is refused
(refuse_unless_runnable), every problem at once; the agent can fix its files, or push a fixed
commit and propose that version, in one more call.
"""

import hashlib
from functools import cache
from pathlib import Path

from django.conf import settings

from osfoundry.errors import Invalid, Problem

from ..models import Proposal, RepositoryVersion
from ..registry.dependencies import read_dependencies
from ..registry.lock import StoredIndex
from . import jsengine, libraries, rules, runnable
from .rules import ENTRY
from .runnable import PackageIndex, RunCheck
from .snippet_rules import file_problems

# The card lists this many problems; the proposal's refusal lists them all.
CARD_PROBLEMS = 3


@cache
def fingerprint() -> str:
    """What a verdict depends on besides the files: the compiler and runnable.js, the curated
    library set, and the rules as this process applies them."""
    rules_digest = hashlib.sha256()
    for module in (rules, runnable):
        rules_digest.update(Path(str(module.__file__)).read_bytes())
    return f"{jsengine.fingerprint()}-{libraries.fingerprint()}-{rules_digest.hexdigest()[:16]}"


# ---------------------------------------------------------------------------------------------
# Finding and storing


class Deferred:
    """The packages a package.json names for the registry, before any proposal resolved them
    (a pushed version, the snippet rules' refusal): their imports are not held against the
    app; proposing it resolves and checks them."""

    def __init__(self, names):
        self.names = set(names)

    def owns(self, spec: str) -> bool:
        return libraries.package_name(spec) in self.names

    def problem(self, spec: str) -> str | None:
        return None


def check_files(files: dict[str, str], packages: PackageIndex | None = None) -> RunCheck:
    """The verdict on `files` as the Room will run them, found now: for a snippet before it is
    stored (its verdict is stored with it: stored_fields), with the registry packages its
    package.json resolved to, if any."""
    return runnable.check_app(files, packages)


def of(subject: Proposal | RepositoryVersion) -> RunCheck:
    """The verdict on what the Room runs of a proposal or a version: the one stored, or (none
    stored, or stored under another fingerprint) found now and stored. A proposal of a
    repository version has its version's, unless it brings registry packages: then it has its
    own, found with them (its lock)."""
    packages: PackageIndex | None = None
    if isinstance(subject, Proposal) and subject.packages:
        packages = StoredIndex(subject.packages)
    elif isinstance(subject, Proposal) and subject.kind == Proposal.Kind.REPO:
        assert subject.repository_version is not None  # a database constraint
        subject = subject.repository_version
    if isinstance(subject, RepositoryVersion):
        packages = Deferred(read_dependencies(rules.manifest_of(subject)).registry)
    if (check := stored(subject)) is not None:
        return check
    files = rules.app_files(subject)
    if why := rules.cannot_start(subject, files):
        check = RunCheck(problems=[rules.problem_at(ENTRY, 1, 1, why)])
    else:
        check = check_files(files, packages)
    if not check.is_transient:  # a timeout on a loaded machine must not stick
        fields = stored_fields(check)
        for name, value in fields.items():
            setattr(subject, name, value)
        # These fields alone: what they judge never changes, and two readers store the same.
        type(subject).objects.filter(pk=subject.pk).update(**fields)
    return check


def of_version_with(version: RepositoryVersion, packages: PackageIndex) -> RunCheck:
    """The verdict on `version` with the registry packages a proposal of it resolved: that
    proposal's, stored with it (stored_fields), never on the version."""
    files = rules.app_files(version)
    if why := rules.cannot_start(version, files):
        return RunCheck(problems=[rules.problem_at(ENTRY, 1, 1, why)])
    return check_files(files, packages)


def stored(subject: Proposal | RepositoryVersion) -> RunCheck | None:
    """The verdict stored on `subject` under the current fingerprint; None: there is none."""
    if subject.run_verdict is None or subject.run_verdict_fingerprint != fingerprint():
        return None
    return RunCheck.from_dict(subject.run_verdict)


def stored_fields(check: RunCheck) -> dict:
    """The fields that store `check` on what it judges (a proposal: as it is created)."""
    assert not check.is_transient
    return {"run_verdict": check.as_dict(), "run_verdict_fingerprint": fingerprint()}


# ---------------------------------------------------------------------------------------------
# Proposing


def run_problems_beside(rule_problems: list[Problem], files: dict[str, str]) -> list[Problem]:
    """What would keep the app from running, beside what the snippet rules already refused:
    the check runs on the files the rules accepted (a refused file is text the engine may not
    be given), so one answer lists every problem."""
    refused = {problem.field for problem in rule_problems}
    accepted = {path: text for path, text in files.items() if f"files.{path}" not in refused}
    if ENTRY not in accepted:
        return []  # the rules said the entry is missing or refused: nothing runs to check
    total = sum(rules.text_bytes(text) for text in accepted.values())
    if len(accepted) > settings.SNIPPET_MAX_FILES or total > settings.SNIPPET_MAX_TOTAL_BYTES:
        return []  # refused for its size: an app that size is not worth compiling
    # The registry's packages are resolved only once the rest is right.
    return check_files(accepted, Deferred(read_dependencies(accepted).registry)).problems


def refuse_unless_runnable(check: RunCheck) -> None:
    """Raise Invalid naming every problem that keeps the app from running, at once; the field
    is `files.<path>` of the first file that cannot run. (The snippet rules' problems were
    refused before, with the run problems beside them: run_problems_beside.)"""
    if problems := check.problems:
        raise Invalid("; ".join(problems), code="not_runnable", field=problems[0].field)


# ---------------------------------------------------------------------------------------------
# What a verdict says, in words


def warnings(check: RunCheck) -> list[str]:
    """What the proposer should know of the verdict on its app that did not stop it."""
    found = []
    if check.unused:
        shown = ", ".join(check.unused[:10]) + (" …" if len(check.unused) > 10 else "")
        found.append(
            f"Not loaded from {ENTRY}, so they never run in the Room ({len(check.unused)}): "
            f"{shown}. Import what the app needs; leave out the rest."
        )
    if check.problems:  # only a proposal stored before the check, or under an older runtime
        found.append(cannot_run(check))
    return found


def summary(check: RunCheck) -> str:
    """What of an app runs, in a sentence for its card and its tab's build state."""
    if check.problems:  # only a proposal stored before the check, or under an older runtime
        return cannot_run(check)
    loads = len(check.loaded) - 1
    text = f"{ENTRY} and the {loads} file{'s' if loads != 1 else ''} it loads."
    if check.unused:
        text += f" Never loaded, so never run: {', '.join(check.unused[:10])}"
        text += " …" if len(check.unused) > 10 else "."
    return text


def cannot_run(check: RunCheck) -> str:
    return "This app cannot run in the Room: " + first_problems(check)


def first_problems(check: RunCheck) -> str:
    shown = "; ".join(check.problems[:CARD_PROBLEMS])
    more = len(check.problems) - CARD_PROBLEMS
    return shown + (f"; and {more} more" if more > 0 else "")


# ---------------------------------------------------------------------------------------------
# Repository versions: what a push, list_room_repositories and the checking thread read


def rule_problems(version: RepositoryVersion) -> list[str]:
    """The snippet rules on the files the Room runs of `version`, applied once and stored (the
    files never change). Quick enough to answer within a push (~0.07 s for 2 MB), and named
    nowhere else: proposing a version asks only whether it runs (`of`)."""
    if version.rule_problems is None:
        found = [
            str(problem)
            for path, text in rules.app_files(version).items()
            for problem in file_problems(path, text)
        ]
        version.rule_problems = found
        RepositoryVersion.objects.filter(pk=version.pk).update(rule_problems=found)
    return version.rule_problems


def version_problems(version: RepositoryVersion) -> list[str]:
    """What keeps `version` from running in the Room, as its pusher reads it ([]: it runs): the
    problems the snippet rules find, else those of its verdict."""
    return rule_problems(version) or list(of(version).problems)


def runs(version: RepositoryVersion) -> bool:
    """Whether `version` runs in the Room; a version not checked yet (its push was answered
    first, and the check after it has not finished or was lost with its process) is checked
    now: a reader never sees a verdict nobody found."""
    return not version_problems(version)


def known(version: RepositoryVersion) -> bool | None:
    """Whether `version` runs, from what is stored alone (nothing is checked here); None: not
    checked yet, or under another fingerprint."""
    if version.rule_problems is None:
        return None
    if version.rule_problems:
        return False
    check = stored(version)
    return None if check is None else check.runs
