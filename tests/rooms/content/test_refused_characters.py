"""What the card shows is what runs: characters refused in files, paths, names and keys (SPEC §3).

Each rule once, through the service every interface calls; test_refusals_over_mcp_and_rest.py
checks the same refusals through the real protocols.
"""

import pytest

from osfoundry.errors import Invalid
from rooms.models import Proposal, RoomEvent
from rooms.services import propose_repo_version, propose_snippet
from tests.rooms.corpus import case_files

APP = "export default function App() {\n  return <p>hi</p>;\n}\n"
BIDI_CONTROLS = [*range(0x202A, 0x202F), *range(0x2066, 0x206A)]


def propose(room, agent, files, *, name="Timer", key="key-00001"):
    return propose_snippet(
        caller=agent, room_id=str(room.pk), name=name, files=files, idempotency_key=key
    )


def refusal(room, agent, files, **kwargs) -> Invalid:
    with pytest.raises(Invalid) as error:
        propose(room, agent, files, **kwargs)
    assert not Proposal.objects.exists()
    assert not RoomEvent.objects.exists()
    return error.value


def test_a_right_to_left_override_is_refused_with_its_line_column_and_the_fix(room, agent):
    line4 = 'const access = "user"; // ok \u202e'
    assert line4.index("\u202e") == 29
    app = f"{APP}\n\n{line4}\n"
    error = refusal(room, agent, {"src/App.tsx": app})
    assert error.message == (
        "src/App.tsx:6:30: bidirectional control U+202E (RIGHT-TO-LEFT OVERRIDE) can make code "
        "read differently than it runs; write it as an escape (\\u202E) inside a string if you "
        "need it"
    )
    assert error.field == "files.src/App.tsx"
    assert error.code == "invalid_files"


@pytest.mark.parametrize(
    ("case", "first"),
    [
        (
            "trojan-early-return",
            "src/App.tsx:2:43: bidirectional control U+2067 (RIGHT-TO-LEFT ISOLATE) can make "
            "code read differently than it runs; write it as an escape (\\u2067) inside a string "
            "if you need it",
        ),
        (
            "trojan-commenting-out",
            "src/App.tsx:3:5: bidirectional control U+202E (RIGHT-TO-LEFT OVERRIDE) can make "
            "code read differently than it runs; write it as an escape (\\u202E) inside a string "
            "if you need it",
        ),
        (
            "trojan-stretched-string",
            "src/App.tsx:3:27: bidirectional control U+202E (RIGHT-TO-LEFT OVERRIDE) can make "
            "code read differently than it runs; write it as an escape (\\u202E) inside a string "
            "if you need it",
        ),
    ],
)
def test_trojan_source_is_refused_naming_every_control_and_nothing_is_stored(
    room, agent, case, first
):
    error = refusal(room, agent, case_files(case))
    problems = error.message.split("; write it as an escape")
    assert error.message.startswith(first)
    # Every bidirectional control in the file, not just the first.
    text = case_files(case)["src/App.tsx"]
    assert len(problems) - 1 == sum(text.count(chr(cp)) for cp in BIDI_CONTROLS)


@pytest.mark.parametrize("cp", BIDI_CONTROLS)
def test_each_of_the_nine_bidirectional_controls_is_refused_in_files_paths_and_names(
    room, agent, cp
):
    ch = chr(cp)
    error = refusal(
        room, agent, {"src/App.tsx": f"// {ch}\n{APP}", f"src/a{ch}.ts": "x"}, name=f"Ti{ch}mer"
    )
    assert f"name: column 3: bidirectional control U+{cp:04X}" in error.message
    assert f"src/App.tsx:1:4: bidirectional control U+{cp:04X}" in error.message
    assert f"unsafe path 'src/a\\u{cp:04x}.ts': column 6: bidirectional control" in error.message
    assert error.field == "name"


