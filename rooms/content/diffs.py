"""What changed between two sets of files, for the card of an update: the one diff renderer.

Each side is highlighted whole, once, by rooms/content/highlight.py (cached per content hash, with
the markers for hidden characters that the card shows everywhere), and the diff takes its lines
from that HTML: a line keeps its colours and its markers on both sides. Word-level changes inside a
changed line are marked on the highlighted HTML itself, over the text a reader sees (markers
included), each <mark> opened and closed between the same tags so Pygments' spans stay intact.

Both sides are immutable content named by their hash, so a diff is computed once per pair of
hashes and kept in Django's cache.

An agent chooses what is diffed, so a diff spends at most a budget: steps of matching lines and
words (rooms/content/matching.py), and characters of HTML. A file past either is still on the card,
with its counts, "Too many changes to show" and its new text in full a click away.
"""

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from html import unescape
from typing import Literal

from django.core.cache import cache
from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

from . import highlight
from .characters import Reveal, reveal
from .filetree import tree_order
from .matching import BoundedMatcher, Budget
from .reveal import plain_text

# v2: a file past the diff's budget has no hunks, and a note. Carries the highlighter's version:
# a new highlighting makes every cached diff unreachable too.
CACHE_VERSION = f"v2-{highlight.CACHE_VERSION}"
CONTEXT_LINES = 3  # as `git diff`
# Lines alike by less than this share too little for word marks to help: the line is new.
WORD_MARK_MIN_RATIO = 0.3
# What one diff may spend matching lines, then words (steps of rooms/content/matching.py, about a
# third of a microsecond each): at most about 0.7 s in all, where "a\n" * 10_000 revised at one
# line took difflib 11.5 s (27 s on a loaded machine). bench/card.py's update of 21 files, three of
# them edited, spends 855 on lines and 10,014 on words.
LINE_STEPS = 1_500_000
WORD_STEPS = 500_000
# difflib's part in one line's word marks: the demo's App.tsx lines take at most 183 steps,
# 1,000 characters of JSX or of minified code 25,000-27,500; past it Myers' matching, cheap when
# little changed (a line of 490 repeated words, its last one changed, took difflib 481,000).
LINE_WORD_STEPS = 30_000
# The HTML of the rows one diff shows, about (each row's line, path and tags). 21 files with
# three edited is 4 KB; 10,000 lines rewritten were 4.3 MB, 2 s to send and more to lay out.
MAX_HTML_CHARS = 600_000
ROW_TAGS_CHARS = 180  # the <tr> and <td>s of _diff.html around one line: 176 (and its path)

Status = Literal["added", "removed", "modified", "unchanged"]
Kind = Literal["context", "add", "del"]

_LINE = re.compile(r"\r\n|\r|\n")
# One highlighted line (rooms/content/reveal.py CardFormatter): its anchor and number, then the
# code.
_HTML_LINE = re.compile(
    r'<span class="line">(?:<a id="[^"]*" name="[^"]*"></a>)?'
    r'<a href="[^"]*"><span class="linenos">\s*\d+</span></a>([^\n]*)\n</span>'
)
_UNIT = re.compile(r"<[^>]*>|&(?:#\d+|#x[0-9a-fA-F]+|\w+);|.", re.S)
_WORD = re.compile(r"\w+|\s+|[^\w\s]")


@dataclass(frozen=True)
class DiffRow:
    """One line of a hunk. `html` is the highlighted line (no number), safe to insert."""

    kind: Kind
    old_number: int | None  # None on an added line
    new_number: int | None  # None on a removed line
    html: SafeString


@dataclass(frozen=True)
class SplitRow:
    """One row of the side-by-side view: a context line on both sides, or a removed line
    beside the added line that replaced it (either may be None)."""

    old: DiffRow | None
    new: DiffRow | None


@dataclass(frozen=True)
class Hunk:
    old_start: int
    old_count: int
    new_start: int
    new_count: int
    rows: tuple[DiffRow, ...]

    @property
    def header(self) -> str:
        return f"@@ -{self.old_start},{self.old_count} +{self.new_start},{self.new_count} @@"

    @property
    def split_rows(self) -> tuple[SplitRow, ...]:
        return split_rows(self.rows)


