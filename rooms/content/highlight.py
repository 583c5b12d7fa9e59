"""Syntax highlighting for review cards, repository pages and the admin: the one helper.

Proposal and version content is immutable, so a file is highlighted once, when first shown, and
the HTML is cached under its content hash. Lexers are chosen by file name only (never
`guess_lexer`, which is slow and guesses wrong on short files) and cached per extension.

What the card reveals (rooms/content/characters.py: invisible characters, words that mix scripts,
and in a repository file the characters a proposal may not carry) is drawn into Pygments' output as
visible, labelled markers; rooms/content/reveal.py says how, safely.
"""

import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import PurePosixPath

from django.core.cache import cache
from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe
from pygments.formatters import HtmlFormatter
from pygments.lexers import get_lexer_for_filename
from pygments.lexers.special import TextLexer
from pygments.style import Style
from pygments.styles import get_style_by_name
from pygments.util import ClassNotFound

from .characters import Reveal, reveal
from .filetree import tree_order
from .reveal import CSS_CLASS, highlight_revealed

STYLE = "default"
# The same classes coloured for dark mode (prefers-color-scheme: dark).
DARK_STYLE = "github-dark"
# Files above either limit are collapsed on the card and rendered only when asked for.
LARGE_FILE_BYTES = 100_000
LONG_LINE_CHARS = 1_000
CACHE_SECONDS = 30 * 24 * 3600
# v2: markers for hidden characters and mixed-script words, one element per line. A new version
# makes every older entry unreachable, so no card shows a rendering without its markers.
CACHE_VERSION = "v2"


@dataclass(frozen=True)
class FileView:
    """One file as a review page shows it."""

    path: str
    anchor: str  # the file's element id; line anchors are "<anchor>-<n>"
    size: int  # bytes (UTF-8)
    lines: int
    is_binary: bool
    is_large: bool
    html: SafeString | None  # None when not shown inline (binary or large)
    reveal: Reveal = Reveal()
    collapse_reason: str = ""  # why a large file waits for a click: "long line: 5,200 characters"


def file_anchor(path: str) -> str:
    return "f-" + hashlib.sha256(path.encode("utf-8", "surrogatepass")).hexdigest()[:12]


def is_binary(text: str | None) -> bool:
    """A repository file that is not UTF-8 text (stored as None) or holds NUL. Any other text is
    shown, its control characters as markers: nothing that can run is hidden."""
    return text is None or "\x00" in text


def collapse_reason(text: str) -> str:
    """Why the card renders `text` only on demand ("" when it shows it at once)."""
    reasons = []
    size = len(text.encode("utf-8", "surrogatepass"))
    if size > LARGE_FILE_BYTES:
        reasons.append(f"large file: {kilobytes(size)}")
    longest = max((len(line) for line in text.splitlines()), default=0)
    if longest > LONG_LINE_CHARS:
        reasons.append(f"long line: {longest:,} characters")
    return ", ".join(reasons)


def is_large(text: str) -> bool:
    return bool(collapse_reason(text))


def kilobytes(size: int) -> str:
    if size >= 1024 * 1024:
        return f"{size / 1024 / 1024:,.1f} MB"
    return f"{size / 1024:,.0f} KB"


@lru_cache(maxsize=512)
def lexer_class(key: str):
    try:
        return type(get_lexer_for_filename(key))
    except ClassNotFound:
        return TextLexer


def lexer_key(path: str) -> str:
    name = PurePosixPath(path).name
    suffix = PurePosixPath(name).suffix.lower()
    # Extension-less names (Makefile, Dockerfile) are looked up by their whole name.
    return f"file{suffix}" if suffix else name


def cache_key(path: str, text: str) -> str:
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
    lexer = lexer_class(lexer_key(path)).__name__
    return f"hl:{CACHE_VERSION}:{lexer}:{file_anchor(path)}:{digest}"


def render(path: str, text: str) -> str:
    # Very large files and minified code render as plain text: colouring them costs seconds
    # and helps nobody.
    lexer = TextLexer if is_large(text) else lexer_class(lexer_key(path))
    return highlight_revealed(text, reveal(text), lexer, anchor=file_anchor(path))


def highlight_many(files: list[tuple[str, str]]) -> list[SafeString]:
    """Highlighted HTML for each (path, text), from the cache where possible (one round trip)."""
    keys = [cache_key(path, text) for path, text in files]
    found = cache.get_many(keys)
    missing = {}
    out = []
    for key, (path, text) in zip(keys, files, strict=True):
        html = found.get(key)
        if html is None:
            html = missing[key] = render(path, text)
        out.append(mark_safe(html))  # noqa: S308 - Pygments escapes every token
    if missing:
        cache.set_many(missing, timeout=CACHE_SECONDS)
    return out


