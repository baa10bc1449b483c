"""Figures of repeated samples: pass@k, maj@k, and means with standard errors clustered on the unit that was
sampled (docs/statistics.md).

A task asked k times gives k answers that are not k independent tasks: they share the task's difficulty. The
standard error of a mean over them is therefore clustered on tasks (the cluster-robust "sandwich" estimator
with the usual small-sample factor G/(G-1), which is what statsmodels' OLS gives for an intercept with
cov_type="cluster"), and its interval uses Student's t with G - 1 degrees of freedom, G the number of
clusters. With one sample per task the clustered error is the ordinary one of a mean.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Hashable, Iterable, Sequence
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    import numpy as np

    from ocllm.analysis.stats import Interval

    # What a mean is taken of: a list, or an array (a rescore's 100,000 paired differences, a byte each).
    Values = Sequence[float] | np.ndarray

# The confidence of every interval here (stats.CONFIDENCE). SciPy is imported where a quantile is needed, not with
# this module: a rescore counts these figures task by task, and SciPy costs it 70 MB (docs/performance.md).
CONFIDENCE = 0.95


def pass_at_k(n: int, c: int, k: int) -> float:
    """The unbiased estimate of pass@k from n samples of which c are correct (Chen et al. 2021, "Evaluating
    Large Language Models Trained on Code"): 1 - C(n-c, k) / C(n, k), the chance that k of the n drawn without
    replacement hold at least one correct. Computed as a product, so large n does not overflow."""
    if not 0 <= c <= n or not 1 <= k <= n:
        raise ValueError(f"pass@k needs 0 <= c <= n and 1 <= k <= n (n={n}, c={c}, k={k})")
    if n - c < k:
        return 1.0
    # C(n-c, k) / C(n, k) = prod_{i = n-c+1}^{n} (1 - k / i)
    return 1.0 - math.prod(1.0 - k / i for i in range(n - c + 1, n + 1))


def pass_hat_k(n: int, c: int, k: int) -> float:
    """The unbiased estimate of pass^k from n samples of which c are correct (tau-bench's: Yao et al. 2024): C(c, k)
    / C(n, k), the chance that k of the n drawn without replacement are all correct: how reliably the model does
    the task every time, where pass@k asks whether it does it once."""
    if not 0 <= c <= n or not 1 <= k <= n:
        raise ValueError(f"pass^k needs 0 <= c <= n and 1 <= k <= n (n={n}, c={c}, k={k})")
    return math.prod((c - i) / (n - i) for i in range(k)) if c >= k else 0.0


def majority_is_gold(votes: Iterable[Hashable | None], gold: Hashable) -> bool:
    """maj@k for one task: `gold` (the vote of every sample judged correct) is strictly more frequent than any
    other answer. `votes` holds each sample's answer (None: no answer, never a vote). A tie for the most
    frequent, or no answer at all, is not credited."""
    counted = Counter(vote for vote in votes if vote is not None)
    ranked = counted.most_common(2)
    if not ranked or ranked[0][0] != gold:
        return False
    return len(ranked) == 1 or ranked[0][1] > ranked[1][1]


class ClusteredMean(NamedTuple):
    mean: float
    stderr: float  # clustered on the clusters given
    clusters: int  # G: how many clusters the values fall in
    values: int  # N: how many values


def clustered_mean(values: Values, clusters: Sequence[Hashable]) -> ClusteredMean:
    """The mean of `values` and its standard error clustered on `clusters` (value i is in cluster clusters[i])."""
    if len(values) != len(clusters):
        raise ValueError("every value needs its cluster")
    sums: dict[Hashable, list[float]] = {}
    for value, cluster in zip(values, clusters, strict=True):
        total = sums.setdefault(cluster, [0.0, 0])
        total[0] += float(value)
        total[1] += 1
    return clustered_from_sums([(total, int(count)) for total, count in sums.values()])


def each_its_own_cluster(values: Values) -> ClusteredMean:
    """`clustered_mean(values, range(len(values)))`, the same figures to the last bit (the same sums, in the same
    order), without a cluster table: a rescore's paired figures hold one difference per task, 100,000 of them, and
    the table was the largest thing it held (issue 45: memory flat in the file's length)."""
    n = len(values)
    if n == 0:
        return ClusteredMean(0.0, 0.0, 0, 0)
    mean = sum(float(value) for value in values) / n
    if n < 2:
        return ClusteredMean(mean, 0.0, n, n)
    spread = sum((float(value) - mean) ** 2 for value in values)
    return ClusteredMean(mean, math.sqrt(n / (n - 1) * spread) / n, n, n)


def clustered_from_sums(clusters: Sequence[tuple[float, int]]) -> ClusteredMean:
    """The same from each cluster's (sum of its values, number of values), which is all the estimator needs:
    mean = sum S / N; stderr = sqrt(G/(G-1) * sum over clusters of (S_g - n_g * mean)^2) / N. Zero when there are
    fewer than two clusters (nothing to estimate a spread from: the interval is then the whole range, see
    `interval`). Empty clusters (n_g = 0) are left out."""
    # Read three times rather than copied: a rescore passes 100,000 tasks' sums, read from its arrays.
    n = sum(count for _, count in clusters if count > 0)
    if n == 0:
        return ClusteredMean(0.0, 0.0, 0, 0)
    mean = sum(s for s, count in clusters if count > 0) / n
    g = sum(1 for _, count in clusters if count > 0)
    if g < 2:
        return ClusteredMean(mean, 0.0, g, n)
    spread = sum((s - count * mean) ** 2 for s, count in clusters if count > 0)
    return ClusteredMean(mean, math.sqrt(g / (g - 1) * spread) / n, g, n)


def interval(
    estimate: ClusteredMean, *, low: float = 0.0, high: float = 1.0, confidence: float = CONFIDENCE
) -> Interval:
    """mean ± t(G-1) * stderr, kept within [low, high] (the range the mean can take). With fewer than two
    clusters nothing bounds it: the whole range."""
    from scipy import stats as sps

    from ocllm.analysis.stats import Interval

    if estimate.clusters < 2:
        return Interval(low, high)
    t = float(sps.t.ppf(0.5 + confidence / 2, estimate.clusters - 1))
    half = t * estimate.stderr
    return Interval(max(low, estimate.mean - half), min(high, estimate.mean + half))


def t_test_p(estimate: ClusteredMean) -> float:
    """Two-sided p-value of mean = 0 with t(G-1): a paired difference's test. 1.0 with fewer than two clusters, or
    when every value is 0. Values all equal but not 0 have no spread to test against: the caller needs another
    test for them (paired.py takes an exact one), and this refuses them rather than claim p = 0."""
    if estimate.clusters < 2 or (estimate.stderr == 0 and estimate.mean == 0):
        return 1.0
    if estimate.stderr == 0:
        raise ValueError("every value is the same and not 0: a t test has no spread to test against")
    from scipy import stats as sps

    t = estimate.mean / estimate.stderr
    return float(2 * sps.t.sf(abs(t), estimate.clusters - 1))
