"""The @mention rule, shared word for word with the console composer (static/agents/mentions.js).

A body mentions `handle` when `@handle` appears with no word character, dot or hyphen before
the `@` (so an e-mail address is not a mention) and no word character or hyphen after it (so
`@bob-codex` does not match `@bob-codex-2`). Case does not matter. The browser copy uses the
same source with the `i` flag and without `u`; re.ASCII keeps `\\w` and case folding ASCII-only
as JavaScript does then, so both read "café@bob-codex" (and U+212A KELVIN SIGN) the same way.
Both copies run one table of cases, agents/mention_cases.json: change the rule in both files
and add the case there.
"""

import re
from functools import lru_cache

MENTION_TEMPLATE = r"(?<![\w.-])@{handle}(?![\w-])"
# Every @token that could be a handle; each candidate is then checked by the one rule below.
_CANDIDATES = re.compile(r"@([A-Za-z0-9][A-Za-z0-9-]{1,30})", re.ASCII)


@lru_cache(maxsize=4096)
def mention_pattern(handle: str) -> re.Pattern:
    return re.compile(MENTION_TEMPLATE.format(handle=re.escape(handle)), re.IGNORECASE | re.ASCII)


def body_mentions_handle(body: str, handle: str) -> bool:
    return mention_pattern(handle).search(body) is not None


def mentioned_handles(body: str) -> list[str]:
    """The handles `body` mentions, lowercased, in order of first appearance."""
    found: list[str] = []
    for candidate in _CANDIDATES.findall(body):
        handle = candidate.lower()
        if handle not in found and body_mentions_handle(body, handle):
            found.append(handle)
    return found
