"""Intervals and paired tests for accuracy figures. SciPy does the mathematics; this module says which
test answers which question, and what each figure means in words.

- One accuracy: a 95% Wilson score interval (sound near 0% and 100%, unlike the normal approximation).
- Two lanes on the same tasks: the exact McNemar test (a two-sided binomial test on the discordant
  pairs), and the interval for the difference in accuracy that matches it (Fay and Lumbard 2021): it excludes no
  difference exactly when the test finds one, at every number of tasks (docs/statistics.md says why).
"""

from __future__ import annotations

import functools
from typing import NamedTuple, cast

import numpy as np
from scipy import special as sps_special
from scipy import stats as sps
from scipy.optimize import brentq

CONFIDENCE = 0.95


class Interval(NamedTuple):
    low: float
    high: float


def wilson(correct: int, total: int, confidence: float = CONFIDENCE) -> Interval:
    """Wilson score interval for correct/total; (0, 1) when there is nothing to measure."""
    if total == 0:
        return Interval(0.0, 1.0)
    ci = sps.binomtest(correct, total).proportion_ci(confidence_level=confidence, method="wilson")
    return Interval(float(ci.low), float(ci.high))


def mcnemar_exact(a_wins: int, b_wins: int) -> float:
    """Two-sided exact McNemar p-value from the discordant pairs (1.0 when there are none)."""
    discordant = a_wins + b_wins
    if discordant == 0:
        return 1.0
    return float(sps.binomtest(b_wins, discordant, 0.5, alternative="two-sided").pvalue)


# Gauss-Legendre nodes on [-1, 1] for the integrals of `_upper_tail`: the integrands are smooth and bounded (every
# beta parameter is at least 1 where a density is integrated), so a fixed rule is accurate to ~1e-10 and, being
# vectorised, ~100 times faster than an adaptive one; tests/test_stats.py checks it against scipy's adaptive quad.
_NODES, _WEIGHTS = np.polynomial.legendre.leggauss(96)
# Where the density of the discordance rate is integrated: within these tail probabilities of it.
_TAIL = 1e-14


def _beta_sf(x: np.ndarray | float, a: float, b: float) -> np.ndarray | float:
    """P(Beta(a, b) > x), with Beta(a, 0) the point mass at 1 and Beta(0, b) at 0 (the limits the method uses)."""
    if b == 0:
        return np.where(np.asarray(x) < 1.0, 1.0, 0.0)
    if a == 0:
        return np.where(np.asarray(x) < 0.0, 1.0, 0.0)
    # scipy has no annotations (Any to mypy): betaincc gives an array for an array, a float for a float.
    return cast("np.ndarray | float", sps_special.betaincc(a, b, np.clip(x, 0.0, 1.0)))


@functools.lru_cache(maxsize=256)
def _bulk(a: int, b: int) -> tuple[float, float, float]:
    """Where Beta(a, b) holds all but _TAIL of its mass at each end, and the log of its normalising constant: the
    same for every step of a root search, and the slowest part of one."""
    return (
        float(sps_special.betaincinv(a, b, _TAIL)),
        float(sps_special.betainccinv(a, b, _TAIL)),
        float(sps_special.betaln(a, b)),
    )


def _upper_tail(delta: float, wins: int, discordant: int, n: int) -> float:
    """P[T (2 B - 1) >= delta] with B ~ Beta(wins + 1, discordant - wins), the upper confidence distribution of the
    share of discordant pairs won, and T the discordance rate's: Beta(discordant + 1, n - discordant) for delta > 0,
    Beta(discordant, n - discordant + 1) otherwise (whichever makes the probability larger: the melding of Fay,
    Proschan and Brittain 2015, as Fay and Lumbard 2021 apply it to paired proportions)."""
    b_a, b_b = wins + 1, discordant - wins
    if delta == 0:
        return float(_beta_sf(0.5, b_a, b_b))
    t_a, t_b = (discordant + 1, n - discordant) if delta > 0 else (discordant, n - discordant + 1)
    if t_b == 0:  # every pair discordant: T is 1
        return float(_beta_sf(0.5 + delta / 2, b_a, b_b))
    if t_a == 0:  # no discordant pair (delta < 0 here): T is 0, and T (2B - 1) = 0 >= delta
        return 1.0
    if b_b == 0:  # every discordant pair won: 2B - 1 is 1, so the question is T >= delta
        return float(_beta_sf(delta, t_a, t_b)) if delta > 0 else 1.0
    # For t below |delta| the inner probability is 0 (delta > 0: B would have to exceed 1) or 1 (delta < 0: B
    # below 0 suffices); the rest is integrated over the bulk of T's density.
    bulk_lo, hi, log_norm = _bulk(t_a, t_b)
    lo = max(abs(delta), bulk_lo)
    below = 0.0 if delta > 0 else float(sps_special.betainc(t_a, t_b, min(abs(delta), 1.0)))
    if hi <= lo:
        return below
    t = (hi - lo) / 2 * _NODES + (hi + lo) / 2
    density = np.exp((t_a - 1) * np.log(t) + (t_b - 1) * np.log1p(-t) - log_norm)
    inner = _beta_sf(0.5 + delta / (2 * t), b_a, b_b)
    return below + float((hi - lo) / 2 * np.sum(_WEIGHTS * density * inner))


