"""The card reveals what a reader would miss: hidden characters and mixed-script words as
visible, named markers, a banner per file and a line in the decision panel; every file in full
or one click away with the true reason; names isolated in <bdi> everywhere."""

import re

from django.core.cache import cache
from django.urls import reverse

from rooms.content import highlight
from rooms.content.characters import reveal
from rooms.models import Room
from rooms.services import approve_proposal
from tests.rooms.corpus import case_files
from tests.rooms.helpers import propose

ZERO_WIDTH_MARKS = [
    ("U+200B", "ZERO WIDTH SPACE"),
    ("U+200D", "ZERO WIDTH JOINER"),
    ("U+3164", "HANGUL FILLER"),
    *[
        ("U+E00" + h, "TAG LATIN SMALL LETTER " + c)
        for h, c in zip(["69", "67", "6E", "6F", "72", "65"], "IGNORE", strict=True)
    ],
    ("U+00AD", "SOFT HYPHEN"),
    ("U+FE0F", "VARIATION SELECTOR-16"),
    ("U+200D", "ZERO WIDTH JOINER"),
    ("U+3164", "HANGUL FILLER"),
]


FLAG = "\U0001f3f4\U000e0067\U000e0062\U000e0073\U000e0063\U000e0074\U000e007f"


def card_html(client, owner, proposal) -> str:
    client.force_login(owner)
    response = client.get(reverse("rooms:proposal", args=[proposal.pk]))
    assert response.status_code == 200
    return response.content.decode()


def markers(html: str) -> list[tuple[str, str]]:
    return re.findall(
        r'<span class="uc uc-hidden" tabindex="0" title="(U\+[0-9A-F]+) ([^"]+)"', html
    )


def test_hidden_characters_are_found_in_order_and_emoji_sequences_are_left_alone():
    found = reveal(case_files("zero-width")["src/App.tsx"])
    assert [(f"U+{ord(m.char):04X}", m.name) for m in found.marks] == ZERO_WIDTH_MARKS
    assert not any(m.is_refused for m in found.marks)


def test_a_byte_order_mark_is_revealed_anywhere_but_at_the_start():
    assert reveal("\ufeffconst a = 1;").marks == []
    assert [m.index for m in reveal("\ufeffa\ufeff").marks] == [2]


def test_words_that_mix_latin_with_cyrillic_or_greek_are_flagged():
    text = case_files("trojan-homoglyph")["src/App.tsx"]
    words = [(w.word, w.scripts) for w in reveal(text).words]
    assert words == [
        ("\u0456sAdmin", ("Latin", "Cyrillic")),
        ("p\u0430yp\u0430l", ("Latin", "Cyrillic")),
        ("\u0456sAdmin", ("Latin", "Cyrillic")),
    ]
    assert reveal("const ο = 'micr\u03bfsoft';").words[0].scripts == ("Latin", "Greek")


def test_digits_and_underscores_in_a_mixed_word_belong_to_no_script():
    (word,) = reveal("const p\u0430y_2 = 1; const \u0430_1 = 2;\n").words
    assert (word.word, word.scripts) == ("p\u0430y_2", ("Latin", "Cyrillic"))
    assert word.odd == ("\u0430 U+0430 CYRILLIC SMALL LETTER A",)  # not "_" nor "2"


def test_one_script_words_and_latin_with_japanese_are_not_flagged():
    text = "const café = 'naïve'; const Ελλάδα = 'Москва'; const ReactのButton = '日本語かな';"
    assert reveal(text).words == []


def test_the_card_shows_each_hidden_character_as_a_named_marker_with_a_banner(
    client, owner, room, agent
):
    files = {**case_files("zero-width"), "src/util.ts": "export const a = 'x\u2060y';\n"}
    files["src/auth.tsx"] = case_files("trojan-homoglyph")["src/App.tsx"]
    html = card_html(client, owner, propose(room, agent, files))
    assert markers(html) == [
        *ZERO_WIDTH_MARKS,
        ("U+2060", "WORD JOINER"),
    ]
    assert 'data-codepoint="U+200B">⟨U+200B⟩</span>' in html
    assert html.count("data-reveal-banner") == 3
    assert "<strong>13 hidden characters</strong>" in html
    assert "<strong>1 hidden character</strong>" in html
    assert "<strong>2 words mix scripts</strong>" in html
    assert re.search(r"<li data-hidden-files>2 files contain hidden characters: ", html)
    assert re.search(r"<li data-mixed-files>1 file has words that mix scripts: ", html)
    assert (
        'title="Mixes Latin and Cyrillic: і U+0456 CYRILLIC SMALL LETTER BYELORUSSIAN-UKRAINIAN I"'
        in html
    )
    # What runs is on the card: no invisible character reaches the page as itself.
    # (The two joiners of the family emoji stay: they are what makes it one emoji.)
    code = html[html.index("review-main") :]
    assert not re.search("[\u200b\u2060\u3164\u00ad\U000e0000-\U000e007f]", code.replace(FLAG, ""))
    assert code.count("\u200d") == 2


