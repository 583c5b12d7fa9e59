"""The character rules of a snippet's files: what is refused, and what the card must reveal.

Pure functions of text. Refused everywhere (osfoundry/text.py says why): bidirectional controls,
control characters other than tab/LF/CR, line separators, lone surrogates, noncharacters.
Accepted, and shown on the card as visible markers (`⟨U+200B⟩`): the invisible characters a
reader would otherwise miss (`is_hidden`), and words that mix scripts
(rooms/content/unicode_scripts.py).

Lines count from 1 and end at LF, CRLF or CR, as in JavaScript and on the card; columns count
from 1 in characters (code points). After these rules `str.splitlines()` agrees with both.
"""

import re
import unicodedata
from collections import Counter
from dataclasses import dataclass, field

import regex

from osfoundry.errors import Problem
from osfoundry.text import (
    FILE_CONTROLS,
    REFUSED,
    REFUSED_IN_FILES,
    Lines,
    char_name,
    codepoint,
    describe,
    file_character_problem,
    refused_characters,
)

from .unicode_scripts import MixedWord, mixed_script_words

# Refusals listed per file before the rest are counted: a binary file would list thousands.
MAX_REPORTED_PER_FILE = 10

# Invisible (or blank) characters that are allowed but revealed: every format character (Cf:
# zero-width space and joiners, word joiner, invisible operators, soft hyphen, bidi marks, BOM,
# tags...), plus the invisible ones of other categories: combining grapheme joiner, the Hangul
# fillers (valid in JavaScript identifiers, hence "invisible variable" backdoors), Khmer
# inherent vowels, Mongolian variation selectors, the blank Braille pattern, variation selectors.
HIDDEN_CLASS = (
    r"\p{Cf}\u034F\u115F\u1160\u3164\uFFA0\u17B4\u17B5\u180B-\u180D\u180F\u2800"
    r"\uFE00-\uFE0F\U000E0100-\U000E01EF"
)
# Where joiners, variation selectors and tags belong (Unicode TS #51): an emoji ZWJ sequence, an
# emoji presentation selector after an emoji, a flag tag sequence. These are not revealed.
EMOJI_SEQUENCE = (
    r"\p{Extended_Pictographic}[\p{Emoji_Modifier}\uFE0F]?"
    r"(?:\u200D\p{Extended_Pictographic}[\p{Emoji_Modifier}\uFE0F]?)+"
    r"|\U0001F3F4[\U000E0020-\U000E007E]+\U000E007F"
    r"|\p{Emoji}[\uFE0E\uFE0F]"
)
_SCAN = regex.compile(
    f"(?P<emoji>{EMOJI_SEQUENCE})|(?P<refused>{REFUSED_IN_FILES.pattern})|(?P<hidden>[{HIDDEN_CLASS}])"
)
_HIDDEN = regex.compile(f"[{HIDDEN_CLASS}]")
_CANDIDATE = re.compile(r"[^\t\n\r\x20-\x7e]")
BOM = "\ufeff"


@dataclass(frozen=True)
class Mark:
    """A character the card shows as a visible marker instead of itself."""

    index: int
    char: str
    is_refused: bool  # refused in a proposal; only a repository file can still carry one

    @property
    def label(self) -> str:
        return f"⟨{codepoint(self.char)}⟩"

    @property
    def name(self) -> str:
        return char_name(self.char)


@dataclass(frozen=True)
class Reveal:
    """What the card reveals in one file."""

    marks: list[Mark] = field(default_factory=list)
    words: list[MixedWord] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.marks or self.words)

    @property
    def hidden(self) -> list[tuple[str, str, int]]:
        """(code point, name, count) of each distinct hidden character, most frequent first."""
        return tally(mark.char for mark in self.marks if not mark.is_refused)

    @property
    def refused(self) -> list[tuple[str, str, int]]:
        """The same for characters a proposal may not carry (only a repository file has them)."""
        return tally(mark.char for mark in self.marks if mark.is_refused)

    @property
    def distinct_words(self) -> list[MixedWord]:
        """The mixed-script words, each once (the markers stand at every occurrence)."""
        return list({word.word: word for word in reversed(self.words)}.values())[::-1]

    @property
    def hidden_count(self) -> int:
        return sum(1 for mark in self.marks if not mark.is_refused)

    @property
    def refused_count(self) -> int:
        return sum(1 for mark in self.marks if mark.is_refused)


def tally(chars) -> list[tuple[str, str, int]]:
    return [(codepoint(ch), char_name(ch), n) for ch, n in Counter(chars).most_common()]


def reveal(text: str) -> Reveal:
    """The marks and mixed-script words of `text`, in order, never overlapping."""
    marks = []
    end = 0
    # Most code is ASCII: try the full scan only where a character is not printable ASCII (or
    # one before it, for a keycap emoji such as 1️⃣, whose first character is an ASCII digit).
    for candidate in _CANDIDATE.finditer(text):
        start = candidate.start()
        if start < end:
            continue
        keycap = start > 0 and text[start - 1] in "0123456789#*"
        match = (keycap and _SCAN.match(text, start - 1)) or _SCAN.match(text, start)
        if not match:
            continue
        end = match.end()
        kind = match.lastgroup
        if kind == "emoji" or (match.start() == 0 and match.group() == BOM):
            continue
        marks.append(Mark(match.start(), match.group(), is_refused=kind == "refused"))
    return Reveal(marks, mixed_script_words(text))


def is_hidden(ch: str) -> bool:
    """An invisible character a path may not carry (a file may, revealed)."""
    return bool(_HIDDEN.fullmatch(ch))


def content_problems(path: str, text: str, *, field_name: str) -> list[Problem]:
    """Every refused character in the file at `path`, as `path:line:col: what; the fix`."""
    found = list(refused_characters(text, allowed=FILE_CONTROLS))
    if not found:
        return []
    lines = Lines(text)
    problems: list[Problem] = []
    for index, ch in found[:MAX_REPORTED_PER_FILE]:
        line, col = lines.position(index)
        problems.append(Problem(file_character_problem(path, line, col, ch), field=field_name))
    if len(found) > MAX_REPORTED_PER_FILE or "\x00" in text:
        rest = len(found) - min(len(found), MAX_REPORTED_PER_FILE)
        more = f"{rest} more such characters; " if rest else ""
        problems.append(
            Problem(
                f"{path}: {more}this looks like a binary file, and a snippet carries text files "
                "only: drop it, or put the app in a repository and use propose_room_repo_app",
                field=field_name,
            )
        )
    return problems


def path_character_problem(path: str) -> str | None:
    """Why a character of `path` makes it unsafe (refused or invisible), with its column."""
    for index, ch in enumerate(path):
        if REFUSED.match(ch) or is_hidden(ch) or unicodedata.category(ch) in ("Zl", "Zp"):
            return (
                f"column {index + 1}: {describe_any(ch)} in a path; name the file with "
                "visible characters only"
            )
    return None


def describe_any(ch: str) -> str:
    if REFUSED.match(ch):
        return describe(ch)
    return f"invisible character {codepoint(ch)} ({char_name(ch)})"