@pytest.mark.parametrize(
    ("ch", "named"),
    [
        ("\x00", "U+0000 (NULL)"),
        ("\x07", "U+0007 (BELL)"),
        ("\x1b", "U+001B (ESCAPE)"),
        ("\x7f", "U+007F (DELETE)"),
        ("\x85", "U+0085 (NEXT LINE)"),
        ("\x9b", "U+009B (CONTROL SEQUENCE INTRODUCER)"),
    ],
)
def test_control_characters_are_refused_in_files(room, agent, ch, named):
    error = refusal(room, agent, {"src/App.tsx": f"const s = 'a{ch}b';\n{APP}"})
    assert error.message.startswith(f"src/App.tsx:1:13: control character {named} is invisible")


def test_form_feed_and_vertical_tab_are_refused_because_line_numbers_would_disagree(room, agent):
    error = refusal(room, agent, {"src/App.tsx": f"{APP}\x0c\n\x0b"})
    assert error.message == (
        "src/App.tsx:4:1: control character U+000C (FORM FEED) breaks a line for some tools and "
        "not for others, so line numbers would disagree; write it as an escape (\\u000C) inside "
        "a string if you need it; src/App.tsx:5:1: control character U+000B (LINE TABULATION) "
        "breaks a line for some tools and not for others, so line numbers would disagree; write "
        "it as an escape (\\u000B) inside a string if you need it"
    )


def test_line_separators_are_refused_because_they_end_a_javascript_comment(room, agent):
    error = refusal(room, agent, {"src/App.tsx": f"// note\u2028alert(1)\n{APP}"})
    assert error.message.startswith(
        "src/App.tsx:1:8: line separator U+2028 (LINE SEPARATOR) ends a line (and a // comment) "
        "in JavaScript but not on the review card"
    )


def test_lone_surrogates_are_refused_in_a_file_and_a_path(room, agent):
    error = refusal(room, agent, case_files("surrogates"))
    assert error.message == (
        "src/App.tsx:1:17: lone surrogate U+DC80 is not a character: no UTF-8 text can hold it; "
        "write it as an escape (\\uDC80) inside a string if you need it; "
        "unsafe path 'src/\\ud800.ts': column 5: lone surrogate U+D800 in a path; name the file "
        "with visible characters only"
    )
    assert error.field == "files.src/App.tsx"


@pytest.mark.parametrize("cp", [0xFFFE, 0xFFFF, 0xFDD0, 0xFDEF, 0x1FFFF, 0x10FFFE])
def test_noncharacters_are_refused(room, agent, cp):
    error = refusal(room, agent, {"src/App.tsx": f"const s = '{chr(cp)}';\n{APP}"})
    escape = f"\\u{cp:04X}" if cp <= 0xFFFF else f"\\u{{{cp:X}}}"
    assert error.message == (
        f"src/App.tsx:1:12: noncharacter U+{cp:04X} is reserved for a program's internal use, "
        f"never for text; write it as an escape ({escape}) inside a string if you need it"
    )


def test_c1_controls_case_lists_every_control_at_once(room, agent):
    error = refusal(room, agent, case_files("c1-controls"))
    positions = [part.split(": ")[0] for part in error.message.split("; write it")[:-1]]
    positions = [p.rsplit("; ", 1)[-1].removeprefix("if you need it; ") for p in positions]
    assert positions == [
        "src/App.tsx:2:19",
        "src/App.tsx:3:20",
        "src/App.tsx:4:19",
        "src/App.tsx:5:20",
        "src/App.tsx:6:1",
    ]


def test_columns_count_characters_not_bytes_or_utf16_units(room, agent):
    # é is two UTF-8 bytes and 😀 two UTF-16 units; each is one column.
    error = refusal(room, agent, {"src/App.tsx": f"// é😀\x1b\n{APP}"})
    assert error.message.startswith("src/App.tsx:1:6: control character U+001B (ESCAPE)")


def test_crlf_and_cr_end_lines_as_javascript_does(room, agent):
    error = refusal(room, agent, {"src/App.tsx": "a\r\nb\rc\n\x1b"})
    assert error.message.startswith("src/App.tsx:4:1: control character U+001B")


