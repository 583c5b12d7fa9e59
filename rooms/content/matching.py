"""What two sequences have in common (a file's lines, a line's words), for the card's diff, at a
cost bounded by a budget.

difflib.SequenceMatcher chose every hunk the card has shown, and reads well, but its cost grows
with how often each item recurs on both sides, and an agent chooses the items: `"a\\n" * 10_000`
revised with its last line changed made it scan 10^8 pairs of lines, and the owner's card took
11.5 s (issue 31; 27 s on a loaded machine); 90 lines of 490 repeated words, each with its last
word changed, took 8.9 s in the word marks alone. So a matcher draws on a Budget (one per diff):
difflib runs while the pairs it is about to scan fit in what is left, as they do on ordinary
input, and gives the same matches as ever. Past that, the common head and tail are matched as
they stand and what lies between goes to Myers' O(ND) difference algorithm (E. W. Myers, "An
O(ND) Difference Algorithm and Its Variations", 1986), whose cost is about (N + M) · D for D
lines added or removed: near-linear when few changed. When that too outgrows the budget the
matcher gives up: `is_complete` is False, and all between the head and the tail is one change.
"""

from bisect import bisect_left
from collections.abc import Hashable, Sequence
from difflib import Match, SequenceMatcher


class OverBudget(Exception):
    """The next step would spend more than the budget has left."""


class Budget:
    """Steps one diff may still spend: about a third of a microsecond each (see myers())."""

    def __init__(self, steps: int):
        self.left = steps

    def spend(self, steps: int) -> None:
        if steps > self.left:
            raise OverBudget
        self.left -= steps

    def afford(self, steps: int) -> bool:
        """Spend `steps` if they are left; whether they were."""
        if steps > self.left:
            return False
        self.left -= steps
        return True


class BoundedMatcher(SequenceMatcher):
    """A SequenceMatcher (no junk; `autojunk` as difflib's) whose matching spends `budget`,
    difflib's own part at most `difflib_steps` of it (None: all there is)."""

    # SequenceMatcher's documented attributes, which typeshed leaves out.
    a: Sequence
    b: Sequence
    b2j: dict[Hashable, list[int]]

    def __init__(
        self,
        a: Sequence,
        b: Sequence,
        *,
        budget: Budget,
        autojunk: bool = False,
        difflib_steps: int | None = None,
    ):
        self.budget = budget
        self.difflib_budget = Budget(budget.left if difflib_steps is None else difflib_steps)
        self.is_complete = True
        self.blocks: list[Match] | None = None
        super().__init__(None, a, b, autojunk=autojunk)

    def find_longest_match(self, alo=0, ahi=None, blo=0, bhi=None):
        ahi = len(self.a) if ahi is None else ahi
        bhi = len(self.b) if bhi is None else bhi
        self.budget.spend(ahi - alo)  # counting what the search costs walks a[alo:ahi] too
        # What difflib is about to scan: each item of a[alo:ahi] against its places in b up to
        # bhi (b2j lists them in order), paid before it starts.
        places = self.b2j
        steps = 0
        for item in self.a[alo:ahi]:
            if item in places:
                steps += bisect_left(places[item], bhi)
        self.difflib_budget.spend(steps)
        self.budget.spend(steps)
        return super().find_longest_match(alo, ahi, blo, bhi)

    def get_matching_blocks(self) -> list[Match]:
        if self.blocks is None:
            try:
                self.blocks = super().get_matching_blocks()
            except OverBudget:
                self.blocks = self.blocks_within_budget()
        return self.blocks

    def blocks_within_budget(self) -> list[Match]:
        a, b = self.a, self.b
        n, m = len(a), len(b)
        head = 0
        while head < min(n, m) and a[head] == b[head]:
            head += 1
        tail = 0
        while tail < min(n, m) - head and a[n - 1 - tail] == b[m - 1 - tail]:
            tail += 1
        try:
            middle = myers(a[head : n - tail], b[head : m - tail], self.budget)
        except OverBudget:
            self.is_complete = False
            middle = []
        blocks = [(0, 0, head)]
        blocks += [(i + head, j + head, size) for i, j, size in middle]
        blocks.append((n - tail, m - tail, tail))
        return merged(blocks) + [Match(n, m, 0)]