@dataclass(frozen=True)
class FileDiff:
    path: str
    status: Status
    anchor: str  # the element id of the file's section: "d-…", apart from the card's "f-…"
    added: int = 0  # lines
    removed: int = 0
    hunks: tuple[Hunk, ...] = ()
    is_binary: bool = False  # either side: no lines shown, "binary file changed"
    is_plain: bool = False  # a side was large: no word marks (and plain text, as highlight does)
    # Past the diff's budget: no hunks, `note` says why; `added` and `removed` still count.
    has_too_many_changes: bool = False
    # An unchanged file, highlighted whole (None when binary or large: then `note` says why).
    html: SafeString | None = None
    note: str = ""
    # What the new side holds that a reader would not see (the card's banner); empty if removed.
    reveal: Reveal = Reveal()

    @property
    def is_changed(self) -> bool:
        return self.status != "unchanged"


@dataclass(frozen=True)
class CardDiff:
    old_hash: str
    new_hash: str
    files: tuple[FileDiff, ...]  # sorted by path

    @property
    def changed(self) -> list[FileDiff]:
        return [f for f in self.files if f.is_changed]

    @property
    def unchanged(self) -> list[FileDiff]:
        return [f for f in self.files if not f.is_changed]

    def count(self, status: Status) -> int:
        return sum(1 for f in self.files if f.status == status)

    @property
    def added_files(self) -> int:
        return self.count("added")

    @property
    def removed_files(self) -> int:
        return self.count("removed")

    @property
    def modified_files(self) -> int:
        return self.count("modified")

    @property
    def unchanged_files(self) -> int:
        return self.count("unchanged")

    @property
    def added_lines(self) -> int:
        return sum(f.added for f in self.files)

    @property
    def removed_lines(self) -> int:
        return sum(f.removed for f in self.files)


def cache_key(old_hash: str, new_hash: str) -> str:
    return f"diff:{CACHE_VERSION}:{old_hash}:{new_hash}"


def diff_files(
    old: Mapping[str, str | None], new: Mapping[str, str | None], *, old_hash: str, new_hash: str
) -> CardDiff:
    """The diff from `old` to `new` (path → text, None for a binary file), from the cache when
    this pair was diffed before. The caller vouches that each hash names exactly that content
    (a proposal's or a revision's content hash): the hashes alone are the cache key."""
    key = cache_key(old_hash, new_hash)
    found = cache.get(key)
    if isinstance(found, CardDiff):
        return found
    diff = compute_diff(old, new, old_hash=old_hash, new_hash=new_hash)
    cache.set(key, diff, timeout=highlight.CACHE_SECONDS)
    return diff


@dataclass
class Allowance:
    """What one diff may still spend, file after file in tree order."""

    lines: Budget = field(default_factory=lambda: Budget(LINE_STEPS))
    words: Budget = field(default_factory=lambda: Budget(WORD_STEPS))
    html: Budget = field(default_factory=lambda: Budget(MAX_HTML_CHARS))


def compute_diff(
    old: Mapping[str, str | None], new: Mapping[str, str | None], *, old_hash: str, new_hash: str
) -> CardDiff:
    """`diff_files` without the cache."""
    files = []
    allowance = Allowance()
    for path in tree_order(old.keys() | new.keys()):
        if path not in old:
            files.append(file_diff(path, "added", "", new[path], allowance))
        elif path not in new:
            files.append(file_diff(path, "removed", old[path], "", allowance))
        elif old[path] == new[path]:
            files.append(unchanged_file(path, new[path]))
        else:
            files.append(file_diff(path, "modified", old[path], new[path], allowance))
    return CardDiff(old_hash=old_hash, new_hash=new_hash, files=tuple(files))


def diff_anchor(path: str) -> str:
    return "d-" + highlight.file_anchor(path)[2:]