def test_markers_are_escaped_and_cannot_carry_markup(client, owner, room, agent):
    payload = '"><img src=x onerror=alert(1)>\u200b<script>alert(2)</script>'
    app = f"const note = `{payload}`;\nexport default () => <p>{{note}}</p>;\n"
    files = {"src/App.tsx": app, "notes.txt": payload}
    html = card_html(client, owner, propose(room, agent, files))
    assert "<img src=x" not in html and "<script>alert" not in html
    assert (
        '"&gt;&lt;img src=x onerror=alert(1)&gt;<span class="uc uc-hidden" tabindex="0" '
        'title="U+200B ZERO WIDTH SPACE" aria-label="hidden character U+200B ZERO WIDTH SPACE" '
        'data-codepoint="U+200B">⟨U+200B⟩</span>&lt;script&gt;alert(2)&lt;/script&gt;'
    ) in html


def test_old_cache_entries_cannot_show_a_rendering_without_markers(client, owner, room, agent):
    text = "const role = 'admin\u200b';\n"
    stale = highlight.cache_key("src/App.tsx", text).replace(
        f"hl:{highlight.CACHE_VERSION}:", "hl:v1:"
    )
    cache.set(stale, "<p>old rendering without markers</p>")
    assert highlight.CACHE_VERSION != "v1"
    html = highlight.highlight(text, "src/App.tsx")
    assert "⟨U+200B⟩" in html and "old rendering" not in html


def test_a_long_line_file_is_one_click_away_with_the_true_reason(client, owner, room, agent):
    html = card_html(client, owner, propose(room, agent, case_files("long-line")))
    assert "Not rendered yet: long line: 5,000 characters." in html
    assert '<span class="file-meta">1 line · 4.9\xa0KB</span>' in html
    assert "1 lines" not in html


def test_a_large_file_is_one_click_away_with_its_size(client, owner, room, agent):
    proposal = propose(room, agent, case_files("large-file"))
    html = card_html(client, owner, proposal)
    assert "Not rendered yet: large file: 180 KB." in html
    url = reverse("rooms:proposal_file", args=[proposal.pk])
    part = client.get(f"{url}?file={highlight.file_anchor('src/data.ts')}").content.decode()
    assert part.count('<span class="line">') == case_files("large-file")["src/data.ts"].count("\n")


def test_names_render_inside_bdi_with_their_invisible_characters_shown(
    client, owner, room, agent, files
):
    # An administrator may give a Room any name; an app name may hold a zero-width space.
    Room.objects.filter(pk=room.pk).update(name="Falcon \u202eevil\u202c \u05e9\u05dc\u05d5\u05dd")
    proposal = propose(room, agent, files, name="Ti\u200bmer")
    client.force_login(owner)
    room_name = (
        '<bdi>Falcon <span class="uc uc-inline" title="U+202E RIGHT-TO-LEFT OVERRIDE">'
        '⟨U+202E⟩</span>evil<span class="uc uc-inline" title="U+202C POP DIRECTIONAL '
        'FORMATTING">⟨U+202C⟩</span> \u05e9\u05dc\u05d5\u05dd</bdi>'
    )
    app_name = (
        '<bdi>Ti<span class="uc uc-inline" title="U+200B ZERO WIDTH SPACE">⟨U+200B⟩</span>mer</bdi>'
    )
    inbox = client.get(reverse("rooms:inbox")).content.decode()
    assert room_name in inbox and app_name in inbox
    card = client.get(reverse("rooms:proposal", args=[proposal.pk])).content.decode()
    assert f"<h1>{app_name}</h1>" in card
    assert "<title>(1) Review “Ti⟨U+200B⟩mer” · osFoundry</title>"  # (1): the pending count in card
    approve_proposal(owner=owner, proposal_id=proposal.pk)
    page = client.get(reverse("rooms:room", args=[room.pk])).content.decode()
    assert f"<h1>{room_name}</h1>" in page
    assert f'data-build-state="ready">{app_name}</a>' in page
    assert "<title>Falcon ⟨U+202E⟩evil⟨U+202C⟩ \u05e9\u05dc\u05d5\u05dd · osFoundry</title>" in page
    for html in (inbox, card, page):
        assert "\u202e" not in html and "\u200b" not in html
