"""The edges of the card's diff (rooms/content/diffs.py): hunk headers as `git diff` writes them,
both line numbers and the text of every row, files without a final newline, where word marks start
and stop, and which files are shown as binary or plain. Plain-text files (.txt) keep each row's
HTML readable."""

import hashlib

import pytest
from django.utils.html import escape

from rooms.content import diffs, highlight

LONG = "y" * (highlight.LONG_LINE_CHARS + 1)
MARK = '<mark class="diff-word">{}</mark>'


def file_diff(old, new, path="a.txt"):
    """The one file's diff; a side left out (None) is a file that is not there."""
    before = {} if old is None else {path: old}
    after = {} if new is None else {path: new}
    (found,) = diffs.compute_diff(before, after, old_hash="old", new_hash="new").files
    return found


def rows(hunk):
    return [(r.kind, r.old_number, r.new_number, str(r.html)) for r in hunk.rows]


def test_an_added_file_is_one_insertion_from_line_zero():
    (hunk,) = file_diff(None, "first\nsecond\n").hunks
    assert hunk.header == "@@ -0,0 +1,2 @@"
    assert rows(hunk) == [("add", None, 1, "first"), ("add", None, 2, "second")]


def test_a_removed_file_is_one_deletion_down_to_line_zero():
    (hunk,) = file_diff("first\nsecond\n", None).hunks
    assert hunk.header == "@@ -1,2 +0,0 @@"
    assert rows(hunk) == [("del", 1, None, "first"), ("del", 2, None, "second")]


def test_lines_inserted_at_the_top_count_from_line_one_on_both_sides():
    old = "".join(f"l{n}\n" for n in range(1, 7))
    (hunk,) = file_diff(old, "new\n" + old).hunks
    assert hunk.header == "@@ -1,3 +1,4 @@"
    assert rows(hunk) == [
        ("add", None, 1, "new"),
        ("context", 1, 2, "l1"),
        ("context", 2, 3, "l2"),
        ("context", 3, 4, "l3"),
    ]


def test_every_row_has_its_text_and_the_numbers_of_both_sides():
    old = "".join(f"l{n}\n" for n in range(1, 9))
    new = old.replace("l2\n", "l2\nn1\nn2\n").replace("l6\n", "")
    (hunk,) = file_diff(old, new).hunks
    assert hunk.header == "@@ -1,8 +1,9 @@"
    assert rows(hunk) == [
        ("context", 1, 1, "l1"),
        ("context", 2, 2, "l2"),
        ("add", None, 3, "n1"),
        ("add", None, 4, "n2"),
        ("context", 3, 5, "l3"),
        ("context", 4, 6, "l4"),
        ("context", 5, 7, "l5"),
        ("del", 6, None, "l6"),
        ("context", 7, 8, "l7"),
        ("context", 8, 9, "l8"),
    ]
    found = file_diff(old, new)
    assert (found.added, found.removed) == (2, 1)


def test_a_one_line_file_changed_is_two_rows():
    (hunk,) = file_diff("x\n", "y\n").hunks
    assert rows(hunk) == [("del", 1, None, "x"), ("add", None, 1, "y")]
    assert hunk.header == "@@ -1,1 +1,1 @@"


def test_a_last_line_without_a_newline_is_a_line():
    found = file_diff("a\nb", "a\nc")
    (hunk,) = found.hunks
    assert rows(hunk) == [("context", 1, 1, "a"), ("del", 2, None, "b"), ("add", None, 2, "c")]
    assert (found.added, found.removed, hunk.header) == (1, 1, "@@ -1,2 +1,2 @@")


def test_adding_the_final_newline_changes_the_last_line():
    found = file_diff("a\nb", "a\nb\n")
    assert found.status == "modified" and (found.added, found.removed) == (1, 1)
    (hunk,) = found.hunks
    assert [(kind, old, new) for kind, old, new, _ in rows(hunk)] == [
        ("context", 1, 1),
        ("del", 2, None),
        ("add", None, 2),
    ]


def test_a_changed_first_word_is_marked_from_the_start_of_the_line():
    (hunk,) = file_diff("alpha beta gamma\n", "omega beta gamma\n").hunks
    assert [html for *_, html in rows(hunk)] == [
        MARK.format("alpha") + " beta gamma",
        MARK.format("omega") + " beta gamma",
    ]


# Words (runs of letters, of spaces, or one punctuation mark) alike: 2 × 3 matching words out of
# 9 + 11 is a ratio of exactly 0.3; one word fewer or more on the new side is just above or below.
@pytest.mark.parametrize(
    ("new", "marked"),
    [
        ("A:B!C+s+t+u", ["A", ",", "B", ";", "C", "-p-q"]),  # 6/20: at the threshold
        ("A:B!C+s+t+", ["A", ",", "B", ";", "C", "-p-q"]),  # 6/19: just above
        ("A:B!C+s+t+u+", None),  # 6/21: just below, the line is new
    ],
    ids=["at-0.3", "above-0.3", "below-0.3"],
)
def test_word_marks_need_lines_alike_by_three_tenths(new, marked):
    (hunk,) = file_diff("A,B;C-p-q\n", new + "\n").hunks
    removed, added = (str(r.html) for r in hunk.rows)
    if marked is None:
        assert (removed, added) == ("A,B;C-p-q", new)
    else:
        assert removed == "".join(MARK.format(w) if n % 2 else w for n, w in enumerate(marked))
        assert added.startswith("A" + MARK.format(":") + "B" + MARK.format("!") + "C<mark")