def unchanged_file(path: str, text: str | None) -> FileDiff:
    anchor = diff_anchor(path)
    if text is None or highlight.is_binary(text):
        return FileDiff(path, "unchanged", anchor, is_binary=True, note="binary file")
    reason = highlight.collapse_reason(text)
    if reason:
        return FileDiff(path, "unchanged", anchor, is_plain=True, note=f"not shown: {reason}")
    # Not rendered here: the page fetches it when opened (`file_url` of _diff.html), so an
    # update card carries only what changed.
    return FileDiff(path, "unchanged", anchor)


def file_diff(
    path: str, status: Status, old: str | None, new: str | None, allowance: Allowance
) -> FileDiff:
    anchor = diff_anchor(path)
    if old is None or new is None or highlight.is_binary(old) or highlight.is_binary(new):
        return FileDiff(path, status, anchor, is_binary=True)
    old_lines, new_lines = split_lines(old), split_lines(new)
    if old_lines == new_lines:
        return FileDiff(path, status, anchor)
    is_plain = highlight.is_large(old) or highlight.is_large(new)
    old_whole, new_whole = highlight.highlight_many([(path, old), (path, new)])
    old_html, new_html = html_lines(old_lines, old_whole), html_lines(new_lines, new_whole)
    # difflib's autojunk on a large file: fast, though a change there may take repeated lines
    # with it (rooms/content/matching.py bounds the rest).
    matcher = BoundedMatcher(old_lines, new_lines, budget=allowance.lines, autojunk=is_plain)
    groups = list(matcher.get_grouped_opcodes(CONTEXT_LINES))
    changes = [op for group in groups for op in group if op[0] != "equal"]
    added = sum(j2 - j1 for _, _, _, j1, j2 in changes)
    removed = sum(i2 - i1 for _, i1, i2, _, _ in changes)
    found = reveal(new) if status != "removed" else Reveal()
    note = ""
    if not matcher.is_complete:
        note = "comparing the two versions line by line takes too long"
    elif not allowance.html.afford(html_chars(path, groups, old_html, new_html)):
        note = f"{added + removed:,} changed lines, more than one card shows"
    if note:
        return FileDiff(
            path,
            status,
            anchor,
            added,
            removed,
            is_plain=is_plain,
            note=note,
            reveal=found,
            has_too_many_changes=True,
        )
    words = None if is_plain else allowance.words
    hunks = tuple(build_hunk(group, old_html, new_html, words=words) for group in groups)
    return FileDiff(path, status, anchor, added, removed, hunks, is_plain=is_plain, reveal=found)


def html_chars(path: str, groups: list, old_html: list[str], new_html: list[str]) -> int:
    """About how much HTML the rows of `groups` make, word marks aside."""
    lines: list[str] = []
    for group in groups:
        for tag, i1, i2, j1, j2 in group:
            lines += old_html[i1:i2]
            if tag != "equal":
                lines += new_html[j1:j2]
    return sum(len(line) for line in lines) + len(lines) * (ROW_TAGS_CHARS + len(path))


def split_lines(text: str) -> list[str]:
    """The lines of `text` with their endings (a CRLF → LF change is a change), as the card
    counts them: LF, CRLF or CR (rooms/content/characters.py)."""
    lines, start = [], 0
    for match in _LINE.finditer(text):
        lines.append(text[start : match.end()])
        start = match.end()
    if start < len(text):
        lines.append(text[start:])
    return lines


def html_lines(lines: list[str], html: str) -> list[str]:
    """The highlighted HTML of each of `lines` (`html` is their whole text highlighted),
    numbers and anchors taken off."""
    found = _HTML_LINE.findall(html)
    if len(found) >= len(lines):
        return found[: len(lines)]
    # Pygments split the lines otherwise (it should not): each line escaped, markers as text.
    return [str(escape(plain_text(_LINE.sub("", line)))) for line in lines]


