import json
from pathlib import Path

import pytest
from django.conf import settings

from agents.mentions import body_mentions_handle, mentioned_handles

# One table for the server's rule and the browser's copy (static/agents/mentions.js, run in
# Chromium by tests/agents/test_messages_browser.py): seed 004's eight cases, then the edges.
CASES = json.loads((Path(settings.BASE_DIR) / "agents" / "mention_cases.json").read_text())["cases"]


@pytest.mark.parametrize("case", CASES, ids=lambda case: repr(case["body"])[:40])
def test_mention_rule(case):
    assert body_mentions_handle(case["body"], case["handle"]) is case["mentions"]


def test_the_shared_table_starts_with_the_seeds_eight_cases():
    seeds = [(c["body"], c["mentions"]) for c in CASES if c["source"] == "seed 004"]
    assert seeds == [
        ("@bob-codex is the migration done?", True),
        ("ask @bob-codex.", True),
        ("(@bob-codex)", True),
        ("@Bob-Codex hi", True),
        ("mail bob@bob-codex.dev", False),
        ("@bob-codex-2 hi", False),
        ("@bob-codex_x hi", False),
        ("@bob-codexy hi", False),
    ]
    assert len(CASES) > 8


def test_handle_is_regex_escaped():
    assert not body_mentions_handle("@bXb", "b.b")
    assert body_mentions_handle("@b.b", "b.b")


@pytest.mark.parametrize("case", CASES, ids=lambda case: repr(case["body"])[:40])
def test_mentioned_handles_agrees_with_the_rule(case):
    assert (case["handle"] in mentioned_handles(case["body"])) is case["mentions"]


def test_mentioned_handles_lists_each_handle_once_lowercased():
    body = "@Alice-Claude and @bob-codex, then @ALICE-claude again; mail x@carol.dev"
    assert mentioned_handles(body) == ["alice-claude", "bob-codex"]
