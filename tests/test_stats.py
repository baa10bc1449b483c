"""The statistics, checked against values computed independently, by the textbook formulas written
out here (not by the library the code uses)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ocllm.analysis.stats import describe_difference, exact_paired_interval, mcnemar_exact, wilson


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


def melded_by_monte_carlo(wins: int, discordant: int, n: int, draws: int = 400_000) -> tuple[float, float]:
    """Fay and Lumbard's interval by their other algorithm (exact2x2's `nmc` path): quantiles of T (2B - 1) over
    beta draws, the smaller lower and larger upper of the two discordance-rate distributions. No integral and no
    root search, so it checks the code's numerical integration independently (to Monte Carlo error)."""
    rng = np.random.default_rng(7)

    def beta(a: int, b: int) -> np.ndarray:
        if b == 0:
            return np.ones(draws)
        if a == 0:
            return np.zeros(draws)
        return rng.beta(a, b, draws)

    t_low, t_high = beta(discordant, n - discordant + 1), beta(discordant + 1, n - discordant)
    b_low, b_high = beta(wins, discordant - wins + 1), beta(wins + 1, discordant - wins)
    low = min(np.quantile(t_low * (2 * b_low - 1), 0.025), np.quantile(t_high * (2 * b_low - 1), 0.025))
    high = max(np.quantile(t_low * (2 * b_high - 1), 0.975), np.quantile(t_high * (2 * b_high - 1), 0.975))
    return float(low), float(high)


@pytest.mark.parametrize(
    ("a_wins", "b_wins", "n"),
    [
        (3, 0, 7),  # the demo's tools comparison (issue 30, item 4): p = 0.25
        (1, 7, 21),  # Bentur et al. 2009, exact2x2's example of mcnemarExactDP
        (6, 19, 210),  # the audit data: p = 0.0146
        (2, 2, 10),
        (0, 5, 5),
        (40, 60, 2000),
        (0, 1, 1),
    ],
)
def test_the_exact_interval_matches_its_monte_carlo_form(a_wins: int, b_wins: int, n: int) -> None:
    low, high = exact_paired_interval(a_wins, b_wins, n)
    mc_low, mc_high = melded_by_monte_carlo(b_wins, a_wins + b_wins, n)
    assert low == pytest.approx(mc_low, abs=3e-3) and high == pytest.approx(mc_high, abs=3e-3)
    assert low <= (b_wins - a_wins) / n <= high


@pytest.mark.parametrize(
    ("wins", "discordant", "n", "delta"),
    [(0, 3, 7, 0.4), (7, 8, 21, 0.3), (19, 25, 210, 0.05), (2, 4, 10, -0.2), (60, 100, 2000, 0.012)],
)
def test_the_fixed_quadrature_matches_an_adaptive_one(wins: int, discordant: int, n: int, delta: float) -> None:
    """The one-sided p-value of the melded interval (what each limit solves for), integrated by scipy's adaptive
    quad over the discordance rate's whole density, written out here from Fay and Lumbard's definition."""
    from scipy import integrate
    from scipy import stats as sps

    from ocllm.analysis.stats import _upper_tail

    t = sps.beta(discordant + 1, n - discordant) if delta > 0 else sps.beta(discordant, n - discordant + 1)
    b = sps.beta(wins + 1, discordant - wins)
    expected, _ = integrate.quad(lambda x: b.sf(0.5 + delta / (2 * x)) * t.pdf(x), 0, 1, limit=200, points=[abs(delta)])
    assert _upper_tail(delta, wins, discordant, n) == pytest.approx(expected, abs=1e-7)


@pytest.mark.slow  # an exhaustive sweep of exact tests
def test_the_exact_interval_excludes_zero_exactly_when_the_exact_test_rejects() -> None:
    """Fay and Lumbard's compatibility, over every table of up to 30 tasks: the interval and the test cannot
    disagree about "no difference" (issue 30, item 4: "+14.3 to +85.7 points; exact McNemar p = 0.25")."""
    for n in range(1, 31):
        for discordant in range(n + 1):
            for b_wins in range(discordant + 1):
                a_wins = discordant - b_wins
                low, high = exact_paired_interval(a_wins, b_wins, n)
                p = mcnemar_by_hand(a_wins, b_wins) if discordant else 1.0
                assert (low > 0 or high < 0) == (p < 0.05), (a_wins, b_wins, n, low, high, p)
                assert -1 <= low <= (b_wins - a_wins) / n <= high <= 1


