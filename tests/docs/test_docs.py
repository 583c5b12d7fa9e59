"""README.md and docs/ stay true and runnable: each command block says how the suite runs it
(tests/docs/blocks.py), the README stays short, every relative link lands on a file and heading
that exist, and the configuration reference names every variable the settings read."""

import ast
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.docs import blocks
from tests.docs.blocks import ROOT

README_MAX_LINES = 200
ALL_BLOCKS = blocks.all_blocks()


def test_the_readme_stays_within_200_lines():
    lines = (ROOT / "README.md").read_text().splitlines()
    assert len(lines) <= README_MAX_LINES, f"README.md has {len(lines)} lines: move some to docs/"


def test_the_readme_gives_the_two_commands_and_ci_runs_its_test_command():
    quick_start = blocks.named("quick-start")
    assert quick_start.path == ROOT / "README.md"
    assert quick_start.commands() == [["make", "run"], ["make", "test"]]
    ci = (ROOT / ".ci" / "run").read_text().splitlines()
    assert "make test" in [line.strip() for line in ci]


def test_every_command_block_says_how_the_suite_runs_it():
    assert len(ALL_BLOCKS) >= 10
    wrong = []
    for block in ALL_BLOCKS:
        if block.kind not in blocks.KINDS:
            wrong.append(f"{block.where}: marker {block.marker!r} (known: {sorted(blocks.KINDS)})")
        elif block.kind in ("demo", "dry-run") and block.arguments:
            wrong.append(f"{block.where}: '{block.kind}' takes no arguments")
        elif block.kind == "block" and len(block.arguments) != 1:
            wrong.append(f"{block.where}: 'block' takes one name")
        elif block.kind == "covered-by" and not block.arguments:
            wrong.append(f"{block.where}: 'covered-by' names a test or script")
    assert not wrong, "\n".join(wrong)


def test_each_named_block_is_asked_for_by_a_test_and_names_are_unique():
    names = [block.arguments[0] for block in ALL_BLOCKS if block.kind == "block"]
    assert len(names) == len(set(names)), names
    tests = "\n".join(
        path.read_text()
        for path in (ROOT / "tests").rglob("test_*.py")
        if path.parent != ROOT / "tests" / "docs" or path.name != "test_docs.py"
    )
    for name in names:
        assert f'named("{name}")' in tests, f"no test runs blocks.named({name!r})"


def words_in(path: Path, function: str | None) -> set[str]:
    """The words a test module (its string literals) or a script (its text) holds."""
    text = path.read_text()
    if path.suffix != ".py":
        return set(re.split(r"[\s\"'()=;]+", text))
    tree = ast.parse(text)
    if function:
        defined = {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}
        assert function in defined, f"{path.relative_to(ROOT)} defines no {function}()"
    literals = [n.value for n in ast.walk(tree) if isinstance(n, ast.Constant)]
    return {word for value in literals if isinstance(value, str) for word in value.split()}


def key_words(command: list[str]) -> list[str]:
    """A command's subcommands and options: what a test must pass to run the same command (the
    program's path, URLs, placeholders and values aside)."""
    return [word for word in command[1:] if re.fullmatch(r"-{0,2}[a-z][a-z0-9_/-]*", word)]


@pytest.mark.parametrize(
    "block",
    [b for b in ALL_BLOCKS if b.kind == "covered-by"],
    ids=lambda b: b.where,
)
def test_a_covered_block_names_a_test_that_runs_each_of_its_commands(block):
    held: set[str] = set()
    for target in block.arguments:
        path, _, function = target.partition("::")
        assert (ROOT / path).is_file(), f"{block.where}: {path} does not exist"
        held |= words_in(ROOT / path, function or None)
    for command in block.commands():
        missing = [word for word in key_words(command) if word not in held]
        assert not missing, f"{block.where}: {block.arguments} never passes {missing}"


def dry_run(command: list[str]) -> subprocess.CompletedProcess:
    """The command checked without doing its work: make's plan, bash's parse, a script's help."""
    while command and re.fullmatch(r"[A-Z_]+=\S*", command[0]):
        command = command[1:]  # VAR=value before the command
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MAKE", "MFLAGS"))}
    run = {"cwd": ROOT, "env": env, "capture_output": True, "text": True, "timeout": 120}
    program = command[0]
    if program == "make":
        return subprocess.run(["make", "-n", *command[1:]], **run)
    if program.endswith("/python") and command[1].endswith(".py"):
        done = subprocess.run([sys.executable, command[1], "--help"], **run)
        assert "usage:" in done.stdout, done.stdout + done.stderr
        for option in (word for word in command[2:] if word.startswith("--")):
            assert option in done.stdout, f"{command[1]} has no {option}:\n{done.stdout}"
        return done
    script = ROOT / program
    assert script.is_file() and script.read_text().startswith("#!/usr/bin/env bash"), program
    return subprocess.run(["bash", "-n", str(script)], **run)


