"""The matcher behind the card's diff (rooms/content/matching.py) past difflib's budget: the
common head and tail are matched as they stand, and Myers' algorithm finds a longest common
subsequence of what lies between."""

import random
from difflib import Match

import pytest

from rooms.content.matching import BoundedMatcher, Budget, came_to, merged


def longest_common(a, b) -> int:
    row = [0] * (len(b) + 1)
    for x in a:
        previous, row = row, [0]
        for j, y in enumerate(b):
            row.append(previous[j] + 1 if x == y else max(previous[j + 1], row[j]))
    return row[-1]


def past_difflib(a, b) -> BoundedMatcher:
    """A matcher that may not run difflib at all, with plenty for Myers."""
    return BoundedMatcher(a, b, budget=Budget(10**6), difflib_steps=0)


def assert_matching(blocks: list[Match], a, b) -> None:
    assert blocks[-1] == Match(len(a), len(b), 0)
    i = j = 0
    for block in blocks[:-1]:
        assert block.size > 0 and block.a >= i and block.b >= j
        assert a[block.a : block.a + block.size] == b[block.b : block.b + block.size]
        i, j = block.a + block.size, block.b + block.size


def test_a_line_changed_between_a_common_head_and_tail():
    a, b = list("abcXdef"), list("abcYdef")
    matcher = past_difflib(a, b)
    assert matcher.get_matching_blocks() == [Match(0, 0, 3), Match(4, 4, 3), Match(7, 7, 0)]
    assert matcher.is_complete


@pytest.mark.parametrize("seed", range(40))
def test_past_difflib_the_matches_are_a_longest_common_subsequence(seed):
    rng = random.Random(seed)
    a = [rng.choice("abc") for _ in range(rng.randrange(0, 14))]
    b = [rng.choice("abc") for _ in range(rng.randrange(0, 14))]
    matcher = past_difflib(a, b)
    blocks = matcher.get_matching_blocks()
    assert_matching(blocks, a, b)
    assert sum(block.size for block in blocks) == longest_common(a, b)
    assert matcher.is_complete


def test_past_every_budget_all_between_head_and_tail_is_one_change():
    a = list("head") + list("abababab") + list("tail")
    b = list("head") + list("babababa") + list("tail")
    matcher = BoundedMatcher(a, b, budget=Budget(30), difflib_steps=0)
    assert matcher.get_matching_blocks() == [Match(0, 0, 4), Match(12, 12, 4), Match(16, 16, 0)]
    assert not matcher.is_complete


def test_blocks_that_touch_are_joined_and_empty_ones_left_out():
    assert merged([(0, 0, 2), (2, 2, 3), (6, 7, 0), (6, 7, 1)]) == [Match(0, 0, 5), Match(6, 7, 1)]


def test_a_path_step_that_would_leave_either_sequence_is_not_taken():
    # From diagonal k + 1 with y past the end of b, or from k - 1 with x at the end of a.
    assert came_to(added=5, removed=-1, k=1, n=9, m=3) == (-1, 0)
    assert came_to(added=-1, removed=9, k=0, n=9, m=9) == (-1, 0)
    assert came_to(added=2, removed=2, k=0, n=9, m=9) == (3, -1)
    assert came_to(added=4, removed=2, k=0, n=9, m=9) == (4, 1)
