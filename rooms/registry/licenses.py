"""Whether a package's licence is one the Open Source Initiative approved, for the card's mark.

A package names its licence in package.json as an SPDX expression ("MIT", "(MIT OR Apache-2.0)",
"Apache-2.0 AND BSD-3-Clause"), or in the old forms npm still reads ({"type": "MIT"}, a list of
them). An expression is OSI when it can be taken under OSI licences only: an OR needs one side
that is, an AND both. Anything else (no licence, UNLICENSED, "SEE LICENSE IN ...", a licence
off this list) is marked on the card for the owner to look at; nothing is refused for it.
"""

import re

# The OSI-approved licences npm packages use, by SPDX id (opensource.org/licenses), with the
# deprecated ids that mean the same. Short on purpose: a licence not here is marked, not refused.
OSI = frozenset(
    {
        "0BSD",
        "AFL-3.0",
        "AGPL-3.0",
        "AGPL-3.0-only",
        "AGPL-3.0-or-later",
        "Apache-1.1",
        "Apache-2.0",
        "APSL-2.0",
        "Artistic-2.0",
        "BlueOak-1.0.0",
        "BSD-1-Clause",
        "BSD-2-Clause",
        "BSD-2-Clause-Patent",
        "BSD-3-Clause",
        "BSL-1.0",
        "CDDL-1.0",
        "ECL-2.0",
        "EPL-1.0",
        "EPL-2.0",
        "EUPL-1.2",
        "GPL-2.0",
        "GPL-2.0-only",
        "GPL-2.0-or-later",
        "GPL-3.0",
        "GPL-3.0-only",
        "GPL-3.0-or-later",
        "ISC",
        "LGPL-2.1",
        "LGPL-2.1-only",
        "LGPL-2.1-or-later",
        "LGPL-3.0",
        "LGPL-3.0-only",
        "LGPL-3.0-or-later",
        "MIT",
        "MIT-0",
        "MPL-1.1",
        "MPL-2.0",
        "MS-PL",
        "MS-RL",
        "NCSA",
        "OFL-1.1",
        "OSL-3.0",
        "PostgreSQL",
        "Python-2.0",
        "UPL-1.0",
        "Unicode-3.0",
        "Unlicense",
        "W3C",
        "Zlib",
    }
)
_OSI_FOLDED = {name.casefold() for name in OSI}
TOKEN = re.compile(r"\(|\)|[^\s()]+")


def license_text(manifest: dict) -> str:
    """The licence a package.json names, as one SPDX-like text ("" when it names none)."""
    value = manifest.get("license")
    if isinstance(value, dict):
        value = value.get("type")
    if isinstance(value, str) and value.strip():
        return value.strip()[:200]
    legacy = manifest.get("licenses")
    if isinstance(legacy, list):
        found = [item.get("type") if isinstance(item, dict) else item for item in legacy]
        names = [name for name in found if isinstance(name, str) and name.strip()]
        if names:
            return " OR ".join(names)[:200]
    return ""


def is_osi(expression: str) -> bool:
    """Whether the package may be used under OSI-approved licences only."""
    tokens = TOKEN.findall(expression)
    if not tokens:
        return False
    try:
        value, rest = _or(tokens)
    except (IndexError, ValueError):
        return False
    return value and not rest


def _or(tokens: list[str]) -> tuple[bool, list[str]]:
    value, tokens = _and(tokens)
    while tokens and tokens[0].upper() == "OR":
        right, tokens = _and(tokens[1:])
        value = value or right
    return value, tokens


def _and(tokens: list[str]) -> tuple[bool, list[str]]:
    value, tokens = _term(tokens)
    while tokens and tokens[0].upper() == "AND":
        right, tokens = _term(tokens[1:])
        value = value and right
    return value, tokens


def _term(tokens: list[str]) -> tuple[bool, list[str]]:
    head, rest = tokens[0], tokens[1:]
    if head == "(":
        value, rest = _or(rest)
        if not rest or rest[0] != ")":
            raise ValueError("unbalanced")
        return value, rest[1:]
    if head in (")",) or head.upper() in ("AND", "OR", "WITH"):
        raise ValueError(head)
    if rest and rest[0].upper() == "WITH":  # an exception (e.g. Classpath) widens, never narrows
        rest = rest[2:]
    return head.removesuffix("+").casefold() in _OSI_FOLDED, rest