def build_hunk(group, old_html: list[str], new_html: list[str], *, words: Budget | None) -> Hunk:
    """One hunk's rows; changed lines get word marks while `words` lasts (None: no marks)."""
    rows: list[DiffRow] = []
    for tag, i1, i2, j1, j2 in group:
        if tag == "equal":
            rows += [
                DiffRow("context", i + 1, j + 1, mark_safe(old_html[i]))  # noqa: S308
                for i, j in zip(range(i1, i2), range(j1, j2), strict=True)
            ]
            continue
        olds, news = old_html[i1:i2], new_html[j1:j2]
        if tag == "replace" and words is not None:
            for k in range(min(len(olds), len(news))):
                olds[k], news[k] = mark_words(olds[k], news[k], words)
        # Every line comes from Pygments' escaped output (or escape()); marks are our own tags.
        rows += [DiffRow("del", i1 + k + 1, None, mark_safe(h)) for k, h in enumerate(olds)]  # noqa: S308
        rows += [DiffRow("add", None, j1 + k + 1, mark_safe(h)) for k, h in enumerate(news)]  # noqa: S308
    first, last = group[0], group[-1]
    old_count, new_count = last[2] - first[1], last[4] - first[3]
    # As unified diff: an empty range names the line before it.
    old_start = first[1] + 1 if old_count else first[1]
    new_start = first[3] + 1 if new_count else first[3]
    return Hunk(old_start, old_count, new_start, new_count, tuple(rows))


def split_rows(rows: tuple[DiffRow, ...]) -> tuple[SplitRow, ...]:
    """The side-by-side rows of a hunk: each run of removed lines beside the added lines after
    it, line by line."""
    out: list[SplitRow] = []
    dels: list[DiffRow] = []
    adds: list[DiffRow] = []

    def flush() -> None:
        for k in range(max(len(dels), len(adds))):
            out.append(
                SplitRow(dels[k] if k < len(dels) else None, adds[k] if k < len(adds) else None)
            )
        dels.clear()
        adds.clear()

    for row in rows:
        if row.kind == "context":
            flush()
            out.append(SplitRow(row, row))
        elif row.kind == "del":
            if adds:
                flush()
            dels.append(row)
        else:
            adds.append(row)
    flush()
    return tuple(out)


def mark_words(old_html: str, new_html: str, budget: Budget) -> tuple[str, str]:
    """Both lines with the words that differ wrapped in <mark class="diff-word">. Words are
    compared over the text a reader sees (entities decoded, markers' labels included). Lines
    left unmarked once `budget` is spent."""
    if not budget.afford(len(old_html) + len(new_html)):  # taking the lines apart
        return old_html, new_html
    old_units, new_units = _UNIT.findall(old_html), _UNIT.findall(new_html)
    old_text, new_text = visible_text(old_units), visible_text(new_units)
    old_words, new_words = _WORD.findall(old_text), _WORD.findall(new_text)
    matcher = BoundedMatcher(old_words, new_words, budget=budget, difflib_steps=LINE_WORD_STEPS)
    if matcher.ratio() < WORD_MARK_MIN_RATIO or not matcher.is_complete:
        return old_html, new_html
    old_marked = [False] * len(old_text)
    new_marked = [False] * len(new_text)
    old_offsets, new_offsets = offsets(old_words), offsets(new_words)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        for k in range(old_offsets[i1], old_offsets[i2]):
            old_marked[k] = True
        for k in range(new_offsets[j1], new_offsets[j2]):
            new_marked[k] = True
    return wrap_marked(old_units, old_marked), wrap_marked(new_units, new_marked)


def visible_text(units: list[str]) -> str:
    return "".join(unescape(u) if u.startswith("&") else u for u in units if not u.startswith("<"))


def offsets(words: list[str]) -> list[int]:
    """Where each word starts in the joined text, and the text's length last."""
    out, total = [0], 0
    for word in words:
        total += len(word)
        out.append(total)
    return out


def wrap_marked(units: list[str], marked: list[bool]) -> str:
    """The line again, each run of marked characters between two tags inside one <mark>."""
    out, position, is_open = [], 0, False
    for unit in units:
        if unit.startswith("<"):
            if is_open:
                out.append("</mark>")
                is_open = False
            out.append(unit)
            continue
        if marked[position] != is_open:
            out.append('<mark class="diff-word">' if marked[position] else "</mark>")
            is_open = marked[position]
        out.append(unit)
        position += 1
    if is_open:
        out.append("</mark>")
    return "".join(out)