@pytest.mark.parametrize(
    ("old", "new"),
    [(None, "text\n"), ("text\n", None), ("a\x00b", "text\n"), ("text\n", "a\x00b")],
    ids=["old-not-text", "new-not-text", "old-nul", "new-nul"],
)
def test_a_file_binary_on_either_side_is_binary(old, new):
    found = diffs.compute_diff({"f.bin": old}, {"f.bin": new}, old_hash="o", new_hash="n")
    (changed,) = found.files
    assert (changed.status, changed.is_binary) == ("modified", True)
    assert (changed.hunks, changed.added, changed.removed) == ((), 0, 0)


@pytest.mark.parametrize(
    ("old", "new"),
    [(f"x = 1\n{LONG}\n", "x = 2\n"), ("x = 1\n", f"x = 2\n{LONG}\n")],
    ids=["old-large", "new-large"],
)
def test_a_file_large_on_either_side_is_diffed_plain(old, new):
    changed = file_diff(old, new, path="big.py")
    assert changed.is_plain and not changed.is_binary
    kinds = [r.kind for r in changed.hunks[0].rows]
    assert kinds in (["del", "del", "add"], ["del", "add", "add"])
    assert not any("<mark" in r.html for r in changed.hunks[0].rows)


def test_small_text_on_both_sides_is_highlighted_with_word_marks():
    changed = file_diff("x = 1\n", "x = 2\n", path="small.py")
    assert not (changed.is_plain or changed.is_binary)
    assert all("<mark" in r.html and '<span class="' in r.html for r in changed.hunks[0].rows)


def test_lines_the_highlighter_split_otherwise_show_as_escaped_plain_text(monkeypatch):
    monkeypatch.setattr(
        highlight, "highlight_many", lambda files: ["<pre>one block</pre>" for _ in files]
    )
    (hunk,) = file_diff("<b>\n", "<b>\n<i>\u202e\n").hunks
    assert rows(hunk) == [
        ("context", 1, 1, "&lt;b&gt;"),
        ("add", None, 2, "&lt;i&gt;⟨U+202E⟩"),
    ]


def test_a_removed_line_after_added_lines_starts_a_new_row_of_the_split_view():
    def row(kind, old, new):
        return diffs.DiffRow(kind, old, new, escape(kind))

    added, removed = row("add", None, 1), row("del", 1, None)
    later_added, later_removed = row("add", None, 2), row("del", 2, None)
    split = diffs.split_rows((added, removed, later_added, later_removed))
    assert [(s.old, s.new) for s in split] == [
        (None, added),
        (removed, later_added),
        (later_removed, None),
    ]


def test_the_banner_tells_what_the_new_side_hides_and_nothing_for_a_removed_file():
    hidden = "x\u200b\n"
    assert file_diff(None, hidden).reveal.hidden == [("U+200B", "ZERO WIDTH SPACE", 1)]
    assert file_diff("x\n", hidden).reveal.hidden_count == 1
    assert not file_diff(hidden, "x\n").reveal
    assert not file_diff(hidden, None).reveal


@pytest.mark.parametrize(
    ("old", "new"),
    [("x\n", "y\n"), (None, ""), ("a\x00b", "text\n"), (None, "x\n"), ("x\n", None)],
    ids=["modified", "empty-added", "binary", "added", "removed"],
)
def test_a_files_section_is_named_by_the_same_hash_of_its_path_as_on_the_card(old, new):
    found = file_diff(old, new, path="src/app.ts")
    digest = hashlib.sha256(b"src/app.ts").hexdigest()[:12]
    assert (found.anchor, highlight.file_anchor("src/app.ts")) == (f"d-{digest}", f"f-{digest}")


# difflib's autojunk leaves a line that fills more than 1% of a side of 200 lines or more
# unmatched: fast on a large file, but a change there may take the repeated lines with it.
def test_only_a_large_file_is_diffed_with_autojunk():
    zeros = "0\n" * 100
    small = file_diff(zeros + "1\n" + zeros, zeros + "2\n" + zeros)
    assert (small.is_plain, small.added, small.removed) == (False, 1, 1)
    assert [h.header for h in small.hunks] == ["@@ -98,7 +98,7 @@"]
    large = file_diff(f"{LONG}\n{zeros}1\n{zeros}", f"{LONG}\n{zeros}2\n{zeros}")
    assert large.is_plain and large.added == large.removed > 1