def test_the_exact_interval_at_its_edges() -> None:
    # No discordant pair in 10: the exact bound on a rate never seen, by hand: (1 - q)^10 = 0.025.
    low, high = exact_paired_interval(0, 0, 10)
    assert high == pytest.approx(1 - 0.025 ** (1 / 10), abs=1e-9) and low == -high
    # Every pair won by B: the upper limit is 1 (the lower is checked by Monte Carlo above, as (0, 5, 5)).
    low, high = exact_paired_interval(0, 10, 10)
    assert high == 1.0 and 0 < low < 1
    # Every discordant pair won by B, some concordant: 2B - 1 is 1, so the upper limit is where P[T >= d] = 0.025
    # with T ~ Beta(m + 1, n - m): the Clopper-Pearson upper limit of the discordance rate m / n, by scipy.
    from scipy import stats as sps

    low, high = exact_paired_interval(0, 4, 20)
    assert low == pytest.approx(-exact_paired_interval(4, 0, 20).high)
    assert high == pytest.approx(float(sps.beta(5, 16).isf(0.025)), abs=1e-8)
    with pytest.raises(ValueError):
        exact_paired_interval(0, 0, 0)
    with pytest.raises(ValueError):
        exact_paired_interval(3, 3, 5)


def test_wording_never_claims_an_unsupported_difference() -> None:
    from ocllm.analysis.stats import Interval

    weak = describe_difference(1 / 6, exact_paired_interval(0, 1, 6), 1.0, "A", "B")
    assert "not statistically significant" in weak and "no evidence" in weak
    strong = describe_difference(0.062, Interval(0.019, 0.11), 0.0146, "A", "B")
    assert strong.startswith("B scores 6.2 points higher than A (B minus A: +6.2 points, 95% CI +1.9 to +11.0")
    assert "unlikely to be chance" in strong
    same = describe_difference(0.0, Interval(-0.3, 0.3), 1.0, "A", "B")
    assert "same accuracy" in same and "B minus A: +0.0 points" in same


def _sentence_figures(sentence: str) -> tuple[str, float, float, float]:
    """The difference a sentence names, its value and its interval."""
    import re

    found = re.search(r"\((\S+ minus \S+): ([+-]\d+\.\d) points, 95% CI ([+-]\d+\.\d) to ([+-]\d+\.\d);", sentence)
    assert found, sentence
    return found.group(1), float(found.group(2)), float(found.group(3)), float(found.group(4))


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ([True] * 40 + [False] * 20, [True] * 55 + [False] * 5),  # B clearly better: significant
        ([True] * 30 + [False] * 30, [True] * 32 + [False] * 28),  # B slightly better: not significant
        ([True] * 20 + [False] * 20, [False] * 20 + [True] * 20),  # tie with disagreement
        ([True] * 30 + [False] * 10, [True] * 30 + [False] * 10),  # tie, no disagreement
    ],
)
def test_the_sentence_says_the_difference_as_the_tables_do_in_both_orders(a: list[bool], b: list[bool]) -> None:
    """One sign convention (issue 30, item 4): the sentence states B minus A, as every table and card beside it
    does, so `compare B A` says the same difference with the other sign and names it so."""

    def sentence(x: list[bool], y: list[bool], lx: str, ly: str) -> str:
        n = len(x)
        diff = (sum(y) - sum(x)) / n
        wins_x = sum(p and not q for p, q in zip(x, y, strict=True))
        wins_y = sum(q and not p for p, q in zip(x, y, strict=True))
        return describe_difference(
            diff, exact_paired_interval(wins_x, wins_y, n), mcnemar_exact(wins_x, wins_y), lx, ly
        )

    forward, backward = sentence(a, b, "A", "B"), sentence(b, a, "B", "A")
    name_f, diff_f, low_f, high_f = _sentence_figures(forward)
    name_b, diff_b, low_b, high_b = _sentence_figures(backward)
    points = 100 * (sum(b) - sum(a)) / len(a)
    assert (name_f, name_b) == ("B minus A", "A minus B")
    assert diff_f == pytest.approx(points, abs=0.05) and diff_b == pytest.approx(-points, abs=0.05)
    assert (low_f, high_f) == (-high_b, -low_b) and low_f <= diff_f <= high_f
    if points:
        assert forward.startswith(f"B scores {abs(points):.1f} points higher than A")
        assert backward.startswith(f"A scores {abs(points):.1f} points lower than B")
    else:
        assert "same accuracy" in forward and "same accuracy" in backward


