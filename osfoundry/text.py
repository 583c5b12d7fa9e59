"""Characters no text we store may carry, named so a caller can fix its request in one retry.

What the owner reads must be what runs (SPEC §3), so these are refused wherever they arrive:
file contents, paths, names and idempotency keys alike, and message sends' keys:

- the nine bidirectional controls (U+202A–U+202E, U+2066–U+2069): they reorder what a reader
  sees without changing what a compiler reads (Trojan Source, CVE-2021-42574);
- C0 controls, DEL and C1 controls: invisible, or shown as blank boxes. A file may keep tab, LF
  and CR. Form feed and vertical tab are refused too: Python's `str.splitlines()` (and with it
  every tool that counts lines that way) breaks a line there, JavaScript does not, so the card's
  line numbers and the compiler's would disagree, and neither has a use in a small app;
- U+2028/U+2029 (line and paragraph separator): they end a line, and a `//` comment, in
  JavaScript but not on the card or in most editors;
- lone surrogates: not characters; no UTF-8 encoder (and so no page or database) takes them;
- the 66 noncharacters (U+FDD0–U+FDEF and the last two code points of every plane).

Positions are 1-based and counted in characters (Unicode code points), not bytes and not UTF-16
units: `"é😀x"` has `x` at column 3.
"""

import bisect
import re
import unicodedata
from collections.abc import Iterator

from .errors import Problem

BIDI_CONTROLS = frozenset(chr(cp) for cp in [*range(0x202A, 0x202F), *range(0x2066, 0x206A)])
LINE_SEPARATORS = frozenset("\u2028\u2029")
FILE_CONTROLS = "\t\n\r"  # the only control characters a file may carry

NONCHARACTERS = frozenset(
    [chr(cp) for cp in range(0xFDD0, 0xFDF0)]
    + [chr(plane << 16 | last) for plane in range(17) for last in (0xFFFE, 0xFFFF)]
)
_REFUSED_BEYOND_C0 = "\x7f-\x9f\u202a-\u202e\u2066-\u2069\u2028\u2029\ud800-\udfff" + "".join(
    sorted(NONCHARACTERS)
)
REFUSED = re.compile(f"[\x00-\x1f{_REFUSED_BEYOND_C0}]")
# The same, less tab, LF and CR: what a file may not carry.
REFUSED_IN_FILES = re.compile(f"[\x00-\x08\x0b\x0c\x0e-\x1f{_REFUSED_BEYOND_C0}]")

# Refused characters named one by one in a text before the rest are counted: a pasted binary
# file would list thousands.
MAX_REPORTED = 10

LINE_BREAK = re.compile(r"\r\n|\r|\n")  # as in JavaScript, and on the card
LONE_SURROGATE = re.compile("[\ud800-\udfff]")

# unicodedata has no names for control characters; these are their Unicode name aliases.
_CONTROL_NAMES = (
    "NULL|START OF HEADING|START OF TEXT|END OF TEXT|END OF TRANSMISSION|ENQUIRY|ACKNOWLEDGE|"
    "BELL|BACKSPACE|CHARACTER TABULATION|LINE FEED|LINE TABULATION|FORM FEED|CARRIAGE RETURN|"
    "SHIFT OUT|SHIFT IN|DATA LINK ESCAPE|DEVICE CONTROL ONE|DEVICE CONTROL TWO|"
    "DEVICE CONTROL THREE|DEVICE CONTROL FOUR|NEGATIVE ACKNOWLEDGE|SYNCHRONOUS IDLE|"
    "END OF TRANSMISSION BLOCK|CANCEL|END OF MEDIUM|SUBSTITUTE|ESCAPE|INFORMATION SEPARATOR FOUR|"
    "INFORMATION SEPARATOR THREE|INFORMATION SEPARATOR TWO|INFORMATION SEPARATOR ONE"
).split("|")
_C1_NAMES = (
    "PADDING CHARACTER|HIGH OCTET PRESET|BREAK PERMITTED HERE|NO BREAK HERE|INDEX|NEXT LINE|"
    "START OF SELECTED AREA|END OF SELECTED AREA|CHARACTER TABULATION SET|"
    "CHARACTER TABULATION WITH JUSTIFICATION|LINE TABULATION SET|PARTIAL LINE FORWARD|"
    "PARTIAL LINE BACKWARD|REVERSE LINE FEED|SINGLE SHIFT TWO|SINGLE SHIFT THREE|"
    "DEVICE CONTROL STRING|PRIVATE USE ONE|PRIVATE USE TWO|SET TRANSMIT STATE|CANCEL CHARACTER|"
    "MESSAGE WAITING|START OF GUARDED AREA|END OF GUARDED AREA|START OF STRING|"
    "SINGLE GRAPHIC CHARACTER INTRODUCER|SINGLE CHARACTER INTRODUCER|"
    "CONTROL SEQUENCE INTRODUCER|STRING TERMINATOR|OPERATING SYSTEM COMMAND|PRIVACY MESSAGE|"
    "APPLICATION PROGRAM COMMAND"
).split("|")


def codepoint(ch: str) -> str:
    return f"U+{ord(ch):04X}"


