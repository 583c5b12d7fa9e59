"""Words that mix scripts, as `раypal` (Cyrillic р and а, then Latin): Unicode TR39 §5.1.

A word (a run of letters, marks, digits and `_`) mixes scripts when its *resolved script set* is
empty: the intersection, over its characters, of each one's Script_Extensions, where Common and
Inherited characters (digits, `_`, most punctuation and combining marks) go with any script, and
Han, Hiragana, Katakana, Hangul and Bopomofo are augmented with the writing systems that combine
them (Japanese, Korean, Chinese with Bopomofo). As TR39's "Highly Restrictive" level, Latin
mixed with one of those three writing systems is accepted (`ReactのButton`).

Script_Extensions come from the `regex` package's Unicode data (`\\p{scx=…}`), tried against
every script code below: Python's unicodedata has no script property. A character of a script
added after this list is counted as Common (never a false alarm, possibly a missed one).
"""

import re
from dataclasses import dataclass
from functools import lru_cache

import regex

from osfoundry.text import char_name, codepoint

SCRIPT_CODES = (
    "Adlm Aghb Ahom Arab Armi Armn Avst Bali Bamu Bass Batk Beng Berf Bhks Bopo Brah Brai Bugi "
    "Buhd Cakm Cans Cari Cham Cher Chrs Copt Cpmn Cprt Cyrl Deva Diak Dogr Dsrt Dupl Egyp Elba "
    "Elym Ethi Gara Geor Glag Gong Gonm Goth Gran Grek Gujr Gukh Guru Hang Hani Hano Hatr Hebr "
    "Hira Hluw Hmng Hmnp Hrkt Hung Ital Java Jurc Kali Kana Kawi Khar Khmr Khoj Kits Knda Krai "
    "Kthi Lana Laoo Latn Lepc Limb Lina Linb Lisu Lyci Lydi Mahj Maka Mand Mani Marc Medf Mend "
    "Merc Mero Mlym Modi Mong Mroo Mtei Mult Mymr Nagm Nand Narb Nbat Newa Nkoo Nshu Ogam Olck "
    "Onao Orkh Orya Osge Osma Ougr Palm Pauc Pcun Perm Phag Phli Phlp Phnx Plrd Prti Rjng Rohg "
    "Runr Samr Sarb Saur Seal Sgnw Shaw Shrd Sidd Sidt Sind Sinh Sogd Sogo Sora Soyo Sund Sunu "
    "Sylo Syrc Tagb Takr Tale Talu Taml Tang Tavt Tayo Telu Tfng Tglg Thaa Thai Tibt Tirh Tnsa "
    "Todr Tols Toto Tutg Ugar Vaii Vith Wara Wcho Xpeo Xsux Yezi Yiii Zanb"
).split()
SCRIPT_NAMES = {
    "Latn": "Latin",
    "Cyrl": "Cyrillic",
    "Grek": "Greek",
    "Armn": "Armenian",
    "Cher": "Cherokee",
    "Copt": "Coptic",
    "Geor": "Georgian",
    "Arab": "Arabic",
    "Hebr": "Hebrew",
    "Hani": "Han",
    "Hira": "Hiragana",
    "Kana": "Katakana",
    "Hang": "Hangul",
    "Thai": "Thai",
    "Deva": "Devanagari",
}
AUGMENTED = {
    "Hani": {"Hanb", "Jpan", "Kore"},
    "Hira": {"Jpan"},
    "Kana": {"Jpan"},
    "Hrkt": {"Jpan"},
    "Hang": {"Kore"},
    "Bopo": {"Hanb"},
}
WITH_LATIN = {"Jpan", "Kore", "Hanb"}

_PATTERNS = [(code, regex.compile(rf"\p{{scx={code}}}")) for code in SCRIPT_CODES]
# Letters, marks, digits and `_`, less the invisible ones the card marks on their own.
_WORD = regex.compile(
    r"(?V1)[[\p{L}\p{M}\p{N}_]--[\p{Cf}\u034F\u115F\u1160\u3164\uFFA0\u17B4\u17B5\u180B-\u180D"
    r"\u180F\uFE00-\uFE0F\U000E0100-\U000E01EF]]+"
)

_NON_ASCII_LINE = re.compile(r"^.*[^\x00-\x7f].*$", re.MULTILINE)


@dataclass(frozen=True)
class MixedWord:
    start: int
    end: int
    word: str
    scripts: tuple[str, ...]  # display names, the word's main script first
    odd: tuple[str, ...]  # "р U+0440 CYRILLIC SMALL LETTER ER": letters not of the main script

    @property
    def label(self) -> str:
        return "⟨" + "+".join(self.scripts) + "⟩"

    @property
    def title(self) -> str:
        return f"Mixes {' and '.join(self.scripts)}: " + ", ".join(self.odd)


@lru_cache(maxsize=8192)
def scripts_of(ch: str) -> frozenset[str]:
    """The character's Script_Extensions (empty for Common and Inherited: any script)."""
    if ch.isascii() and not ch.isalpha():
        return frozenset()
    return frozenset(code for code, pattern in _PATTERNS if pattern.match(ch))


def augmented(scripts: frozenset[str]) -> frozenset[str]:
    extra = set().union(*(AUGMENTED.get(code, set()) for code in scripts))
    return scripts | extra


def mixes_scripts(word: str) -> bool:
    sets = [augmented(s) for s in map(scripts_of, word) if s]
    if not sets or frozenset.intersection(*sets):
        return False
    others = [s for s in sets if "Latn" not in s]
    return not (others and frozenset.intersection(*others) & WITH_LATIN)


def mixed_script_words(text: str) -> list[MixedWord]:
    found: list[MixedWord] = []
    if text.isascii():
        return found
    # Only lines with a non-ASCII character can hold such a word: most code has few.
    for line in _NON_ASCII_LINE.finditer(text):
        for match in _WORD.finditer(text, line.start(), line.end()):
            word = match.group()
            if not word.isascii() and mixes_scripts(word):
                found.append(describe_word(match.start(), word))
    return found


def describe_word(start: int, word: str) -> MixedWord:
    counts: dict[str, int] = {}
    for ch in word:
        for code in scripts_of(ch):
            counts[code] = counts.get(code, 0) + 1
    main = max(counts, key=lambda code: (counts[code], code == "Latn"))
    odd = []
    for ch in dict.fromkeys(word):
        scripts = scripts_of(ch)
        if scripts and main not in scripts:
            odd.append(f"{ch} {codepoint(ch)} {char_name(ch)}")
    others = sorted(
        {min(scripts_of(ch)) for ch in word if scripts_of(ch) and main not in scripts_of(ch)}
    )
    names = tuple(SCRIPT_NAMES.get(code, code) for code in [main, *others])
    return MixedWord(start, start + len(word), word, names, tuple(odd))
