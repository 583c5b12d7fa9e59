import pytest

from agents.mentions import body_mentions_handle, mentioned_handles

# SPEC §7 / seed 004 examples first, then the edges around them.
TABLE = [
    ("@bob-codex is the migration done?", True),
    ("ask @bob-codex.", True),
    ("(@bob-codex)", True),
    ("@Bob-Codex hi", True),
    ("@BOB-CODEX", True),
    ("mail bob@bob-codex.dev", False),
    ("@bob-codex-2 hi", False),
    ("@bob-codex_x hi", False),
    ("@bob-codexy hi", False),
    ("@bob-codex", True),
    ("hey @bob-codex, look", True),
    ("hey @bob-codex: look", True),
    ("hey @bob-codex! look", True),
    ("hey @bob-codex? look", True),
    ("line one\n@bob-codex", True),
    ("@alice @bob-codex", True),
    ('"@bob-codex"', True),
    ("[@bob-codex]", True),
    ("@bob-codex's work", True),
    ("@bob-codex/x", True),
    ("@@bob-codex", True),
    ("café@bob-codex", True),  # \w is ASCII-only, as in the web client's JavaScript regex
    ("x@bob-codex", False),
    ("_@bob-codex", False),
    ("1@bob-codex", False),
    (".@bob-codex", False),
    ("-@bob-codex", False),
    ("@bob-codex-", False),
    ("@bob-codex0", False),
    ("@bob-codexé", True),  # é is not a JavaScript \w either
    ("@bob codex", False),
    ("bob-codex", False),
    ("@ bob-codex", False),
    ("@bob-code", False),
    ("", False),
]


@pytest.mark.parametrize(("body", "expected"), TABLE)
def test_mention_rule(body, expected):
    assert body_mentions_handle(body, "bob-codex") is expected


def test_handle_is_regex_escaped():
    assert not body_mentions_handle("@bXb", "b.b")
    assert body_mentions_handle("@b.b", "b.b")


@pytest.mark.parametrize(("body", "expected"), TABLE)
def test_mentioned_handles_agrees_with_the_rule(body, expected):
    assert ("bob-codex" in mentioned_handles(body)) is expected


def test_mentioned_handles_lists_each_handle_once_lowercased():
    body = "@Alice-Claude and @bob-codex, then @ALICE-claude again; mail x@carol.dev"
    assert mentioned_handles(body) == ["alice-claude", "bob-codex"]