def _upper_bound(wins: int, discordant: int, n: int, tail: float) -> float:
    """The upper limit for the difference (wins - losses) / n: where the upper tail falls to `tail`."""
    if discordant == n and wins == discordant:
        return 1.0
    return float(brentq(lambda d: _upper_tail(d, wins, discordant, n) - tail, -1.0, 1.0, xtol=1e-10))


def exact_paired_interval(a_wins: int, b_wins: int, n: int, confidence: float = CONFIDENCE) -> Interval:
    """The interval for accuracy(B) - accuracy(A) over n paired tasks, `b_wins` of them right on B only and `a_wins`
    on A only, that matches the exact McNemar test (Fay and Lumbard 2021, `mcnemarExactDP` of the R package
    exact2x2): it excludes 0 exactly when the test's two-sided p is below 1 - confidence, so the interval and the
    verdict cannot disagree, and its coverage is at least nominal (checked by the authors for every n to 100, and by
    bench/bench_paired_interval_coverage.py here). Each limit is where the melded one-sided p-value of
    `_upper_tail` equals (1 - confidence) / 2; the lower one is minus the upper one of the pairs seen the other way.
    With no discordant pair it is +-(1 - ((1 - confidence)/2)^(1/n)), the exact bound on a rate never seen."""
    if n <= 0:
        raise ValueError("no paired task: there is no difference to bound")
    if a_wins < 0 or b_wins < 0 or a_wins + b_wins > n:
        raise ValueError(f"discordant pairs {a_wins} + {b_wins} do not fit in {n} tasks")
    tail = (1 - confidence) / 2
    discordant = a_wins + b_wins
    return Interval(-_upper_bound(a_wins, discordant, n, tail), _upper_bound(b_wins, discordant, n, tail))


def difference_words(label_a: str, label_b: str) -> str:
    """How every page names the difference, once: the second lane minus the first, B - A, the sign of `diff` in
    every document (a lane that is better than the first one is ahead by a positive number)."""
    return f"{label_b} minus {label_a}"


def describe_difference(
    diff: float, ci: Interval, p: float, label_a: str, label_b: str, sides: str = "lane", test: str = "exact McNemar"
) -> str:
    """One sentence that claims no more than the statistics support (`test` names the test `p` is of).

    `diff` and `ci` are accuracy(b) - accuracy(a), and the sentence says them that way round, as every table and
    card beside it does: it names B first ("B scores 3.0 points lower than A (B minus A: -3.0 points, ...)"), so a
    reader never meets the same difference with two signs on one page. It calls the difference significant only
    when p < 0.05 and the interval excludes 0; with one sample per task the interval is the one that matches the
    exact test, so the two agree."""
    named = f"{difference_words(label_a, label_b)}: {diff * 100:+.1f} points"
    interval = f"{named}, 95% CI {ci.low * 100:+.1f} to {ci.high * 100:+.1f}; {test} p = {p:.3g}"
    if diff == 0:
        return f"{label_a} and {label_b} have the same accuracy on the paired tasks ({interval})."
    way = "higher" if diff > 0 else "lower"
    scores = f"{label_b} scores {abs(diff) * 100:.1f} points {way} than {label_a}"
    if p < 0.05 and (ci.low > 0 or ci.high < 0):
        return f"{scores} ({interval}), so this difference is unlikely to be chance at the 5% level."
    return (
        f"{scores} on these tasks, but the difference is not statistically significant ({interval}): no evidence "
        f"that either {sides} is better."
    )