def highlight(text: str | None, path: str) -> SafeString:
    """Highlighted HTML for one file; binary content is never rendered."""
    if text is None or is_binary(text):
        return mark_safe(f'<p class="muted">{escape("binary file not shown")}</p>')
    return highlight_many([(path, text)])[0]


def file_views(files: Mapping[str, str | None], *, render_large: bool = False) -> list[FileView]:
    """Every file in path order, highlighted unless binary (or large, unless asked)."""
    views = []
    shown = []
    for path in tree_order(files):
        text = files[path]
        if text is None or is_binary(text):
            size = 0 if text is None else len(text.encode("utf-8", "surrogatepass"))
            views.append(FileView(path, file_anchor(path), size, 0, True, False, None))
            continue
        reason = collapse_reason(text)
        lines = text.count("\n") + (0 if text.endswith("\n") else 1)
        size = len(text.encode("utf-8", "surrogatepass"))
        view = FileView(
            path, file_anchor(path), size, lines if text else 0, False, bool(reason), None
        )
        views.append(replace(view, reveal=reveal(text), collapse_reason=reason))
        if render_large or not reason:
            shown.append((path, text))
    rendered = dict(zip([p for p, _ in shown], highlight_many(shown), strict=True))
    return [replace(view, html=rendered.get(view.path)) for view in views]


# The lighter backgrounds code is read on besides white: a diff's added and removed rows, the
# words changed in them, a line jumped to (static/rooms/console.css). Every colour of the light
# style reads on each at WCAG AA's 4.5:1 (Pygments' own sit at about 4.6:1 on white only).
TINTS = ("#ffffff", "#e6f6ec", "#fdeeec", "#c3e9cf", "#fbd3cd", "#fff3b0")
AA = 4.5
COLOUR = re.compile(r"(?<![:\w])#([0-9a-fA-F]{6}|[0-9a-fA-F]{3})\b")


def luminance(colour: str) -> float:
    digits = colour.lstrip("#")
    if len(digits) == 3:
        digits = "".join(c * 2 for c in digits)
    channels = [int(digits[i : i + 2], 16) / 255 for i in (0, 2, 4)]
    linear = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def contrast(one: str, other: str) -> float:
    light, dark = sorted((luminance(one), luminance(other)), reverse=True)
    return (light + 0.05) / (dark + 0.05)


def readable(colour: str) -> str:
    """`colour`, darkened in its own hue until it reads at 4.5:1 on every tint."""
    digits = colour.lstrip("#")
    if len(digits) == 3:
        digits = "".join(c * 2 for c in digits)
    rgb = [int(digits[i : i + 2], 16) for i in (0, 2, 4)]
    while min(contrast(hex_colour(rgb), tint) for tint in TINTS) < AA:
        rgb = [int(c * 0.96) for c in rgb]
    return hex_colour(rgb)


def hex_colour(rgb: list[int]) -> str:
    return "#" + "".join(f"{c:02x}" for c in rgb)


@lru_cache(maxsize=1)
def readable_style() -> type[Style]:
    """STYLE with every text colour readable on the card's tints (backgrounds untouched)."""
    base = get_style_by_name(STYLE)
    styles = {
        token: COLOUR.sub(lambda found: readable(found.group(0)), definition)
        for token, definition in base.styles.items()
    }
    return type("ReadableStyle", (base,), {"styles": styles})


def stylesheet() -> str:
    """The Pygments CSS for `.hl` blocks; written once into static/rooms/highlight.css."""
    css = HtmlFormatter(style=readable_style(), cssclass=CSS_CLASS).get_style_defs(f".{CSS_CLASS}")
    dark = HtmlFormatter(style=DARK_STYLE, cssclass=CSS_CLASS).get_style_defs(f".{CSS_CLASS}")
    css += "\n@media (prefers-color-scheme: dark) {\n" + dark + "\n}\n"
    extra = (
        "/* Lexers mark valid but unusual syntax (TSX generics) as errors: no red boxes. */\n"
        f".{CSS_CLASS} .err {{ border: 0; background: none; }}\n"
        f".{CSS_CLASS} .linenos {{ user-select: none; }}\n"
    )
    return "/* Generated by `manage.py highlight_css`; do not edit. */\n" + css + "\n" + extra
