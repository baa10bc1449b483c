"""Two verdicts on the same tasks, side by side: each side's accuracy and interval, the discordant pairs, the
test of the difference and its interval. What `compare` reports for two lanes, and what a rescore's audit
reports for the input's own verdicts against this scorer's.

One sample per task on both sides: the exact McNemar test and the interval that matches it (stats.
exact_paired_interval), so that the verdict and the interval never disagree about "no difference". More
samples: each task's share of correct samples is paired, and the mean per-task difference is tested with
Student's t on its task-clustered standard error (docs/statistics.md). Both report the standard error clustered on
category beside the task-level one, and the smallest difference the comparison could have detected.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from functools import partial

import numpy as np

from ocllm import verdict_words
from ocllm.analysis.clustered import ClusteredMean, clustered_mean, each_its_own_cluster, interval, t_test_p
from ocllm.analysis.power import minimum_detectable_effect
from ocllm.analysis.sampled import share_interval
from ocllm.analysis.stats import (
    Interval,
    describe_difference,
    difference_words,
    exact_paired_interval,
    mcnemar_exact,
    wilson,
)
from ocllm.documents import Paired

# Each side's verdict on each task (or sample): a list, or an array of bools (a rescore's, a byte each).
Verdicts = Sequence[bool] | np.ndarray
MIN_CATEGORIES = 5  # categories a category-level caveat needs (see _caveats)


def paired_by_task(
    tasks: Sequence[Hashable] | np.ndarray,
    ca: Verdicts,
    cb: Verdicts,
    label_a: str,
    label_b: str,
    sides: str = "lane",
) -> Paired:
    """Verdicts of two sides on the same samples (`tasks[i]` is the task sample i is of): `paired_figures` when
    each task has one sample, else the tasks' shares of correct samples paired (`sampled_paired_figures`), so that
    a task's samples are never counted as that many tasks. Arrays, not a table of lists per task: a rescore pairs
    100,000 samples here (issue 45: memory flat in the file's length)."""
    a, b = np.asarray(ca, dtype=bool), np.asarray(cb, dtype=bool)
    if len(a) != len(b) or len(a) != len(tasks):
        raise ValueError("every sample needs its task and both verdicts")
    numbers = _task_numbers(tasks)
    samples = np.bincount(numbers)
    if not len(samples) or bool((samples == 1).all()):
        return paired_figures(a, b, label_a, label_b, sides)
    most = int(samples.max())
    # Sums of 0 and 1 are exact in floats, and each is divided once: the shares sum(a) / len(a) gave.
    return sampled_paired_figures(
        (np.bincount(numbers, weights=a) / samples).tolist(),
        (np.bincount(numbers, weights=b) / samples).tolist(),
        (most, most),
        label_a,
        label_b,
        correct=(int(np.count_nonzero(a)), int(np.count_nonzero(b))),
        sides=sides,
        scored=(len(a), len(b)),
    )


def _task_numbers(tasks: Sequence[Hashable] | np.ndarray) -> np.ndarray:
    """Each sample's task as a number, 0 for the first task met, 1 for the next, and so on (first appearance: the
    order the shares of tasks were always summed in)."""
    if isinstance(tasks, np.ndarray):
        _, first, inverse = np.unique(tasks, return_index=True, return_inverse=True)
        rank = np.empty(len(first), dtype=np.intp)
        rank[np.argsort(first, kind="stable")] = np.arange(len(first))
        return np.asarray(rank[inverse], dtype=np.intp)
    index: dict[Hashable, int] = {}
    return np.fromiter((index.setdefault(t, len(index)) for t in tasks), dtype=np.intp, count=len(tasks))


def paired_figures(
    ca: Verdicts,
    cb: Verdicts,
    label_a: str,
    label_b: str,
    sides: str = "lane",
    categories: Sequence[Hashable] | None = None,
) -> Paired:
    """`ca[i]` and `cb[i]`: whether side A and side B got task i right; `sides` is what the two are (the
    verdict says "no evidence that either lane is better"); `categories[i]`: task i's category, for the second
    cluster level."""
    a, b = np.asarray(ca, dtype=bool), np.asarray(cb, dtype=bool)
    if len(a) != len(b):
        raise ValueError("both sides need a verdict on every task")
    n = len(a)
    a_correct, b_correct = int(np.count_nonzero(a)), int(np.count_nonzero(b))
    a_wins, b_wins = int(np.count_nonzero(a & ~b)), int(np.count_nonzero(b & ~a))
    # The counts, which every comparison has (all 0 with nothing paired): a partial, whose fields and the call below
    # mypy checks, as it cannot a dict's splat.
    counted = partial(
        Paired,
        n_paired=n,
        a_correct=a_correct,
        b_correct=b_correct,
        a_wins=a_wins,
        b_wins=b_wins,
        both_correct=int(np.count_nonzero(a & b)),
        both_wrong=int(np.count_nonzero(~a & ~b)),
    )
    if not n:
        return _nothing_paired(counted, label_a, label_b)
    p = mcnemar_exact(a_wins, b_wins)
    diff = (b_correct - a_correct) / n
    ci = exact_paired_interval(a_wins, b_wins, n)
    a_ci, b_ci = wilson(a_correct, n), wilson(b_correct, n)
    differences = b.astype(np.int8) - a.astype(np.int8)  # -1, 0 or 1 a task: a byte each, not a float object
    spread = _Spread(differences, categories)
    significant = p < 0.05 and (ci.low > 0 or ci.high < 0)
    return counted(
        a_accuracy=a_correct / n,
        b_accuracy=b_correct / n,
        a_ci_low=a_ci.low,
        a_ci_high=a_ci.high,
        b_ci_low=b_ci.low,
        b_ci_high=b_ci.high,
        mcnemar_p=p,
        p_value=p,
        diff=diff,
        diff_ci_low=ci.low,
        diff_ci_high=ci.high,
        significant=significant,
        verdict=describe_difference(diff, ci, p, label_a, label_b, sides) + _caveats(spread, ci, significant),
        diff_stderr=spread.stderr,
        categories=spread.categories,
        diff_stderr_category=spread.stderr_category,
        minimum_detectable_effect=spread.mde,
    )


def _nothing_paired(counted: Callable[..., Paired], label_a: str, label_b: str) -> Paired:
    """A comparison with no paired task: its counts (all 0, bound in `counted`, with the samples of a sampled
    comparison) and nothing else. Every figure is None, null in the documents: an accuracy of 0 of 0, the whole
    range as an interval or p = 1 would each read as a measurement (issue 40)."""
    return counted(
        a_accuracy=None,
        b_accuracy=None,
        a_ci_low=None,
        a_ci_high=None,
        b_ci_low=None,
        b_ci_high=None,
        mcnemar_p=None,
        p_value=None,
        diff=None,
        diff_ci_low=None,
        diff_ci_high=None,
        significant=False,
        verdict=f"No paired task: no task was scored on both {label_a} and {label_b}, so nothing is compared.",
    )


def sampled_paired_figures(
    shares_a: Sequence[float],
    shares_b: Sequence[float],
    samples: tuple[int, int],
    label_a: str,
    label_b: str,
    categories: Sequence[Hashable] | None = None,
    correct: tuple[int, int] = (0, 0),
    sides: str = "lane",
    scored: tuple[int, int] = (0, 0),
) -> Paired:
    """Task i's share of correct samples on each side (`shares_a[i]`, `shares_b[i]`), with `samples` the most
    samples per task of each side, `correct` each side's count of correct samples and `scored` of scored ones: the
    mean per-task difference, its task-clustered standard error, t interval and test."""
    n = len(shares_a)
    # The counts and the samples: a partial, whose fields and the call below mypy checks, as it cannot a dict's
    # splat (the helpers' calls, through a Callable parameter, it does not).
    counted = partial(
        Paired,
        n_paired=n,
        a_correct=correct[0],
        b_correct=correct[1],
        a_wins=sum(a > b for a, b in zip(shares_a, shares_b, strict=True)),
        b_wins=sum(b > a for a, b in zip(shares_a, shares_b, strict=True)),
        both_correct=sum(a == 1 and b == 1 for a, b in zip(shares_a, shares_b, strict=True)),
        both_wrong=sum(a == 0 and b == 0 for a, b in zip(shares_a, shares_b, strict=True)),
        samples_per_task_a=samples[0],
        samples_per_task_b=samples[1],
        a_samples=scored[0],
        b_samples=scored[1],
    )
    if not n:
        return _nothing_paired(counted, label_a, label_b)
    differences = [b - a for a, b in zip(shares_a, shares_b, strict=True)]
    spread = _Spread(differences, categories)
    on_tasks = spread.on_tasks
    test = "exact test over tasks" if n >= 2 and _all_same(differences) else "paired t"
    diff = on_tasks.mean
    a_mean, b_mean = _task_mean(shares_a), _task_mean(shares_b)
    if n < 2:
        return _one_paired_task(counted, spread, diff, a_mean.mean, b_mean.mean, label_a, label_b)
    ci, p = _difference_test(differences, on_tasks)
    a_ci, b_ci = _share_interval(shares_a, a_mean), _share_interval(shares_b, b_mean)
    significant = p < 0.05 and (ci.low > 0 or ci.high < 0)
    verdict = describe_difference(diff, ci, p, label_a, label_b, sides, test=test)
    verdict += _caveats(spread, ci, significant)
    return counted(
        a_accuracy=a_mean.mean,
        b_accuracy=b_mean.mean,
        a_ci_low=a_ci.low,
        a_ci_high=a_ci.high,
        b_ci_low=b_ci.low,
        b_ci_high=b_ci.high,
        mcnemar_p=None,
        test=test,
        p_value=p,
        diff=diff,
        diff_ci_low=ci.low,
        diff_ci_high=ci.high,
        significant=significant,
        verdict=verdict,
        diff_stderr=spread.stderr,
        categories=spread.categories,
        diff_stderr_category=spread.stderr_category,
        minimum_detectable_effect=spread.mde,
    )


def _one_paired_task(
    counted: Callable[..., Paired],
    spread: _Spread,
    diff: float,
    a_share: float,
    b_share: float,
    label_a: str,
    label_b: str,
) -> Paired:
    """Repeated samples of a single paired task: each side's share and their difference are measured, but an interval
    or a test of tasks needs two of them (one task's samples measure that task, not tasks like it): None, not the
    whole range and p = 1. `counted`: Paired with the counts and the samples bound."""
    return counted(
        a_accuracy=a_share,
        b_accuracy=b_share,
        a_ci_low=None,
        a_ci_high=None,
        b_ci_low=None,
        b_ci_high=None,
        mcnemar_p=None,
        test="paired t",
        p_value=None,
        diff=diff,
        diff_ci_low=None,
        diff_ci_high=None,
        significant=False,
        verdict=(
            f"One paired task: {difference_words(label_a, label_b)}: {diff * 100:+.1f} points on it; one task's "
            "samples say nothing of other tasks, so there is no interval and no test."
        ),
        diff_stderr=spread.stderr,
        categories=spread.categories,
        diff_stderr_category=spread.stderr_category,
        minimum_detectable_effect=spread.mde,
    )


# Shares are fractions of a few samples (1/3, 2/3) held as floats: differences that are all the same can leave a
# standard error of 1e-17 rather than 0. Values this close together are the same value.
_SAME = 1e-9


def _all_same(values: Sequence[float]) -> bool:
    return not values or max(values) - min(values) <= _SAME


def _difference_test(differences: Sequence[float], on_tasks: ClusteredMean) -> tuple[Interval, float]:
    """The interval of the mean difference and the p-value of "no difference": Student's t on the task-clustered
    standard error. Where every task's difference is the same, that standard error is 0 and would claim certainty
    however few the tasks, so an exact argument stands in: for the interval the bound on how many tasks could go
    another way. With n tasks that all agree, the share that would not is below q = 1 - 0.025^(1/n) (exact,
    Clopper-Pearson), and a task that does moves the mean by at most its distance to -1 or +1: d - q(1 + d) to
    d + q(1 - d). With no difference at all this is the bound the exact interval of one sample per task gives with
    no discordant pair. The p-value is that interval's own test (issue 30, item 4: a sign test beside it found 12
    tasks of +1/3 "p = 0.0005" while the interval held 0): the level at which the bound reaches 0,
    alpha = 2 (1 + |d|)^-n, so p < 0.05 exactly when the interval excludes 0. With |d| = 1 it is the sign test's
    2 * 0.5^n."""
    n = len(differences)
    if n < 2 or not _all_same(differences):
        return interval(on_tasks, low=-1.0, high=1.0), t_test_p(on_tasks)
    d = on_tasks.mean
    q = 1.0 - 0.025 ** (1.0 / n)
    p = 1.0 if abs(d) <= _SAME else min(1.0, 2.0 * (1.0 + abs(d)) ** -n)
    return Interval(max(-1.0, d - q * (1 + d)), min(1.0, d + q * (1 - d))), p


def _share_interval(shares: Sequence[float], mean: ClusteredMean) -> Interval:
    """A side's mean share of correct samples (sampled.share_interval, the shares told equal within _SAME)."""
    return share_interval(mean, same=_all_same(shares))


def _task_mean(shares: Sequence[float]) -> ClusteredMean:
    """The mean of per-task shares, each task its own cluster."""
    return each_its_own_cluster(shares)


class _Spread:
    """The per-task differences' standard error, on tasks and on categories, and the MDE from it."""

    def __init__(self, differences: Sequence[float] | np.ndarray, categories: Sequence[Hashable] | None) -> None:
        self.on_tasks = each_its_own_cluster(differences)
        self.on_categories: ClusteredMean | None = None
        if categories is not None and len(set(categories)) >= 2:
            self.on_categories = clustered_mean(differences, categories)
        # Paired's diff_stderr, categories, diff_stderr_category and minimum_detectable_effect.
        self.stderr = self.on_tasks.stderr if self.on_tasks.clusters >= 2 else None
        self.categories = self.on_categories.clusters if self.on_categories is not None else 0
        self.stderr_category = self.on_categories.stderr if self.on_categories is not None else None
        # At the 5% level and 80% power (power.py: the normal approximation).
        self.mde = minimum_detectable_effect(self.stderr) if self.stderr else None


def _caveats(spread: _Spread, ci: Interval, significant: bool) -> str:
    """What the verdict adds: the category-level interval where it is wider and holds no difference while the
    task-level one excludes it; and, where nothing was found, the size of difference that could have been."""
    said = ""
    category = spread.on_categories
    # With few categories their own interval is too imprecise to overrule the tasks' (t with 1 degree of freedom
    # is 12.7 standard errors wide): the caveat needs MIN_CATEGORIES; the standard error is shown either way.
    enough = category is not None and category.clusters >= MIN_CATEGORIES
    if category is not None and enough and significant and category.stderr > spread.on_tasks.stderr:
        wide = interval(category, low=-1.0, high=1.0)
        if wide.low <= 0 <= wide.high:
            said += (
                f" Clustered on its {category.clusters} categories, the 95% interval is {wide.low * 100:+.1f} to "
                f"{wide.high * 100:+.1f} points and includes no difference: the result may rest on a few categories."
            )
    mde = spread.mde
    if significant or not isinstance(mde, float):
        return said
    # The interval first: the detectable difference only where the interval does not contradict it (issue 41).
    if not verdict_words.detectable_may_be_said(mde, ci.low, ci.high, significant):
        return f"{said} {verdict_words.interval_room(spread.on_tasks.clusters, ci.low, ci.high)}"
    return (
        f"{said} The 95% interval rules out a difference over {100 * verdict_words.interval_reach(ci.low, ci.high):.1f}"
        f" points; with {spread.on_tasks.clusters} paired tasks, only a difference of about {mde * 100:.1f} points "
        "or more would have been detected with 80% power."
    )