@pytest.mark.parametrize(
    "block",
    [b for b in ALL_BLOCKS if b.kind == "dry-run"],
    ids=lambda b: b.where,
)
def test_a_dry_run_block_names_targets_scripts_and_options_that_exist(block):
    for command in block.commands():
        done = dry_run(command)
        assert done.returncode == 0, f"{block.where}: {command}\n{done.stdout}\n{done.stderr}"


def slug(heading: str) -> str:
    """The anchor GitHub gives a heading."""
    text = re.sub(r"[`*_]|<[^>]+>", "", heading.strip().lower())
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def prose(path: Path) -> str:
    """The file without its fenced blocks and inline code: where links and headings live."""
    text = re.sub(r"^(`{3,}).*?^\1\s*$", "", path.read_text(), flags=re.MULTILINE | re.DOTALL)
    return re.sub(r"`[^`\n]*`", "", text)


def anchors(path: Path) -> set[str]:
    return {slug(h) for h in re.findall(r"^#{1,6} (.+)$", prose(path), re.MULTILINE)}


def test_every_relative_link_lands_on_a_file_and_heading_that_exist():
    broken = []
    for document in blocks.documents():
        for target in re.findall(r"\]\(([^)\s]+)\)", prose(document)):
            if re.match(r"[a-z]+:", target):
                continue  # https:, mailto:
            path, _, anchor = target.partition("#")
            resolved = (document.parent / path).resolve() if path else document
            where = f"{document.relative_to(ROOT)}: {target}"
            if not resolved.exists():
                broken.append(f"{where}: no such file")
            elif anchor and (resolved.suffix != ".md" or anchor not in anchors(resolved)):
                broken.append(f"{where}: no heading #{anchor} in {resolved.name}")
    assert not broken, "\n".join(broken)


def test_the_readme_shows_the_screenshots_the_suite_takes():
    readme = (ROOT / "README.md").read_text()
    for name in ("inbox", "card", "room"):
        assert f"](docs/screenshots/{name}.png)" in readme
        png = ROOT / "docs" / "screenshots" / f"{name}.png"
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def variables_read() -> set[str]:
    """Every environment variable the settings read, and those `make run` takes."""
    names = set()
    for module in ("settings.py", "environment.py"):
        text = (ROOT / "osfoundry" / module).read_text()
        names |= set(re.findall(r"(?:env_\w+|environ\.get|getenv)\(\s*\"([A-Z][A-Z0-9_]*)\"", text))
    makefile = (ROOT / "Makefile").read_text()
    names |= {name for name in ("PORT", "WORKERS") if re.search(rf"^{name} \?=", makefile, re.M)}
    return names


def test_the_configuration_reference_and_env_example_name_every_variable():
    names = variables_read()
    assert {"DATABASE_URL", "SECRET_KEY", "ALLOWED_HOSTS", "PORT"} <= names
    table = (ROOT / "docs" / "configuration.md").read_text()
    documented = set(re.findall(r"`([A-Z][A-Z0-9_]+)`", table))
    example = set(re.findall(r"^([A-Z][A-Z0-9_]*)=", (ROOT / ".env.example").read_text(), re.M))
    assert names - documented == set(), "missing from docs/configuration.md"
    assert names - example == set(), "missing from .env.example"
    assert example - names == set(), ".env.example names variables nothing reads"


def test_the_curated_library_table_names_what_the_manifest_serves():
    manifest = json.loads((ROOT / "static" / "vendor" / "libraries.json").read_text())
    table = (ROOT / "docs" / "runtime.md").read_text()
    rows = {
        name: (version, licence)
        for name, version, licence in re.findall(r"^\| (\S+) \| (\S+) \| (\S+) \|", table, re.M)
        if name not in ("package", "---")
    }
    served = {
        name: (package["version"], package["license"])
        for name, package in manifest["packages"].items()
    }
    assert rows == served