def merged(blocks: list[tuple[int, int, int]]) -> list[Match]:
    """Blocks in order without empty ones, neighbours joined (as difflib returns them)."""
    out: list[Match] = []
    for i, j, size in blocks:
        if not size:
            continue
        if out and out[-1].a + out[-1].size == i and out[-1].b + out[-1].size == j:
            out[-1] = Match(out[-1].a, out[-1].b, out[-1].size + size)
        else:
            out.append(Match(i, j, size))
    return out


def myers(a: Sequence, b: Sequence, budget: Budget) -> list[tuple[int, int, int]]:
    """The matching blocks (i, j, size) of a shortest edit script from `a` to `b`.

    Round d finds, on each diagonal k = x - y, the furthest point (x, y) that d lines added or
    removed reach, then follows the lines alike from there (a "snake"). Each round's points are
    kept to walk the path back from (len(a), len(b)). Raises OverBudget.
    """
    n, m = len(a), len(b)
    offset = m + 1  # reached[offset + k]: the x reached on diagonal k, -1 for none
    reached = [-1] * (n + m + 3)
    rounds: list[tuple[int, list[int]]] = []  # (lowest diagonal, the x reached from it on)
    for d in range(n + m + 1):
        low, high = max(-d, -m), min(d, n)
        low += (low + d) % 2  # a diagonal of round d has the parity of d
        # A diagonal visited costs four steps, a line followed one: 1.1-1.3 µs and 0.14-0.19 µs
        # here, where difflib compares a pair of lines in 0.26-0.34 µs (on a loaded machine).
        budget.spend(4 * ((high - low) // 2 + 1))
        left = budget.left
        # The loop is came_to() written out: it runs up to a budget's worth of times.
        for k in range(low, high + 1, 2):
            x = 0
            if d:
                added, removed = reached[offset + k + 1], reached[offset + k - 1]
                if added - k > m:
                    added = -1
                removed = removed + 1 if 0 <= removed < n else -1
                x = added if added >= removed else removed
                if x < 0:
                    reached[offset + k] = -1
                    continue
            y, start = x - k, x
            end = x + min(n - x, m - y, left)
            while x < end and a[x] == b[y]:
                x += 1
                y += 1
            left -= x - start
            reached[offset + k] = x
            if x == n and y == m:
                budget.left = left
                rounds.append((low, reached[offset + low : offset + high + 1]))
                return path_blocks(rounds, n, m)
        budget.left = left
        rounds.append((low, reached[offset + low : offset + high + 1]))
    raise AssertionError("n + m rounds always reach the end")  # pragma: no cover


def came_to(added: int, removed: int, k: int, n: int, m: int) -> tuple[int, int]:
    """Where diagonal k's snake starts, and the diagonal before it, given the x reached one
    round earlier on k + 1 (`added`: one more line of b, the same x) and on k - 1 (`removed`:
    one more line of a, x + 1): the one that reaches further without leaving either sequence.
    (-1, 0) when neither can."""
    if added >= 0 and added - k > m:
        added = -1
    removed = removed + 1 if 0 <= removed < n else -1
    if added < 0 and removed < 0:
        return -1, 0
    return (added, k + 1) if added >= removed else (removed, k - 1)


def reached_in(round_: tuple[int, list[int]], k: int) -> int:
    low, xs = round_
    return xs[k - low] if 0 <= k - low < len(xs) else -1


def path_blocks(rounds: list[tuple[int, list[int]]], n: int, m: int) -> list:
    """The snakes of the path to (n, m), first to last."""
    blocks = []
    k = n - m
    for d in range(len(rounds) - 1, -1, -1):
        end = reached_in(rounds[d], k)
        if d == 0:
            start, came_from = 0, 0
        else:
            before = rounds[d - 1]
            start, came_from = came_to(
                reached_in(before, k + 1), reached_in(before, k - 1), k, n, m
            )
        if end > start:
            blocks.append((start, start - k, end - start))
        k = came_from
    return blocks[::-1]
