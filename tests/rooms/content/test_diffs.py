"""The diff an update's card shows: statuses, hunks with both line numbers, highlighted lines with
word marks and hidden-character markers, escaping, binary files, once per pair of hashes, and the
partial that renders it."""

import re
from pathlib import Path

import pytest
from django.conf import settings
from django.template.loader import render_to_string

from rooms.content import diffs, highlight
from tests.servers import CHROMIUM, CHROMIUM_ARGS

OLD_APP = "".join(f"const line{n} = {n};\n" for n in range(1, 21))


def diff(old, new, *, old_hash="old", new_hash="new"):
    return diffs.diff_files(old, new, old_hash=old_hash, new_hash=new_hash)


def by_path(card_diff):
    return {f.path: f for f in card_diff.files}


def test_files_are_added_removed_modified_or_unchanged_in_tree_order():
    result = diff(
        {"src/a.ts": "let a = 1;\n", "src/gone.ts": "x\n", "same.css": "a {}\n"},
        {"src/a.ts": "let a = 2;\n", "src/new.ts": "y\n", "same.css": "a {}\n"},
    )
    # As in a folder tree: a folder's files before the files beside it.
    assert [(f.path, f.status) for f in result.files] == [
        ("src/a.ts", "modified"),
        ("src/gone.ts", "removed"),
        ("src/new.ts", "added"),
        ("same.css", "unchanged"),
    ]
    assert (result.added_files, result.removed_files, result.modified_files) == (1, 1, 1)
    assert result.unchanged_files == 1
    assert (result.added_lines, result.removed_lines) == (2, 2)
    files = by_path(result)
    assert [r.kind for r in files["src/gone.ts"].hunks[0].rows] == ["del"]
    assert [r.kind for r in files["src/new.ts"].hunks[0].rows] == ["add"]
    assert files["same.css"].html is None and not files["same.css"].hunks  # fetched when opened
    assert files["same.css"].anchor.startswith("d-") and not files["same.css"].is_binary


def test_rows_carry_the_old_and_the_new_line_number():
    new = OLD_APP.replace("const line10 = 10;\n", "const line10 = 10;\nconst extra = 0;\n")
    new = new.replace("const line12 = 12;\n", "const line12 = 120;\n")
    (hunk,) = by_path(diff({"a.ts": OLD_APP}, {"a.ts": new}))["a.ts"].hunks
    numbered = [(r.kind, r.old_number, r.new_number) for r in hunk.rows]
    assert ("add", None, 11) in numbered
    assert ("del", 12, None) in numbered and ("add", None, 13) in numbered
    assert numbered[0] == ("context", 8, 8)
    assert numbered[-1] == ("context", 15, 16)
    assert hunk.header == "@@ -8,8 +8,9 @@"


def test_distant_changes_make_separate_hunks_with_three_lines_of_context():
    new = OLD_APP.replace("line2 = 2", "line2 = 22").replace("line19 = 19", "line19 = 190")
    first, second = by_path(diff({"a.ts": OLD_APP}, {"a.ts": new}))["a.ts"].hunks
    assert [r.old_number for r in first.rows if r.kind != "add"] == [1, 2, 3, 4, 5]
    assert [r.new_number for r in second.rows if r.kind != "del"] == [16, 17, 18, 19, 20]
    # Lines 6 to 15 are far from both changes: not shown.
    shown = {r.new_number for h in (first, second) for r in h.rows}
    assert not shown & set(range(6, 16))


def test_a_changed_line_marks_only_the_words_that_changed_inside_the_syntax_html():
    (hunk,) = by_path(
        diff({"a.ts": "const total = price * 2;\n"}, {"a.ts": "const total = cost * 2;\n"})
    )["a.ts"].hunks
    removed, added = hunk.rows
    assert '<mark class="diff-word">price</mark>' in removed.html
    assert '<mark class="diff-word">cost</mark>' in added.html
    assert added.html.count("<mark") == 1
    assert '<span class="kd">const</span>' in added.html  # still highlighted
    # Every mark closes inside the span it opened in.
    assert re.search(r'<span class="nx"><mark class="diff-word">cost</mark></span>', added.html)


