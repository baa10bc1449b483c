"""How often the interval `compare` gives for a paired difference (one sample per task) covers the true difference.
Run: `python bench/bench_paired_interval_coverage.py` (about ten minutes on two cores); docs/statistics.md records
the figures.

Two lanes answer n tasks. On a share `discordance` of the tasks they disagree (one right, the other wrong), and B
is the right one on a share `won_by_b` of those; the true difference accuracy(B) - accuracy(A) is then
discordance * (2 * won_by_b - 1). For each (n, discordance, won_by_b) the coverage of two 95% intervals is measured:

- `exact`: `stats.exact_paired_interval`, what `compare` reports (Fay and Lumbard 2021);
- `bootstrap`: the percentile bootstrap of the paired differences (2,000 resamples), what `compare` reported before
  issue 30, for comparison.

Only the counts matter (the discordant pairs each way, and n), so for n <= 100 the coverage is exact: every
outcome with its multinomial probability, outcomes beyond a mass of 1e-7 left out (the share left out is printed).
For larger n, `REPLICATES` seeded simulated comparisons (a Monte Carlo standard error of about 0.7 points).
Beside each coverage: how often that interval's exclusion of 0 disagrees with the exact McNemar test's p < 0.05.
"""

from __future__ import annotations

import os
import platform
import sys
import time
from functools import cache

import numpy as np
from scipy import stats as sps

from ocllm.analysis.stats import exact_paired_interval, mcnemar_exact

SIZES = (5, 7, 10, 20, 50, 100, 200, 500, 1000, 2000)
DISCORDANCE = (0.05, 0.2, 0.5)
WON_BY_B = (0.5, 0.75, 1.0)
REPLICATES = 1000
RESAMPLES = 2000
EXACT_UP_TO = 100
LEFT_OUT = 1e-7


@cache
def exact_interval(a_wins: int, b_wins: int, n: int) -> tuple[float, float]:
    return tuple(exact_paired_interval(a_wins, b_wins, n))  # type: ignore[return-value]


@cache
def bootstrap_interval(a_wins: int, b_wins: int, n: int) -> tuple[float, float]:
    """The percentile bootstrap of the mean per-task difference: resampling n tasks is drawing the counts of the
    three kinds of task (B only right, A only right, the same) from their observed shares. Where every resample
    would give the same mean (no discordant pair, or every task differing the same way) the bound compare used then
    stands in, as it did."""
    q = 1 - 0.025 ** (1 / n)
    if a_wins + b_wins == 0:
        return -q, q
    if a_wins + b_wins == n and 0 in (a_wins, b_wins):
        d = 1.0 if b_wins else -1.0
        return max(-1.0, d - q * (1 + d)), min(1.0, d + q * (1 - d))
    rng = np.random.default_rng(a_wins * 1_000_003 + b_wins * 1009 + n)
    draws = rng.multinomial(n, [b_wins / n, a_wins / n, 1 - (a_wins + b_wins) / n], size=RESAMPLES)
    means = (draws[:, 0] - draws[:, 1]) / n
    low, high = np.percentile(means, [2.5, 97.5])
    return float(low), float(high)


def outcomes(n: int, discordance: float, won_by_b: float, rng: np.random.Generator) -> list[tuple[int, int, float]]:
    """(a_wins, b_wins, probability): every outcome by its probability for small n, else simulated ones."""
    if n <= EXACT_UP_TO:
        found = []
        for m in range(n + 1):
            pm = sps.binom.pmf(m, n, discordance)
            if pm < LEFT_OUT:
                continue
            for x in range(m + 1):
                p = pm * sps.binom.pmf(x, m, won_by_b)
                if p >= LEFT_OUT:
                    found.append((m - x, x, float(p)))
        return found
    m = rng.binomial(n, discordance, size=REPLICATES)
    x = rng.binomial(m, won_by_b)
    return [(int(mi - xi), int(xi), 1.0 / REPLICATES) for mi, xi in zip(m, x, strict=True)]


def main() -> int:
    started = time.perf_counter()
    print(f"# {platform.python_version()} on {platform.machine()}, {os.cpu_count()} CPUs")
    print("n\tdiscordance\twon_by_b\ttrue_diff\texact\tbootstrap\texact_vs_test\tbootstrap_vs_test\tmass")
    worst = {"exact": 1.0, "bootstrap": 1.0}
    for n in SIZES:
        for discordance in DISCORDANCE:
            for won_by_b in WON_BY_B:
                rng = np.random.default_rng(n * 7919 + int(discordance * 1000) + int(won_by_b * 100))
                truth = discordance * (2 * won_by_b - 1)
                covered = {"exact": 0.0, "bootstrap": 0.0}
                disagree = {"exact": 0.0, "bootstrap": 0.0}
                mass = 0.0
                for a_wins, b_wins, p in outcomes(n, discordance, won_by_b, rng):
                    mass += p
                    rejects = mcnemar_exact(a_wins, b_wins) < 0.05
                    for name, interval in (
                        ("exact", exact_interval(a_wins, b_wins, n)),
                        ("bootstrap", bootstrap_interval(a_wins, b_wins, n)),
                    ):
                        low, high = interval
                        covered[name] += p * (low <= truth <= high)
                        disagree[name] += p * ((low > 0 or high < 0) != rejects)
                for name in covered:
                    covered[name] /= mass
                    worst[name] = min(worst[name], covered[name])
                print(
                    f"{n}\t{discordance}\t{won_by_b}\t{truth:+.3f}\t{covered['exact']:.3f}\t{covered['bootstrap']:.3f}"
                    f"\t{disagree['exact'] / mass:.3f}\t{disagree['bootstrap'] / mass:.3f}\t{mass:.6f}",
                    flush=True,
                )
    print(f"# lowest coverage: exact {worst['exact']:.3f}, bootstrap {worst['bootstrap']:.3f}")
    print(f"# {time.perf_counter() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