def char_name(ch: str) -> str:
    """The character's Unicode name (or alias, for controls); never empty."""
    cp = ord(ch)
    if cp < 0x20:
        return _CONTROL_NAMES[cp]
    if cp == 0x7F:
        return "DELETE"
    if 0x80 <= cp <= 0x9F:
        return _C1_NAMES[cp - 0x80]
    if 0xD800 <= cp <= 0xDFFF:
        return "LONE SURROGATE"
    if ch in NONCHARACTERS:
        return "NONCHARACTER"
    return unicodedata.name(ch, "UNNAMED CHARACTER")


def escape_sequence(ch: str) -> str:
    """How to write `ch` inside a JavaScript string: \\u202E, or \\u{1FFFF} past the BMP."""
    cp = ord(ch)
    return f"\\u{cp:04X}" if cp <= 0xFFFF else f"\\u{{{cp:X}}}"


def describe(ch: str) -> str:
    """'bidirectional control U+202E (RIGHT-TO-LEFT OVERRIDE)': what a refused character is."""
    if ch in BIDI_CONTROLS:
        kind = "bidirectional control"
    elif ch in LINE_SEPARATORS:
        kind = "line separator" if ch == "\u2028" else "paragraph separator"
    elif unicodedata.category(ch) == "Cc":
        kind = "control character"
    elif 0xD800 <= ord(ch) <= 0xDFFF:
        return f"lone surrogate {codepoint(ch)}"
    else:
        return f"noncharacter {codepoint(ch)}"
    return f"{kind} {codepoint(ch)} ({char_name(ch)})"


def why_refused(ch: str, *, in_code: bool = True, one_line: bool = True) -> str:
    """The harm, for the error message that names `ch`: in a file (`in_code`), or in a name or
    key (`one_line`), or in text a person writes (a review, a message)."""
    if ch in BIDI_CONTROLS:
        if in_code:
            return "can make code read differently than it runs"
        return "can make the text around it read differently than it is"
    if ch in LINE_SEPARATORS:
        if in_code or one_line:
            return "ends a line (and a // comment) in JavaScript but not on the review card"
        return "ends a line in some programs and not in others"
    if 0xD800 <= ord(ch) <= 0xDFFF:
        return "is not a character: no UTF-8 text can hold it"
    if ch in "\x0b\x0c":
        return "breaks a line for some tools and not for others, so line numbers would disagree"
    if unicodedata.category(ch) == "Cc":
        if in_code:
            return "is invisible on the review card"
        return "has no place in a one-line value" if one_line else "is invisible where it is shown"
    return "is reserved for a program's internal use, never for text"


def refused_characters(text: str, *, allowed: str = "") -> Iterator[tuple[int, str]]:
    """(index, character) for every refused character in `text`, except those in `allowed`."""
    for match in REFUSED.finditer(text):
        if match.group() not in allowed:
            yield match.start(), match.group()


def visible(text: str) -> str:
    """`text` with refused and invisible characters written as escapes, for error messages and
    field names: an error must never carry what it refuses (a lone surrogate cannot even be
    encoded into a response)."""
    return "".join(
        escape_sequence(ch) if REFUSED.match(ch) or unicodedata.category(ch) == "Cf" else ch
        for ch in text
    )


def one_line_problems(value: str, *, field: str, what: str) -> list[str]:
    """Why `value`, a one-line argument (a name, a key), cannot be stored: every refused
    character, tab and newlines included, at its column."""
    return [
        f"{field}: column {index + 1}: {describe(ch)} {why_refused(ch, in_code=False)}; "
        f"remove it from the {what}"
        for index, ch in refused_characters(value)
    ]


def text_problems(value: str, *, field: str, what: str) -> list[Problem]:
    """Why `value`, text a person writes (a review's summary or comment, a message, its list of
    handles), cannot be stored: every refused character but tab, LF and CR, at its column (and
    line, in text of several lines); the first MAX_REPORTED, then how many more."""
    found = list(refused_characters(value, allowed=FILE_CONTROLS))
    if not found:
        return []
    lines = Lines(value)
    problems = []
    for index, ch in found[:MAX_REPORTED]:
        line, col = lines.position(index)
        at = f"line {line}, column {col}" if len(lines.starts) > 1 else f"column {col}"
        why = why_refused(ch, in_code=False, one_line=False)
        problems.append(
            Problem(f"{field}: {at}: {describe(ch)} {why}; remove it from the {what}", field=field)
        )
    if len(found) > MAX_REPORTED:
        more = len(found) - MAX_REPORTED
        problems.append(
            Problem(
                f"{field}: {more} more such characters; remove them from the {what}", field=field
            )
        )
    return problems


def file_character_problem(path: str, line: int, col: int, ch: str) -> str:
    """Why the file at `path` may not carry `ch` at `line`:`col`, and the fix."""
    return (
        f"{path}:{line}:{col}: {describe(ch)} {why_refused(ch)}; write it as an escape "
        f"({escape_sequence(ch)}) inside a string if you need it"
    )


class Lines:
    """1-based line and column of an index into `text`: lines end at LF, CRLF or CR."""

    def __init__(self, text: str):
        self.starts = [0] + [match.end() for match in LINE_BREAK.finditer(text)]

    def position(self, index: int) -> tuple[int, int]:
        line = bisect.bisect_right(self.starts, index)
        return line, index - self.starts[line - 1] + 1
