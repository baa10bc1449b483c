"""Intervals and paired tests for accuracy figures. SciPy does the mathematics; this module says which
test answers which question, and what each figure means in words.

- One accuracy: a 95% Wilson score interval (sound near 0% and 100%, unlike the normal approximation).
- Two lanes on the same tasks: the exact McNemar test (a two-sided binomial test on the discordant
  pairs), and a seeded paired bootstrap interval for the difference in accuracy.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np
from scipy import stats as sps

CONFIDENCE = 0.95
BOOTSTRAP_RESAMPLES = 10_000
BOOTSTRAP_SEED = 20260429  # fixed, so a comparison is reproducible to the last digit


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


def paired_bootstrap_diff(
    a: Sequence[bool],
    b: Sequence[bool],
    *,
    resamples: int = BOOTSTRAP_RESAMPLES,
    seed: int = BOOTSTRAP_SEED,
    confidence: float = CONFIDENCE,
) -> Interval:
    """Percentile interval of accuracy(b) - accuracy(a), resampling tasks (pairs) with replacement."""
    if len(a) != len(b):
        raise ValueError("paired samples must have the same length")
    n = len(a)
    if n == 0:
        return Interval(0.0, 0.0)
    diff = np.asarray(b, dtype=np.int8) - np.asarray(a, dtype=np.int8)
    if not diff.any():
        # Every pair agrees, so every resample differs by exactly 0: a zero-width interval that would
        # claim certainty. Report instead what the data can bound: with no disagreement in n pairs, the
        # rate of disagreement is below 1 - (alpha/2)^(1/n) (exact, Clopper-Pearson), and so is |diff|.
        bound = 1.0 - ((1.0 - confidence) / 2) ** (1.0 / n)
        return Interval(-bound, bound)
    if (diff == diff[0]).all():
        # Every pair differs the same way: every resample gives the same mean, again a zero-width interval. With n
        # pairs that all agree on it, the share that would not is below q = 1 - (alpha/2)^(1/n) (exact), and such a
        # pair moves the mean by at most its distance to -1 or +1.
        d = float(diff[0])
        q = 1.0 - ((1.0 - confidence) / 2) ** (1.0 / n)
        return Interval(max(-1.0, d - q * (1 + d)), min(1.0, d + q * (1 - d)))
    rng = np.random.default_rng(seed)
    means = np.empty(resamples)
    # Resampled in blocks to bound memory on large suites.
    block = max(1, 2_000_000 // n)
    for start in range(0, resamples, block):
        count = min(block, resamples - start)
        idx = rng.integers(0, n, size=(count, n))
        means[start : start + count] = diff[idx].mean(axis=1)
    tail = (1 - confidence) / 2 * 100
    low, high = np.percentile(means, [tail, 100 - tail])
    return Interval(float(low), float(high))


def describe_difference(
    diff: float, ci: Interval, p: float, label_a: str, label_b: str, sides: str = "lane", test: str = "exact McNemar"
) -> str:
    """One sentence that claims no more than the statistics support (`test` names the test `p` is of).

    `diff` and `ci` are accuracy(b) - accuracy(a). The sentence names the better lane first, so the
    interval is turned round with it: it always reads as the better lane minus the worse one."""
    points = abs(diff) * 100
    if diff < 0:
        better, worse, low, high = label_a, label_b, -ci.high, -ci.low
    else:
        better, worse, low, high = label_b, label_a, ci.low, ci.high
    if diff == 0:
        interval = f"95% CI for {better} minus {worse}: {low * 100:+.1f} to {high * 100:+.1f} points"
        return f"{label_a} and {label_b} have the same accuracy on the paired tasks ({interval}; {test} p = {p:.3g})."
    # Named, since every table beside the sentence shows B - A, which is this turned round when A is ahead.
    interval = f"95% CI for {better} minus {worse}: {low * 100:+.1f} to {high * 100:+.1f} points"
    if p < 0.05 and (low > 0 or high < 0):
        return (
            f"{better} scores {points:.1f} points higher than {worse} ({interval}); {test} p = {p:.3g}, "
            "so this difference is unlikely to be chance at the 5% level."
        )
    return (
        f"{better} scores {points:.1f} points higher than {worse} on these tasks, but the difference is not "
        f"statistically significant ({interval}; {test} p = {p:.3g}): no evidence that either {sides} "
        "is better."
    )