def test_a_lower_second_lane_reads_lower_with_a_negative_difference() -> None:
    from ocllm.analysis.stats import Interval

    text = describe_difference(-0.062, Interval(-0.11, -0.019), 0.0146, "B", "A")
    assert text.startswith("A scores 6.2 points lower than B (A minus B: -6.2 points, 95% CI -11.0 to -1.9;")
    weak = describe_difference(-0.025, Interval(-0.10, 0.05), 0.6, "lane_a", "lane_b")
    assert weak.startswith("lane_b scores 2.5 points lower than lane_a on these tasks, but")
    assert "(lane_b minus lane_a: -2.5 points, 95% CI -10.0 to +5.0; exact McNemar p = 0.6)" in weak


@pytest.mark.parametrize("n", [5, 7, 12, 30, 100, 400, 2000])
@pytest.mark.parametrize("discordance", [0.05, 0.2, 0.5, 0.9])
def test_the_verdict_the_interval_and_the_test_never_disagree(n: int, discordance: float) -> None:
    """Issue 30, item 4, on simulated paired verdicts (seeded): whatever the number of tasks and the share on which
    the lanes disagree, "significant" is the exact test's p < 0.05, the interval excludes 0 exactly then, and the
    sentence says it."""
    from ocllm.analysis.paired import paired_figures

    rng = np.random.default_rng(n * 1000 + int(discordance * 100))
    for share_won_by_b in (0.5, 0.65, 0.8, 1.0):
        for _ in range(3):
            both = rng.random(n) < 0.5  # a concordant pair: both right or both wrong
            differs = rng.random(n) < discordance
            won_by_b = rng.random(n) < share_won_by_b  # a discordant pair: B right and A wrong, or the reverse
            a = np.where(differs, ~won_by_b, both)
            b = np.where(differs, won_by_b, both)
            figures = paired_figures([bool(x) for x in a], [bool(y) for y in b], "A", "B")
            excludes = figures.diff_ci_low > 0 or figures.diff_ci_high < 0
            assert figures.significant == (figures.mcnemar_p < 0.05) == excludes, figures
            assert figures.diff_ci_low <= figures.diff <= figures.diff_ci_high
            said_significant = "unlikely to be chance" in figures.verdict
            assert said_significant == figures.significant, figures.verdict
            assert ("not statistically significant" in figures.verdict) == (
                not figures.significant and figures.diff != 0
            )


@pytest.mark.parametrize("n", [2, 3, 6, 12, 40])
def test_with_samples_the_verdict_the_interval_and_the_test_never_disagree_either(n: int) -> None:
    """The paired t test and its t interval, and where every task differs alike the exact bound and its own test: on
    seeded shares of k = 3 samples, including tasks that all differ by the same amount."""
    from ocllm.analysis.paired import sampled_paired_figures

    rng = np.random.default_rng(n)
    cases = [(rng.integers(0, 4, n) / 3, rng.integers(0, 4, n) / 3) for _ in range(20)]
    cases += [(np.zeros(n), np.full(n, step / 3)) for step in (1, 2, 3)]  # every task the same difference
    for a, b in cases:
        figures = sampled_paired_figures(list(a), list(b), (3, 3), "A", "B")
        excludes = figures.diff_ci_low > 0 or figures.diff_ci_high < 0
        assert figures.significant == (figures.p_value < 0.05) == excludes, figures
        assert ("unlikely to be chance" in figures.verdict) == figures.significant


def test_pass_hat_k_is_the_chance_that_k_drawn_samples_are_all_right() -> None:
    from itertools import combinations

    from ocllm.analysis.clustered import pass_hat_k

    # Against counting every draw of k of the n samples: those whose samples are all right, over all draws.
    for n in range(1, 7):
        for c in range(n + 1):
            samples = [True] * c + [False] * (n - c)
            for k in range(1, n + 1):
                draws = list(combinations(samples, k))
                assert pass_hat_k(n, c, k) == pytest.approx(sum(all(d) for d in draws) / len(draws))
