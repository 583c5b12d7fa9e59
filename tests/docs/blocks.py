"""The commands of README.md and docs/*.md: each fenced block of shell or Python, with the marker
that says how the suite runs it.

A marker is the last non-blank line before the block's opening fence:

    <!-- docs-test: demo -->                  run against the demo `make run` serves
                                              (tests/docs/test_newcomer.py)
    <!-- docs-test: block NAME -->            run by the test that asks for it by name:
                                              blocks.named("NAME")
    <!-- docs-test: covered-by PATH[::NAME] -->  run by an existing test (or CI script) that
                                              holds each command's subcommands and options
    <!-- docs-test: dry-run -->               commands that take hours or install things:
                                              checked without doing their work (make -n,
                                              bash -n, --help)

tests/docs/test_docs.py fails for a block without a marker or with one it does not know.
"""

import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LANGUAGES = {"sh", "bash", "console", "shell", "python"}
KINDS = {"demo", "block", "covered-by", "dry-run"}
FENCE = re.compile(r"^(`{3,})\s*([\w+-]*)\s*$")
MARKER = re.compile(r"^<!--\s*docs-test:\s*(.*?)\s*-->$")


@dataclass(frozen=True)
class Block:
    path: Path
    line: int  # of the opening fence, counted from 1
    language: str
    marker: str  # the marker's text after "docs-test:", "" without one
    text: str

    @property
    def kind(self) -> str:
        return self.marker.split()[0] if self.marker else ""

    @property
    def arguments(self) -> list[str]:
        return self.marker.split()[1:]

    @property
    def where(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.line}"

    def commands(self) -> list[list[str]]:
        """The words of each command of a shell block, as bash reads them: a newline outside
        quotes ends a command unless escaped, a `#` starting a word starts a comment."""
        commands, current, word, quote, has_word = [], [], [], "", False
        text, index = self.text, 0
        while index < len(text):
            char = text[index]
            if quote:
                if char == quote:
                    quote = ""
                elif char == "\\" and quote == '"' and index + 1 < len(text):
                    index += 1
                    word.append(text[index])
                else:
                    word.append(char)
            elif char in "'\"":
                quote, has_word = char, True
            elif char == "\\" and index + 1 < len(text):
                index += 1
                if text[index] != "\n":
                    word.append(text[index])
                    has_word = True
            elif char == "#" and not has_word:
                while index + 1 < len(text) and text[index + 1] != "\n":
                    index += 1
            elif char.isspace():
                if has_word:
                    current.append("".join(word))
                    word, has_word = [], False
                if char == "\n" and current:
                    commands.append(current)
                    current = []
            else:
                word.append(char)
                has_word = True
            index += 1
        if has_word:
            current.append("".join(word))
        if current:
            commands.append(current)
        return commands


def documents() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def blocks_in(path: Path) -> list[Block]:
    found: list[Block] = []
    lines = path.read_text().splitlines()
    index = 0
    while index < len(lines):
        opening = FENCE.match(lines[index])
        if not opening:
            index += 1
            continue
        fence, language = opening.groups()
        end = index + 1
        while end < len(lines) and lines[end].strip() != fence:
            end += 1
        previous = next((line.strip() for line in reversed(lines[:index]) if line.strip()), "")
        marker = MARKER.match(previous)
        if language in LANGUAGES:
            found.append(
                Block(
                    path=path,
                    line=index + 1,
                    language=language,
                    marker=marker.group(1) if marker else "",
                    text="\n".join(lines[index + 1 : end]) + "\n",
                )
            )
        index = end + 1
    return found


def all_blocks() -> list[Block]:
    return [block for path in documents() for block in blocks_in(path)]


def named(name: str) -> Block:
    """The one block marked `block NAME`."""
    matches = [b for b in all_blocks() if b.kind == "block" and b.arguments == [name]]
    assert len(matches) == 1, f"expected one block marked 'docs-test: block {name}', {matches}"
    return matches[0]


def demo_text(block: Block, *, origin: str, values: dict[str, str]) -> str:
    """The block as a reader pastes it once `make run` printed its values: the placeholders
    (`osf_...`, `<room_id>`, ...) replaced, and the port the demo serves on instead of 8000."""
    text = block.text.replace("http://127.0.0.1:8000", origin)
    text = text.replace("@127.0.0.1:8000", "@" + origin.removeprefix("http://"))
    for placeholder, value in values.items():
        text = text.replace(placeholder, value)
    leftover = re.findall(r"osf_\.\.\.|<[a-z_]+_id>|127\.0\.0\.1:8000", text)
    assert not leftover, f"{block.where}: placeholders the demo cannot fill: {leftover}"
    return text
