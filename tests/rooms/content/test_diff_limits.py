"""What an agent's files can make the owner's card spend on its diff (issue 31): repeated lines
or words get their right hunks and marks without difflib searching more than the diff's budget
of pairs; more changes than it compares, or more rows than a card shows, say "Too many changes
to show" and keep the file reviewable, its new text in full a click away."""

import re
from bisect import bisect_left
from difflib import SequenceMatcher

import pytest
from django.urls import reverse

from rooms.content import diffs
from rooms.review.revisions import propose_update, revise_proposal
from rooms.services import approve_proposal
from tests.rooms.helpers import propose


@pytest.fixture(autouse=True)
def searched(monkeypatch):
    """The pairs of lines (or words) difflib compares, counted as it is asked to (each item of
    the first range against its places in the second, as find_longest_match scans them): one
    card's diffs may not make it compare more than their budget."""
    total = [0]
    real = SequenceMatcher.find_longest_match

    def counted(self, alo=0, ahi=None, blo=0, bhi=None):
        ahi = len(self.a) if ahi is None else ahi
        bhi = len(self.b) if bhi is None else bhi
        total[0] += sum(bisect_left(self.b2j.get(item, []), bhi) for item in self.a[alo:ahi])
        budget = diffs.LINE_STEPS + diffs.WORD_STEPS
        assert total[0] <= budget, f"difflib asked to compare {total[0]:,} pairs on one card"
        return real(self, alo, ahi, blo, bhi)

    monkeypatch.setattr(SequenceMatcher, "find_longest_match", counted)
    return total


def revision_card(client, owner, room, agent, files, old, new, path="notes.txt"):
    """The owner's card of a revision that changes `path` from `old` to `new`."""
    first = propose(room, agent, {**files, path: old})
    revision = revise_proposal(
        caller=agent,
        proposal_id=str(first.pk),
        files={**first.files, path: new},
        idempotency_key="revise-0001",
    ).proposal
    client.force_login(owner)
    response = client.get(reverse("rooms:proposal", args=[revision.pk]))
    assert response.status_code == 200
    return revision, response.content.decode()


def diff_section(html):
    """The card's diff, up to the revision's files shown in full."""
    start = html.index('<section class="diff"')
    return html[start : html.index("<h2>", start)]


def rows(html, path="notes.txt"):
    """(kind, old number, new number) of each diff row of `path`."""
    found = re.findall(
        rf'<tr class="diff-row diff-(\w+)" data-path="{re.escape(path)}"[^>]*>\s*'
        # The new side's number is a link to its row (a line to comment on).
        r'<td class="diff-num">(\d*)</td><td class="diff-num">(?:<a [^>]*>)?(\d*)(?:</a>)?</td>',
        html,
    )
    return [
        (kind, int(old) if old else None, int(new) if new else None) for kind, old, new in found
    ]


@pytest.mark.parametrize("lines", [10_000, 12_000])
def test_a_file_of_one_repeated_line_revised_at_its_last_line_shows_that_line(
    client, owner, room, agent, files, lines
):
    _, html = revision_card(
        client, owner, room, agent, files, "a\n" * lines, "a\n" * (lines - 1) + "b\n"
    )
    diff = diff_section(html)
    assert f"@@ -{lines - 3},4 +{lines - 3},4 @@" in diff
    assert rows(diff) == [
        ("context", lines - 3, lines - 3),
        ("context", lines - 2, lines - 2),
        ("context", lines - 1, lines - 1),
        ("del", lines, None),
        ("add", None, lines),
    ]
    assert "Too many changes to show" not in html


def test_a_file_of_one_repeated_line_changed_at_both_ends_shows_both_ends(
    client, owner, room, agent, files
):
    _, html = revision_card(
        client, owner, room, agent, files, "a\n" * 10_000, "b\n" + "a\n" * 9_998 + "b\n"
    )
    diff = diff_section(html)
    # As `git diff` shows it: any 9,998 of the old lines are the 9,998 kept.
    assert re.findall(r"@@ [^@]+ @@", diff) == ["@@ -1,3 +1,4 @@", "@@ -9996,5 +9997,4 @@"]
    changed = [row for row in rows(diff) if row[0] != "context"]
    assert changed == [("add", None, 1), ("del", 9_999, None), ("del", 10_000, None)] + [
        ("add", None, 10_000)
    ]
    assert '<span class="diff-plus">+2</span> <span class="diff-minus">−2</span>' in diff


def test_more_changes_than_the_diff_compares_say_so_and_the_new_file_stays_reviewable(
    client, owner, room, agent, files
):
    revision, html = revision_card(
        client, owner, room, agent, files, "a\n" * 10_000, "a\nb\n" * 5_000
    )
    diff = diff_section(html)
    assert (
        "Too many changes to show: comparing the two versions line by line takes too long." in diff
    )
    assert rows(diff) == []
    assert 'data-path="notes.txt" data-status="modified"' in diff and "data-viewed" in diff
    file_url = reverse("rooms:proposal_file", args=[revision.pk]) + "?path=notes.txt"
    assert f'data-load-url="{file_url}"' in diff
    client.force_login(owner)
    full = client.get(file_url).content.decode()
    assert full.count('<span class="linenos">') == 10_000 and ">b\n" in full
    # And in full on the card, as every file of a revision.
    assert "All files of revision 2" in html


def test_word_marks_in_long_lines_of_one_repeated_word_mark_the_changed_word(
    client, owner, room, agent, files
):
    words = "a " * 490
    _, html = revision_card(
        client, owner, room, agent, files, f"{words}a\n" * 90, f"{words}b\n" * 90
    )
    diff = diff_section(html)
    assert [kind for kind, *_ in rows(diff)] == ["del"] * 90 + ["add"] * 90
    assert diff.count('<mark class="diff-word">a</mark></td>') == 90
    assert diff.count('<mark class="diff-word">b</mark></td>') == 90
    assert diff.count("<mark") == 180


def test_rows_past_the_html_a_diff_shows_are_summed_up_and_the_file_is_linked(
    client, owner, room, agent, files
):
    # Two rewrites of 1,000 lines each: 2,000 rows, about 400,000 characters of HTML apiece.
    old = {f"notes/{name}.txt": "".join(f"line {n}\n" for n in range(1000)) for name in "ab"}
    new = {path: text.replace("\n", "!\n") for path, text in old.items()}
    app = approve_proposal(owner=owner, proposal_id=propose(room, agent, {**files, **old}).pk)
    edited = files["src/App.tsx"].replace("seconds: 90 }", "seconds: 60 }", 1)
    update = propose_update(
        caller=agent,
        room_id=str(room.pk),
        instance_id=str(app.pk),
        files={**files, **new, "src/App.tsx": edited},
        idempotency_key="update-0001",
    ).proposal
    client.force_login(owner)
    html = client.get(reverse("rooms:proposal", args=[update.pk])).content.decode()
    start = html.index('<section class="diff"')
    diff = html[start:]
    assert len(rows(diff, "notes/a.txt")) == 2_000
    assert rows(diff, "notes/b.txt") == []
    assert "Too many changes to show: 2,000 changed lines, more than one card shows." in diff
    assert len([row for row in rows(diff, "src/App.tsx") if row[0] != "context"]) == 2
    file_url = reverse("rooms:proposal_file", args=[update.pk]) + "?path=notes/b.txt"
    assert f'data-load-url="{file_url}"' in diff
    assert "line 999!" in client.get(file_url).content.decode()
    rows_html = sum(len(row) for row in re.findall(r"<tr class=\"diff-row.*?</tr>", diff, re.S))
    assert rows_html <= diffs.MAX_HTML_CHARS
