"""Syntax highlighting for review cards, repository pages and the admin: the one helper.

Proposal and version content is immutable, so a file is highlighted once, when first shown, and
the HTML is cached under its content hash. Lexers are chosen by file name only (never
`guess_lexer`, which is slow and guesses wrong on short files) and cached per extension.
"""

import hashlib
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import PurePosixPath

from django.core.cache import cache
from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe
from pygments import highlight as pygments_highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import get_lexer_for_filename
from pygments.lexers.special import TextLexer
from pygments.util import ClassNotFound

CSS_CLASS = "hl"
STYLE = "default"
# Files above either limit are collapsed on the card and rendered only when asked for.
LARGE_FILE_BYTES = 100_000
LONG_LINE_CHARS = 1_000
CACHE_SECONDS = 30 * 24 * 3600
CACHE_VERSION = "v1"

_CONTROL = re.compile(r"[\x00-\x08\x0b\x0e-\x1a\x1c-\x1f\x7f]")


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


def file_anchor(path: str) -> str:
    return "f-" + hashlib.sha256(path.encode("utf-8", "surrogatepass")).hexdigest()[:12]


def is_binary(text: str | None) -> bool:
    """NUL bytes, text that is not valid UTF-8, or many control characters."""
    if text is None or "\x00" in text:
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # lone surrogates: the bytes were not UTF-8
        return True
    sample = text[:8192]
    return bool(sample) and len(_CONTROL.findall(sample)) > len(sample) * 0.05


def is_large(text: str) -> bool:
    if len(text) > LARGE_FILE_BYTES or len(text.encode("utf-8")) > LARGE_FILE_BYTES:
        return True
    return any(len(line) > LONG_LINE_CHARS for line in text.splitlines())


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
    formatter = HtmlFormatter(
        linenos="inline",
        cssclass=CSS_CLASS,
        lineanchors=file_anchor(path),
        anchorlinenos=True,
        wrapcode=True,
    )
    return pygments_highlight(text, lexer(stripnl=False, ensurenl=True), formatter)


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


def highlight(text: str, path: str) -> SafeString:
    """Highlighted HTML for one file; binary content is never rendered."""
    if is_binary(text):
        return mark_safe(f'<p class="muted">{escape("binary file not shown")}</p>')
    return highlight_many([(path, text)])[0]


def file_views(files: dict[str, str | None], *, render_large: bool = False) -> list[FileView]:
    """Every file in path order, highlighted unless binary (or large, unless asked)."""
    views = []
    shown = []
    for path in sorted(files):
        text = files[path]
        if text is None or is_binary(text):
            size = 0 if text is None else len(text.encode("utf-8", "surrogatepass"))
            views.append((path, size, 0, True, False))
            continue
        large = is_large(text)
        lines = text.count("\n") + (0 if text.endswith("\n") else 1)
        views.append((path, len(text.encode("utf-8")), lines if text else 0, False, large))
        if render_large or not large:
            shown.append((path, text))
    rendered = dict(zip([p for p, _ in shown], highlight_many(shown), strict=True))
    return [
        FileView(
            path=path,
            anchor=file_anchor(path),
            size=size,
            lines=lines,
            is_binary=binary,
            is_large=large,
            html=rendered.get(path),
        )
        for path, size, lines, binary, large in views
    ]


def stylesheet() -> str:
    """The Pygments CSS for `.hl` blocks; written once into static/rooms/highlight.css."""
    css = HtmlFormatter(style=STYLE, cssclass=CSS_CLASS).get_style_defs(f".{CSS_CLASS}")
    extra = (
        "/* Lexers mark valid but unusual syntax (TSX generics) as errors: no red boxes. */\n"
        f".{CSS_CLASS} .err {{ border: 0; background: none; }}\n"
        f".{CSS_CLASS} .linenos {{ user-select: none; }}\n"
    )
    return "/* Generated by `manage.py highlight_css`; do not edit. */\n" + css + "\n" + extra
