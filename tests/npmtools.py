"""The Node tools the tests run, each pinned in tools/<name> (package.json and its lock) and
installed on first use into its git-ignored node_modules with `npm ci --ignore-scripts`, again
whenever the lock is newer than the last install. Without npm, or when the install fails, the
tests that need one skip, except in CI."""

import os
import shutil
import subprocess
from pathlib import Path

import pytest


def unavailable(reason: str):
    if os.environ.get("CI"):
        pytest.fail(f"{reason} (required in CI)")
    pytest.skip(reason)


def installed(tools: Path, what: str, *, timeout: float) -> Path:
    """`tools`' node_modules, installed first unless the last install is newer than the lock;
    `what` names the tool in the reason for skipping without npm."""
    node_modules = tools / "node_modules"
    marker = node_modules / ".installed"
    lock = tools / "package-lock.json"
    if marker.exists() and marker.stat().st_mtime >= lock.stat().st_mtime:
        return node_modules
    npm = shutil.which("npm")
    if npm is None:
        unavailable(f"npm is not installed, so {what} cannot be")
    command = [npm, "ci", "--ignore-scripts", "--no-audit", "--no-fund", "--loglevel=error"]
    try:
        done = subprocess.run(command, cwd=tools, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        unavailable(f"npm ci in {tools} took over {timeout} s")
    if done.returncode != 0:
        unavailable(f"npm ci in {tools} failed: {done.stderr[-2000:]}")
    marker.touch()
    return node_modules