def test_a_binary_file_is_named_once_not_character_by_character(room, agent):
    soup = "".join(chr(i % 32) for i in range(1, 400) if i % 32 not in (9, 10, 13))
    error = refusal(room, agent, {"src/App.tsx": APP, "assets/logo.png": soup})
    assert error.message.count("assets/logo.png:1:") == 10
    assert error.message.endswith(
        f"assets/logo.png: {len(soup) - 10} more such characters; this looks like a binary "
        "file, and a snippet carries text files only: drop it, or put the app in a repository "
        "and use propose_room_repo_app"
    )


def test_tab_newlines_and_visible_unicode_are_accepted(room, agent):
    app = "// Größe: 10 € — ok ✓ 日本語 👨\u200d👩\u200d👧\r\n\tconst a = 1;\r" + APP
    result = propose(room, agent, {"src/App.tsx": app})
    assert Proposal.objects.get() == result.proposal
    assert result.proposal.files["src/App.tsx"] == app


def test_invisible_characters_are_accepted_in_files_and_revealed_later(room, agent):
    result = propose(room, agent, case_files("zero-width"))
    assert result.proposal.files == case_files("zero-width")


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("Timer\x00", "name: column 6: control character U+0000 (NULL)"),
        ("Two\nlines", "name: column 4: control character U+000A (LINE FEED)"),
        ("Tab\there", "name: column 4: control character U+0009 (CHARACTER TABULATION)"),
        (
            "Invoice \u202egnp.exe",
            "name: column 9: bidirectional control U+202E (RIGHT-TO-LEFT OVERRIDE) can make the "
            "text around it read differently than it is; remove it from the name",
        ),
        ("Bad \udc80", "name: column 5: lone surrogate U+DC80"),
    ],
)
def test_names_refuse_every_control_character_and_bidirectional_control(room, agent, name, message):
    error = refusal(room, agent, {"src/App.tsx": APP}, name=name)
    assert error.message.startswith(message)
    assert (error.field, error.code) == ("name", "invalid_name")


@pytest.mark.parametrize("key", ["key-\x00-0001", "key-0001\n", "key-\u202e-0001", "key-\ud800-01"])
def test_idempotency_keys_refuse_control_and_bidirectional_characters(room, agent, key):
    error = refusal(room, agent, {"src/App.tsx": APP}, key=key)
    assert error.message.startswith("idempotency_key: column ")
    assert error.message.endswith("remove it from the key")
    assert (error.field, error.code) == ("idempotency_key", "invalid_idempotency_key")


def test_every_problem_is_reported_at_once_key_first(room, agent):
    error = refusal(room, agent, {"src/\u202e.ts": "\x1b"}, name="Ti\x00mer", key="key-\x00-00001")
    parts = error.message.split("; ")
    assert parts[0].startswith("idempotency_key: column 5: control character U+0000 (NULL)")
    assert any(p.startswith("name: column 3: control character U+0000") for p in parts)
    assert any(p.startswith("unsafe path 'src/\\u202e.ts': column 5") for p in parts)
    assert parts[-1] == "src/App.tsx missing"
    assert error.field == "idempotency_key"


def test_a_repo_proposal_refuses_control_characters_in_its_name_and_key(room, agent):
    with pytest.raises(Invalid) as error:
        propose_repo_version(
            caller=agent,
            room_id=str(room.pk),
            name="Repo \u2066app",
            repository_id="00000000-0000-0000-0000-000000000000",
            version_id="00000000-0000-0000-0000-000000000000",
            idempotency_key="key-\x1b-00001",
        )
    assert error.value.message.startswith("idempotency_key: column 5: control character U+001B")
    assert "name: column 6: bidirectional control U+2066 (LEFT-TO-RIGHT ISOLATE)" in (
        error.value.message
    )
    assert not Proposal.objects.exists()
