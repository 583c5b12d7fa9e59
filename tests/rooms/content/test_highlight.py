"""The one highlighting helper: lexer by file name, guards, and highlight-once caching."""

from pathlib import Path

from django.conf import settings
from django.core.management import call_command

from rooms.content import highlight


def test_tsx_is_highlighted_with_inline_numbers_and_line_anchors():
    html = highlight.highlight("const a = 1;\nexport default a;\n", "src/App.tsx")
    anchor = highlight.file_anchor("src/App.tsx")
    assert '<div class="hl">' in html
    assert f'id="{anchor}-2"' in html
    assert f'href="#{anchor}-2"><span class="linenos">2</span>' in html
    assert '<span class="kd">const</span>' in html


def test_unknown_extension_falls_back_to_plain_text():
    html = highlight.highlight("hello <world>", "notes.unknownext")
    assert "&lt;world&gt;" in html
    assert "<world>" not in html


def test_lexer_is_chosen_by_name_never_guessed():
    assert highlight.lexer_class(highlight.lexer_key("a/b/styles.css")).__name__ == "CssLexer"
    assert highlight.lexer_class(highlight.lexer_key("Makefile")).__name__ == "MakefileLexer"
    # Content that looks like Python in a .txt file stays text.
    assert highlight.lexer_class(highlight.lexer_key("x.txt")).__name__ == "TextLexer"


def test_only_files_that_are_not_text_are_binary():
    # A repository file that was not UTF-8 is stored as None; NUL never reaches a proposal.
    assert highlight.is_binary(None)
    assert highlight.is_binary("abc\x00def")
    assert "binary file not shown" in highlight.highlight("a\x00b", "x.bin")
    # Control characters are text the card shows, each as a marker: nothing that runs is hidden.
    assert not highlight.is_binary("\x01\x02\x03\x04 mostly control" * 2)
    assert not highlight.is_binary("tab\tand newline\n")
    html = highlight.highlight("\x01\x02 mostly control", "x.txt")
    assert "⟨U+0001⟩" in html and "⟨U+0002⟩" in html


def test_large_files_and_long_lines_are_large():
    assert highlight.is_large("x" * (highlight.LARGE_FILE_BYTES + 1))
    assert highlight.is_large("short\n" + "y" * (highlight.LONG_LINE_CHARS + 1))
    assert not highlight.is_large("const a = 1;\n" * 100)


def test_a_file_is_highlighted_once_then_served_from_the_cache(monkeypatch):
    calls = []
    real = highlight.render
    monkeypatch.setattr(highlight, "render", lambda p, t: calls.append(p) or real(p, t))
    first = highlight.highlight("let a = 1;\n", "src/a.ts")
    second = highlight.highlight("let a = 1;\n", "src/a.ts")
    assert first == second
    assert calls == ["src/a.ts"]


def test_a_file_of_a_megabyte_or_more_is_sized_in_megabytes():
    assert highlight.collapse_reason("a line of text\n" * 100_000) == "large file: 1.4 MB"
    assert highlight.collapse_reason("é" * 524_288) == (  # bytes, not characters
        "large file: 1.0 MB, long line: 524,288 characters"
    )
    assert highlight.collapse_reason("x" * (1024 * 1024 - 1)).startswith("large file: 1,024 KB")


def test_file_views_keep_large_files_for_later():
    views = highlight.file_views({"big.ts": "a" * 200_000, "src/App.tsx": "x", "b.bin": "\x00"})
    by_path = {view.path: view for view in views}
    assert [view.path for view in views] == ["src/App.tsx", "b.bin", "big.ts"]  # folders first
    assert by_path["big.ts"].is_large and by_path["big.ts"].html is None
    assert by_path["big.ts"].collapse_reason == "large file: 195 KB, long line: 200,000 characters"
    assert by_path["b.bin"].is_binary and by_path["b.bin"].html is None
    assert by_path["src/App.tsx"].html


def test_committed_stylesheet_is_current():
    call_command("highlight_css", "--check")
    css = (Path(settings.BASE_DIR) / "static/rooms/highlight.css").read_text()
    assert ".hl .err { border: 0; background: none; }" in css


def test_a_three_digit_colour_reads_as_its_six_digit_form():
    from rooms.content.highlight import contrast, luminance

    assert luminance("#fff") == luminance("#ffffff") == 1.0
    assert luminance("#000") == 0.0
    assert round(contrast("#fff", "#000"), 2) == 21.0
    assert contrast("#abc", "#aabbcc") == 1.0
