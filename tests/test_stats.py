"""The statistics, checked against values computed independently, by the textbook formulas written
out here (not by the library the code uses)."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ocllm.analysis.stats import describe_difference, mcnemar_exact, paired_bootstrap_diff, wilson


def wilson_by_hand(k: int, n: int, z: float = 1.959963984540054) -> tuple[float, float]:
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return centre - half, centre + half


def mcnemar_by_hand(b: int, c: int) -> float:
    n = b + c
    k = min(b, c)
    tail = sum(math.comb(n, i) for i in range(k + 1)) / 2**n
    return min(1.0, 2 * tail)


@pytest.mark.parametrize(("k", "n"), [(184, 210), (197, 210), (0, 10), (10, 10), (1, 1), (5, 9), (50, 100)])
def test_wilson_matches_the_formula(k: int, n: int) -> None:
    low, high = wilson(k, n)
    exp_low, exp_high = wilson_by_hand(k, n)
    assert low == pytest.approx(max(0.0, exp_low), abs=1e-9)
    assert high == pytest.approx(min(1.0, exp_high), abs=1e-9)


def test_wilson_at_100_percent_is_below_one_at_the_low_end() -> None:
    low, high = wilson(20, 20)
    assert high == pytest.approx(1.0) and low == pytest.approx(0.8388, abs=1e-4)  # 20/(20+z²)


def test_wilson_with_nothing_measured() -> None:
    assert wilson(0, 0) == (0.0, 1.0)


@pytest.mark.parametrize(
    ("b", "c", "expected"),
    [
        (6, 19, 0.014633),  # the audit data: B re-scored wins 19, loses 6
        (14, 18, 0.596615),  # as the old scorer left it
        (0, 5, 0.0625),  # 2 / 2**5
        (1, 1, 1.0),
        (3, 0, 0.25),
    ],
)
def test_mcnemar_matches_hand_values(b: int, c: int, expected: float) -> None:
    assert mcnemar_exact(b, c) == pytest.approx(expected, abs=1e-6)
    assert mcnemar_exact(b, c) == pytest.approx(mcnemar_by_hand(b, c), rel=1e-12)


def test_mcnemar_without_discordant_pairs_is_one() -> None:
    assert mcnemar_exact(0, 0) == 1.0


@given(st.integers(0, 60), st.integers(0, 60))
def test_mcnemar_symmetric_and_equal_to_the_binomial_sum(b: int, c: int) -> None:
    assert mcnemar_exact(b, c) == pytest.approx(mcnemar_exact(c, b))
    if b + c:
        assert mcnemar_exact(b, c) == pytest.approx(mcnemar_by_hand(b, c), rel=1e-9)


def test_bootstrap_is_seeded_and_brackets_the_difference() -> None:
    a = [True] * 184 + [False] * 26
    b = [True] * 178 + [False] * 6 + [True] * 19 + [False] * 7  # 6 lost, 19 won
    first, second = paired_bootstrap_diff(a, b), paired_bootstrap_diff(a, b)
    assert first == second
    assert first.low < 13 / 210 < first.high
    # the normal approximation of the paired difference, by hand, for a sanity bound
    d = [int(y) - int(x) for x, y in zip(a, b, strict=True)]
    mean = sum(d) / len(d)
    sd = math.sqrt(sum((v - mean) ** 2 for v in d) / (len(d) - 1)) / math.sqrt(len(d))
    assert first.low == pytest.approx(mean - 1.96 * sd, abs=0.01)
    assert first.high == pytest.approx(mean + 1.96 * sd, abs=0.01)


def test_bootstrap_edge_cases() -> None:
    # 100% both: no discordant pair. The interval is the exact bound on the disagreement rate, by hand:
    # P(no disagreement in 10 pairs) = (1 - p)^10 = 0.025  =>  p = 1 - 0.025^(1/10) = 0.30849...
    low, high = paired_bootstrap_diff([True] * 10, [True] * 10)
    assert high == pytest.approx(0.308497, abs=1e-6) and low == -high
    low, high = paired_bootstrap_diff([False, True] * 100, [False, True] * 100)
    assert high == pytest.approx(1 - 0.025 ** (1 / 200)) and high < 0.02
    assert paired_bootstrap_diff([], []) == (0.0, 0.0)
    # Every pair won by B: the resamples all say +1, a zero-width interval that claimed certainty (it did before
    # issue 23's review). The exact bound: with q = 1 - 0.025^(1/10) of pairs that might go the other way, down
    # to 1 - 2q.
    low, high = paired_bootstrap_diff([False] * 10, [True] * 10)
    assert high == 1.0 and low == pytest.approx(1 - 2 * (1 - 0.025 ** (1 / 10)))
    with pytest.raises(ValueError):
        paired_bootstrap_diff([True], [])


def test_wording_never_claims_an_unsupported_difference() -> None:
    weak = describe_difference(0.019, paired_bootstrap_diff([True] * 5 + [False], [True] * 6), 0.597, "A", "B")
    assert "not statistically significant" in weak and "no evidence" in weak
    from ocllm.analysis.stats import Interval

    strong = describe_difference(0.062, Interval(0.019, 0.11), 0.0146, "A", "B")
    assert strong.startswith("B scores 6.2 points higher than A") and "unlikely to be chance" in strong
    same = describe_difference(0.0, Interval(0.0, 0.0), 1.0, "A", "B")
    assert "same accuracy" in same


def _sentence_interval(sentence: str) -> tuple[float, float]:
    import re

    found = re.search(r"95% CI(?: for [^:]+:)? ([+-]\d+\.\d) to ([+-]\d+\.\d) points", sentence)
    assert found, sentence
    return float(found.group(1)), float(found.group(2))


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ([True] * 40 + [False] * 20, [True] * 55 + [False] * 5),  # B clearly better: significant
        ([True] * 30 + [False] * 30, [True] * 32 + [False] * 28),  # B slightly better: not significant
        ([True] * 20 + [False] * 20, [False] * 20 + [True] * 20),  # tie with disagreement
        ([True] * 30 + [False] * 10, [True] * 30 + [False] * 10),  # tie, no disagreement
    ],
)
def test_every_sentence_reads_the_same_in_both_orders(a: list[bool], b: list[bool]) -> None:
    """The sentence names the better lane first; its interval is that lane minus the other, whichever
    order the runs were given in (issue 8: `compare B A` printed B - A's interval negated)."""

    def sentence(x: list[bool], y: list[bool], lx: str, ly: str) -> str:
        n = len(x)
        diff = (sum(y) - sum(x)) / n
        wins_x = sum(p and not q for p, q in zip(x, y, strict=True))
        wins_y = sum(q and not p for p, q in zip(x, y, strict=True))
        return describe_difference(diff, paired_bootstrap_diff(x, y), mcnemar_exact(wins_x, wins_y), lx, ly)

    forward, backward = sentence(a, b, "A", "B"), sentence(b, a, "B", "A")
    low_f, high_f = _sentence_interval(forward)
    low_b, high_b = _sentence_interval(backward)
    points = 100 * (sum(b) - sum(a)) / len(a)
    if points:
        # Both sentences say the same thing: B is ahead, by an interval around +points.
        assert forward.startswith(f"B scores {abs(points):.1f} points higher than A")
        assert backward.startswith(f"B scores {abs(points):.1f} points higher than A")
        assert (low_f, high_f) == (low_b, high_b)
        assert low_f <= abs(points) <= high_f
    else:
        assert "same accuracy" in forward and "same accuracy" in backward
        assert "for B minus A" in forward and "for A minus B" in backward  # says which way round it is
        assert low_f <= 0 <= high_f and low_b <= 0 <= high_b


def test_the_better_first_run_gets_a_positive_interval() -> None:
    from ocllm.analysis.stats import Interval

    # compare B A with B better: diff = A - B = -0.062 and the interval of A - B is negative.
    text = describe_difference(-0.062, Interval(-0.11, -0.019), 0.0146, "B", "A")
    assert text.startswith("B scores 6.2 points higher than A (95% CI for B minus A: +1.9 to +11.0 points)")
    weak = describe_difference(-0.02, Interval(-0.05, 0.01), 0.4, "B", "A")
    assert "B scores 2.0 points higher than A" in weak and "95% CI for B minus A: -1.0 to +5.0 points" in weak


def test_the_sentence_says_which_difference_its_interval_is() -> None:
    """Issue 19, item 18: "A scores 2.5 points higher (95% CI -5.0 to +10.0)" beside a table of B - A read as
    a contradiction. The sentence's interval names its difference, and every table's difference is B - A."""
    from ocllm.analysis.stats import Interval

    # B - A = -2.5 (-10.0 to +5.0): A is ahead, so the sentence's interval is A - B.
    text = describe_difference(-0.025, Interval(-0.10, 0.05), 0.6, "lane_a", "lane_b")
    assert text.startswith("lane_a scores 2.5 points higher than lane_b")
    assert "(95% CI for lane_a minus lane_b: -5.0 to +10.0 points" in text


def test_pairs_that_all_differ_the_same_way_get_the_exact_bound_not_a_zero_width_interval() -> None:
    from ocllm.analysis.stats import paired_bootstrap_diff

    # One task, B right where A is wrong: every resample says +1, which claims certainty from one task.
    low, high = paired_bootstrap_diff([False], [True])
    q = 1 - 0.025 ** (1 / 1)
    assert (low, high) == (pytest.approx(1 - 2 * q), pytest.approx(1.0)) and low < 0 < high
    low, high = paired_bootstrap_diff([True] * 10, [False] * 10)
    q = 1 - 0.025 ** (1 / 10)
    assert (low, high) == (pytest.approx(-1.0), pytest.approx(-1 + 2 * q))
