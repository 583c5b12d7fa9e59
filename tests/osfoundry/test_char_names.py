"""osfoundry.text.char_name: every character a card reveals gets a name a reviewer can read."""

import pytest

from osfoundry.text import char_name, codepoint


@pytest.mark.parametrize(
    ("ch", "name"),
    [
        ("\x00", "NULL"),
        ("\x1b", "ESCAPE"),
        ("\x7f", "DELETE"),
        ("\x85", "NEXT LINE"),
        ("\ud800", "LONE SURROGATE"),
        ("\ufdd0", "NONCHARACTER"),
        ("\U0010ffff", "NONCHARACTER"),
        ("\u202e", "RIGHT-TO-LEFT OVERRIDE"),
        ("\U000e0001", "LANGUAGE TAG"),
        ("\U000f0000", "UNNAMED CHARACTER"),  # private use: no name in Unicode
    ],
)
def test_each_character_has_a_readable_name(ch, name):
    assert char_name(ch) == name


def test_a_code_point_is_written_with_at_least_four_hex_digits():
    assert codepoint("\x00") == "U+0000"
    assert codepoint("\U000e0001") == "U+E0001"