def test_a_line_rewritten_entirely_is_not_marked_word_by_word():
    (hunk,) = by_path(diff({"a.py": "import os\n"}, {"a.py": "print('hello world')\n"}))[
        "a.py"
    ].hunks
    assert all("<mark" not in r.html for r in hunk.rows)


def test_a_hidden_character_in_an_added_line_shows_as_a_marker():
    new = OLD_APP + 'const name = "admin\u202e";\n'
    result = diff({"a.ts": OLD_APP}, {"a.ts": new})
    (hunk,) = by_path(result)["a.ts"].hunks
    added = hunk.rows[-1]
    assert added.kind == "add" and added.new_number == 21
    assert 'data-codepoint="U+202E"' in added.html
    assert "\u202e" not in added.html
    page = render_to_string("rooms/_diff.html", {"diff": result, "diff_title": "Changes"})
    assert "data-reveal-banner" in page


def test_word_marks_keep_every_tag_nested():
    old = 'const a = { "x\u200b": f(1, [2]) }; // <b>&amp;\n'
    new = 'const a = { "y\u200b": g(1, [3]) }; // <i>&amp;\n'
    (hunk,) = by_path(diff({"a.ts": old}, {"a.ts": new}))["a.ts"].hunks
    for row in hunk.rows:
        assert "<mark" in row.html
        assert_well_nested(row.html)


def assert_well_nested(html):
    open_tags = []
    for closing, name in re.findall(r"<(/?)(\w+)[^>]*>", html):
        if closing:
            assert open_tags and open_tags.pop() == name, html
        else:
            open_tags.append(name)
    assert not open_tags, html


def test_file_content_is_escaped():
    result = diff({"a.html": "<p>hi</p>\n"}, {"a.html": "<script>alert(1)</script>\n"})
    html = "".join(r.html for h in by_path(result)["a.html"].hunks for r in h.rows)
    assert "<script>" not in html
    assert "&lt;" in html and "script" in html
    page = render_to_string("rooms/_diff.html", {"diff": result, "diff_title": "Changes"})
    assert "<script>alert" not in page


def test_binary_files_are_not_diffed():
    result = diff(
        {"logo.png": None, "data.bin": "a\x00b"}, {"logo.png": None, "data.bin": "c\x00d"}
    )
    files = by_path(result)
    assert files["logo.png"].status == "unchanged"
    assert files["data.bin"].status == "modified" and files["data.bin"].is_binary
    assert not files["data.bin"].hunks
    page = render_to_string("rooms/_diff.html", {"diff": result, "diff_title": "Changes"})
    assert "binary file changed" in page


def test_split_rows_put_a_removed_line_beside_the_line_that_replaced_it():
    new = OLD_APP.replace("line5 = 5", "line5 = 50") + "const last = 21;\n"
    first, second = by_path(diff({"a.ts": OLD_APP}, {"a.ts": new}))["a.ts"].hunks
    pairs = [(s.old and s.old.old_number, s.new and s.new.new_number) for s in first.split_rows]
    assert (5, 5) in pairs and len(pairs) == 7
    assert [(s.old, s.new.new_number) for s in second.split_rows][-1] == (None, 21)


def test_split_rows_put_context_on_both_sides_and_nothing_beside_an_extra_removed_line():
    new = OLD_APP.replace("const line5 = 5;\nconst line6 = 6;\n", "const line5 = 56;\n")
    (hunk,) = by_path(diff({"a.ts": OLD_APP}, {"a.ts": new}))["a.ts"].hunks
    assert [(r.kind, r.old_number, r.new_number) for r in hunk.rows][3:6] == [
        ("del", 5, None),
        ("del", 6, None),
        ("add", None, 5),
    ]
    pairs = [(s.old and s.old.old_number, s.new and s.new.new_number) for s in hunk.split_rows]
    assert pairs == [(2, 2), (3, 3), (4, 4), (5, 5), (6, None), (7, 6), (8, 7), (9, 8)]


