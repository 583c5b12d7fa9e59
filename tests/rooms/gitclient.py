"""Debian's `git` against a live server: helpers for the git server's tests and bench/git.py."""

import os
import subprocess
import time
from pathlib import Path
from urllib.parse import quote, urlsplit


def git_env(home: Path) -> dict[str, str]:
    home.mkdir(parents=True, exist_ok=True)
    return {
        "PATH": os.environ["PATH"],
        "HOME": str(home),
        "GIT_TERMINAL_PROMPT": "0",
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_AUTHOR_NAME": "Agent Smith",
        "GIT_AUTHOR_EMAIL": "agent@example.com",
        "GIT_COMMITTER_NAME": "Agent Smith",
        "GIT_COMMITTER_EMAIL": "agent@example.com",
        "LC_ALL": "C",
    }


def git(cwd: Path, *args: str, home: Path, check: bool = True) -> subprocess.CompletedProcess:
    result = subprocess.run(
        ["git", *args], cwd=cwd, env=git_env(home), capture_output=True, text=True, timeout=120
    )
    if check and result.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} failed:\n{result.stdout}\n{result.stderr}")
    return result


def clone_url(base_url: str, project: str, repository: str, token: str | None) -> str:
    parts = urlsplit(base_url)
    auth = f"agent:{quote(token, safe='')}@" if token else ""
    return f"{parts.scheme}://{auth}{parts.netloc}/git/{quote(project)}/{repository}.git"


def write_files(root: Path, files: dict[str, str]) -> None:
    for path, text in files.items():
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)


def wait_for_verdict(version, timeout: float = 30) -> bool:
    """The verdict the check after a push stores on `version` (read from the database only:
    never checked here)."""
    from rooms.runtime import verdicts

    deadline = time.monotonic() + timeout
    while True:
        version.refresh_from_db(fields=["rule_problems", "run_verdict", "run_verdict_fingerprint"])
        if (runs := verdicts.known(version)) is not None:
            return runs
        if time.monotonic() > deadline:
            raise AssertionError(f"version {version.pk} was not checked within {timeout} s")
        time.sleep(0.05)
