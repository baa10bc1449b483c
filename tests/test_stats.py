"""The statistics, checked against values computed independently, by the textbook formulas written
out here (not by the library the code uses)."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ocllm.stats import describe_difference, mcnemar_exact, paired_bootstrap_diff, wilson


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
    low, high = paired_bootstrap_diff([False] * 10, [True] * 10)  # every pair won by B
    assert low == high == 1.0
    with pytest.raises(ValueError):
        paired_bootstrap_diff([True], [])


def test_wording_never_claims_an_unsupported_difference() -> None:
    weak = describe_difference(0.019, paired_bootstrap_diff([True] * 5 + [False], [True] * 6), 0.597, "A", "B")
    assert "not statistically significant" in weak and "no evidence" in weak
    from ocllm.stats import Interval

    strong = describe_difference(0.062, Interval(0.019, 0.11), 0.0146, "A", "B")
    assert strong.startswith("B scores 6.2 points higher than A") and "unlikely to be chance" in strong
    same = describe_difference(0.0, Interval(0.0, 0.0), 1.0, "A", "B")
    assert "same accuracy" in same