def test_a_pair_of_hashes_is_diffed_once(monkeypatch):
    calls = []
    real = diffs.compute_diff
    monkeypatch.setattr(diffs, "compute_diff", lambda *a, **k: calls.append(1) or real(*a, **k))
    first = diff({"a.ts": "a\n"}, {"a.ts": "b\n"}, old_hash="h1", new_hash="h2")
    second = diff({"a.ts": "a\n"}, {"a.ts": "b\n"}, old_hash="h1", new_hash="h2")
    assert first == second and (first.old_hash, first.new_hash) == ("h1", "h2")
    assert len(calls) == 1
    diff({"a.ts": "b\n"}, {"a.ts": "a\n"}, old_hash="h2", new_hash="h1")
    assert len(calls) == 2
    # Either hash of the pair differing is another diff.
    diff({"a.ts": "c\n"}, {"a.ts": "b\n"}, old_hash="h3", new_hash="h2")
    diff({"a.ts": "a\n"}, {"a.ts": "c\n"}, old_hash="h1", new_hash="h3")
    assert len(calls) == 4


def test_a_word_changed_at_the_end_of_a_plain_text_line_is_marked_to_the_end():
    (hunk,) = by_path(diff({"a.txt": "hello world\n"}, {"a.txt": "hello there\n"}))["a.txt"].hunks
    assert [r.html for r in hunk.rows] == [
        'hello <mark class="diff-word">world</mark>',
        'hello <mark class="diff-word">there</mark>',
    ]


def test_a_value_inserted_into_a_long_row_of_repeated_values_marks_only_that_value():
    cells = ["0"] * 100
    old = ",".join(cells) + "\n"
    new = ",".join(cells[:50] + ["1"] + cells[50:]) + "\n"
    removed, added = by_path(diff({"grid.csv": old}, {"grid.csv": new}))["grid.csv"].hunks[0].rows
    assert "<mark" not in removed.html
    assert re.findall(r'<mark class="diff-word">(.*?)</mark>', added.html) == ["1,"]


def test_an_empty_file_added_shows_as_added_without_lines():
    result = diff({"a.ts": "x\n"}, {"a.ts": "x\n", "empty.ts": ""})
    empty = by_path(result)["empty.ts"]
    assert (empty.status, empty.hunks, empty.added) == ("added", (), 0)
    page = render_to_string("rooms/_diff.html", {"diff": result, "diff_title": "Changes"})
    assert f'id="{empty.anchor}"' in page and "empty file added" in page


def test_unchanged_binary_and_large_files_say_why_they_are_not_shown():
    big = "y" * (highlight.LONG_LINE_CHARS + 1) + "\n"
    files = {"logo.png": None, "data.bin": "a\x00b", "big.txt": big, "a.ts": "a\n"}
    result = diff(files, {**files, "a.ts": "b\n"})
    unchanged = by_path(result)
    assert unchanged["logo.png"].is_binary and unchanged["data.bin"].is_binary
    assert unchanged["big.txt"].is_plain
    page = render_to_string(
        "rooms/_diff.html",
        {"diff": result, "diff_title": "Changes", "file_url": "/file"},
    )
    assert page.count('<p class="file-note">binary file</p>') == 2
    for path in ("logo.png", "big.txt"):
        assert f'id="{unchanged[path].anchor}"' in page and unchanged[path].anchor.startswith("d-")
    assert '<p class="file-note">not shown: long line: 1,001 characters</p>' in page
    # Neither is fetched when opened: only a.ts's change and nothing to load.
    assert "data-load-url" not in page


