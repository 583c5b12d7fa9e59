"""Drawing what rooms/content/characters.py finds into HTML, as visible, labelled markers.

Highlighted code: each marked character (or mixed-script word) is swapped for one SENTINEL
before Pygments sees the text, and each SENTINEL in Pygments' output is swapped for its
marker's HTML, in order. Pygments escapes the text around it; the marker HTML is built here with
format_html, which escapes the rest. The swap is exact because SENTINEL is a noncharacter: no
proposal can carry one (rooms/content/characters.py refuses it) and in any other text every
noncharacter is itself marked, so replaced. A lexer that dropped or repeated a character would
break the count: then the file renders as plain text, where each character passes through once.
"""

import html
import re

from django.utils.html import escape, format_html
from django.utils.safestring import SafeString, mark_safe
from pygments import highlight as pygments_highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers.special import TextLexer

from osfoundry.text import REFUSED, char_name, codepoint

from .characters import Mark, Reveal, is_hidden
from .unicode_scripts import MixedWord

SENTINEL = "\ufdd0"
# Text of these characters alone has nothing to mark: neither refused nor hidden.
PRINTABLE_ASCII = re.compile(r"[\x20-\x7e]*")
CSS_CLASS = "hl"


class CardFormatter(HtmlFormatter):
    """Pygments' HTML with inline line numbers, each line in its own element: wrapped lines then
    indent under their first line, not under the numbers."""

    def wrap(self, source):
        lines = ((t, f'<span class="line">{text}</span>' if t == 1 else text) for t, text in source)
        return super().wrap(lines)


def mark_html(mark: Mark) -> SafeString:
    kind = "uc-refused" if mark.is_refused else "uc-hidden"
    what = "refused character" if mark.is_refused else "hidden character"
    return format_html(
        '<span class="uc {}" tabindex="0" title="{} {}" aria-label="{} {} {}" '
        'data-codepoint="{}">{}</span>',
        kind,
        codepoint(mark.char),
        mark.name,
        what,
        codepoint(mark.char),
        mark.name,
        codepoint(mark.char),
        mark.label,
    )


def word_html(word: MixedWord) -> SafeString:
    return format_html(
        '<span class="uc uc-mixed" tabindex="0" title="{}" aria-label="{}">{}'
        '<span class="uc-label" aria-hidden="true">{}</span></span>',
        word.title,
        f"{word.word}: {word.title}",
        word.word,
        word.label,
    )


def spans(found: Reveal) -> list[tuple[int, int, SafeString]]:
    marks = [(m.index, m.index + 1, mark_html(m)) for m in found.marks]
    words = [(w.start, w.end, word_html(w)) for w in found.words]
    return sorted(marks + words, key=lambda span: span[0])


def highlight_revealed(text: str, found: Reveal, lexer_class, *, anchor: str) -> str:
    """Pygments HTML of `text`, with `found` drawn in as markers."""
    marked = spans(found)
    parts, last = [], 0
    for start, end, _html in marked:
        parts += [text[last:start], SENTINEL]
        last = end
    source = "".join(parts) + text[last:]
    formatter = CardFormatter(
        linenos="inline", cssclass=CSS_CLASS, lineanchors=anchor, anchorlinenos=True, wrapcode=True
    )
    html = pygments_highlight(source, lexer_class(stripnl=False, ensurenl=True), formatter)
    pieces = html.split(SENTINEL)
    if len(pieces) != len(marked) + 1:
        html = pygments_highlight(source, TextLexer(stripnl=False, ensurenl=True), formatter)
        pieces = html.split(SENTINEL)
    out = [pieces[0]]
    for (_start, _end, marker), piece in zip(marked, pieces[1:], strict=True):
        out += [marker, piece]
    return "".join(out)


def inline_text(text: str) -> SafeString:
    """`text` (a name, a title, a path) escaped, its invisible and refused characters as markers,
    inside <bdi>: right-to-left text in a name cannot reorder the words around it."""
    if PRINTABLE_ASCII.fullmatch(text):  # most names: nothing to mark (a Room's thousand tabs)
        return mark_safe("<bdi>" + html.escape(text) + "</bdi>")  # noqa: S308 - escaped
    out = []
    for ch in text:
        if REFUSED.match(ch) or is_hidden(ch):
            out.append(
                format_html(
                    '<span class="uc uc-inline" title="{} {}">⟨{}⟩</span>',
                    codepoint(ch),
                    char_name(ch),
                    codepoint(ch),
                )
            )
        else:
            out.append(escape(ch))
    return mark_safe("<bdi>" + "".join(out) + "</bdi>")  # noqa: S308 - every part escaped


def plain_text(text: str) -> str:
    """`text` for a place that takes no markup (a <title>, an attribute): invisible and refused
    characters written as ⟨U+…⟩."""
    if PRINTABLE_ASCII.fullmatch(text):
        return text
    return "".join(
        f"⟨{codepoint(ch)}⟩" if REFUSED.match(ch) or is_hidden(ch) else ch for ch in text
    )