def test_large_files_are_diffed_without_word_marks():
    old = "x = 1\n" + "y" * (highlight.LONG_LINE_CHARS + 1) + "\n"
    new = "x = 2\n" + "y" * (highlight.LONG_LINE_CHARS + 1) + "\n"
    changed = by_path(diff({"big.py": old}, {"big.py": new}))["big.py"]
    assert changed.is_plain
    assert [r.kind for r in changed.hunks[0].rows] == ["del", "add", "context"]
    assert all("<mark" not in r.html for r in changed.hunks[0].rows)


def test_the_partial_renders_files_lines_and_the_collapsed_unchanged_files():
    old = {f"src/f{n:02}.ts": f"export const f{n} = {n};\n" for n in range(14)}
    old["src/app.ts"] = OLD_APP
    new = {**old, "src/app.ts": OLD_APP.replace("line9 = 9", "line9 = 90"), "src/x.ts": "y\n"}
    del new["src/f13.ts"]
    page = render_to_string(
        "rooms/_diff.html",
        {
            "diff": diff(old, new),
            "diff_title": "Changes since the approved version (v2)",
            "reviewing": True,
        },
    )
    assert "Changes since the approved version (v2)" in page
    assert 'data-diff-view="unified" aria-pressed="true"' in page
    assert 'data-diff-view="split"' in page
    assert "13 unchanged files" in page
    assert re.search(r'data-path="src/app.ts" id="d-[0-9a-f]{12}-9" data-line="9"', page)
    assert 'data-path="src/f13.ts" data-old-line="1"' in page  # a removed file shows its lines
    sections = re.findall(r'<section class="file diff-file[^"]*"[^>]*data-status="(\w+)"', page)
    assert sorted(sections) == ["added", "modified", "removed"]
    assert page.count("data-viewed") == 3
    assert "+2" in page and "−2" in page  # totals: +app.ts +x.ts, −app.ts −f13.ts
    assert "<script" not in page and "style=" not in page  # the CSP allows neither inline


def test_the_split_view_is_built_in_the_browser_and_remembered(tmp_path, monkeypatch):
    # No page hosts the partial yet: a standalone page with the site's CSS and diff.js.
    if not Path(CHROMIUM).exists():
        pytest.skip(f"{CHROMIUM} is not installed (make browser)")
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    from playwright.sync_api import sync_playwright

    new = OLD_APP.replace("line9 = 9", "line9 = 90").replace("const line12 = 12;\n", "")
    body = render_to_string(
        "rooms/_diff.html", {"diff": diff({"a.ts": OLD_APP}, {"a.ts": new}), "diff_title": "Diff"}
    )
    static = Path(settings.BASE_DIR) / "static/rooms"
    page_file = tmp_path / "diff.html"
    page_file.write_text(
        f'<!doctype html><meta charset="utf-8"><meta name="viewport" content="width=device-width">'
        f'<link rel="stylesheet" href="{(static / "console.css").as_uri()}">'
        f'<script src="{(static / "diff.js").as_uri()}" defer></script>'
        f'<main class="page">{body}</main>'
    )
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = chromium.new_page(viewport={"width": 1280, "height": 800})
        page.goto(page_file.as_uri())
        assert page.locator(".diff-split").count() == 0
        page.click("[data-diff-view=split]")
        changed = page.locator('.diff-split tr[data-line="9"]')
        assert changed.get_attribute("data-old-line") == "9"
        assert changed.locator("td.diff-line.diff-del mark.diff-word").inner_text() == "9"
        assert changed.locator("td.diff-line.diff-add mark.diff-word").inner_text() == "90"
        removed = page.locator('.diff-split tr[data-old-line="12"]')
        assert removed.get_attribute("data-line") is None
        assert page.locator(".diff-unified").is_hidden()
        page.reload()
        assert page.get_attribute("[data-diff-view=split]", "aria-pressed") == "true"
        assert page.locator(".diff-split").is_visible()
        # A phone gets the unified view whatever was chosen, and no page-wide scrolling.
        page.set_viewport_size({"width": 390, "height": 800})
        assert page.locator(".diff-unified").is_visible()
        assert page.evaluate("document.documentElement.scrollWidth") <= 390
        chromium.close()
