"""How many tasks (and samples per task) a comparison of two lanes needs: the figures of `ocllm plan`
(docs/statistics.md, "Planning a comparison"). Pure: numbers in, numbers out.

- One sample per task: the paired (McNemar) design. Its size follows from the difference to detect and the
  discordance, the share of tasks on which the two lanes disagree (Connor 1987).
- k samples per task: a task's mean verdict is measured with sampling noise that shrinks as 1/k, and the
  lanes' true per-task differences vary from task to task whatever k is. A pilot pair of runs estimates both
  parts of the variance of a per-task difference (Miller 2024, "Adding Error Bars to Evals"), and the tasks
  needed for each k follow from the normal approximation of a paired test on per-task means.

Every size is the normal approximation of a two-sided test at level alpha: a plan, not a guarantee. Sizes
below a few dozen tasks are where the approximation is weakest.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from functools import partial
from typing import Literal

import msgspec
import numpy as np
from scipy import stats as sps

ALPHA = 0.05
POWER = 0.8
TABLE_SAMPLES = (1, 2, 4, 8, 16)  # the samples per task the pilot plan sizes
# More samples "no longer help" once their sampling noise is at most this share of the between-task part:
# from there each doubling of k saves at most about 5% of the tasks.
SATURATION = 0.1


class McNemarPlan(msgspec.Struct, kw_only=True):
    """`ocllm plan --difference D --discordance P`: the paired design's tasks, and what they were sized for."""

    method: Literal["mcnemar"] = "mcnemar"
    tasks: int
    difference: float
    discordance: float
    alpha: float
    power: float


class PlanRow(msgspec.Struct, kw_only=True):
    """Tasks needed with this many samples per task on each side."""

    samples_per_task: int
    tasks: int
    variance: float  # of one task's difference of means, between part plus this k's sampling noise
    sampling_share: float  # the share of that variance which is sampling noise (falls as 1/k)


class PilotPlan(msgspec.Struct, kw_only=True):
    """`ocllm plan --from A B`: what a pilot pair of runs says about the comparison a difference of `difference`
    needs. `method` is "mcnemar" when the pilot has one sample of every task on both sides (the discordance is
    estimated, the variance parts are not), "samples" otherwise (the variance parts and the table)."""

    method: Literal["mcnemar", "samples"]
    tasks: int  # the tasks needed with the pilot's own samples per task
    difference: float
    alpha: float
    power: float
    paired_tasks: int  # tasks scored on both sides (failed samples left out)
    unpaired_a: int  # A's tasks left out: not in B, or every sample failed on one side
    unpaired_b: int
    samples_per_task_a: int  # the most scored samples of one paired task
    samples_per_task_b: int
    observed_difference: float  # the pilot's own mean per-task difference, B minus A
    discordance: float | None = None  # method "mcnemar": share of paired tasks whose verdicts differ
    variance: float | None = None  # method "samples": var(d), d = a task's mean of B minus its mean of A
    within_a: float | None = None  # A's sampling variance of one verdict, mean over tasks of p(1-p) k/(k-1)
    within_b: float | None = None
    within: float | None = None  # the part of var(d) that is sampling noise at the pilot's own k
    between: float | None = None  # var(d) minus that part, floored at 0: the true per-task differences
    table: list[PlanRow] = []
    saturates_at: int | None = None  # the k of the table from which more samples no longer help


# The smallest difference a plan is made for: 0.1 points already needs millions of tasks, more than any suite
# holds; below it the sizes only grow past anything runnable, and then past what a float holds (1e-160
# overflowed, 1e-300 divided by zero).
MIN_DIFFERENCE = 0.001
# The smallest level: past it z(1 - alpha/2) is no longer computable in floats (1 - alpha/2 rounds to 1).
MIN_ALPHA = 1e-6


def check_difference(difference: float) -> None:
    if not 0 < difference < 1:  # (NaN is refused too: it compares false)
        raise ValueError(f"the difference must be more than 0 and less than 1 (got {difference!r})")
    if difference < MIN_DIFFERENCE:
        raise ValueError(
            f"the difference must be at least {MIN_DIFFERENCE:g} (0.1 points: a smaller one needs more tasks than "
            f"any suite holds) (got {difference!r})"
        )


def check_level(alpha: float, power: float) -> None:
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be more than 0 and less than 1 (got {alpha!r})")
    if alpha < MIN_ALPHA:
        raise ValueError(f"alpha must be at least {MIN_ALPHA:g} (got {alpha!r})")
    # Below 0.5 a test would more often miss the difference than find it: no plan sizes for that.
    if not 0.5 <= power < 1:
        raise ValueError(f"power must be at least 0.5 and less than 1 (got {power!r})")


def mcnemar_tasks(difference: float, discordance: float, alpha: float = ALPHA, power: float = POWER) -> int:
    """Tasks the paired (McNemar) design needs to detect a difference in accuracy of `difference` with
    probability `power`, two-sided at level `alpha`, when the lanes disagree on a share `discordance` of the
    tasks (Connor 1987, Biometrics 43:207-211):

        n = [z(1 - alpha/2) sqrt(psi) + z(power) sqrt(psi - delta^2)]^2 / delta^2,  rounded up.

    The difference is the share of tasks B wins minus the share A wins, so it can be no larger than the share
    either wins: |delta| <= psi."""
    check_level(alpha, power)
    if not 0 < discordance <= 1:
        raise ValueError(f"the discordance must be more than 0 and at most 1 (got {discordance!r})")
    delta = abs(difference)
    if not delta > 0:
        raise ValueError(f"the difference must not be 0 (got {difference!r})")
    if delta < MIN_DIFFERENCE:
        check_difference(delta)  # its bound, in its words
    if delta > discordance:
        raise ValueError(
            f"a difference of {delta:g} needs a discordance of at least {delta:g} (the lanes must disagree on at "
            f"least that share of tasks); got {discordance:g}"
        )
    z_alpha, z_power = _z(alpha, power)
    root = z_alpha * math.sqrt(discordance) + z_power * math.sqrt(discordance - delta * delta)
    return _ceil(root * root / (delta * delta))


def minimum_detectable_effect(stderr: float, alpha: float = ALPHA, power: float = POWER) -> float:
    """The smallest true difference a two-sided test at level `alpha` detects with probability `power`, for an
    estimate with standard error `stderr` that is close to normal: (z(1 - alpha/2) + z(power)) * stderr (Bloom
    1995, "Minimum detectable effects"). An approximation: it ignores the far tail and treats `stderr` as
    known, so it is a little small where the estimate rests on few tasks."""
    check_level(alpha, power)
    if not stderr >= 0 or math.isinf(stderr):
        raise ValueError(f"a standard error must be a finite number of at least 0 (got {stderr!r})")
    return sum(_z(alpha, power)) * stderr


def pilot_plan(
    a: Mapping[str, Sequence[bool]],
    b: Mapping[str, Sequence[bool]],
    difference: float,
    alpha: float = ALPHA,
    power: float = POWER,
) -> PilotPlan:
    """What two pilot runs of one suite say about the comparison a difference of `difference` needs. `a` and
    `b` map a task id to its scored samples' verdicts (failed requests left out); tasks with a verdict on both
    sides are paired, the rest left out (counted)."""
    check_difference(difference)
    check_level(alpha, power)
    paired = [task for task in a if task in b and a[task] and b[task]]
    if len(paired) < 2:
        raise ValueError(
            f"the pilot runs share {len(paired)} scored task(s): a plan needs at least 2 (the same suite, and "
            "tasks that did not fail on either side)"
        )
    k_a = np.array([len(a[task]) for task in paired])
    k_b = np.array([len(b[task]) for task in paired])
    mean_a = np.array([float(np.mean(a[task])) for task in paired])
    mean_b = np.array([float(np.mean(b[task])) for task in paired])
    d = mean_b - mean_a
    paired_set = set(paired)  # looked up once per task of each run
    # What both methods' plans say (a partial, which mypy checks field by field, where a dict's values it cannot).
    plan = partial(
        PilotPlan,
        difference=difference,
        alpha=alpha,
        power=power,
        paired_tasks=len(paired),
        unpaired_a=sum(1 for task in a if task not in paired_set),
        unpaired_b=sum(1 for task in b if task not in paired_set),
        samples_per_task_a=int(k_a.max()),
        samples_per_task_b=int(k_b.max()),
        observed_difference=float(d.mean()),
    )
    if k_a.max() == 1 and k_b.max() == 1:
        discordance = float(np.mean(d != 0))
        if discordance == 0:
            raise ValueError(
                f"the pilot runs agree on all {len(paired)} paired tasks: there is no discordance to plan from "
                "(a larger pilot, or give --discordance)"
            )
        tasks = mcnemar_tasks(difference, discordance, alpha, power)
        return plan(method="mcnemar", tasks=tasks, discordance=discordance)

    within_a = _within(a, paired, "A")
    within_b = _within(b, paired, "B")
    variance = float(np.var(d, ddof=1))
    # The sampling noise of one task's difference: each side's variance of a verdict over its samples of it.
    within = within_a * float(np.mean(1 / k_a)) + within_b * float(np.mean(1 / k_b))
    between = max(0.0, variance - within)
    if between + within == 0:
        raise ValueError(
            f"every sample of the {len(paired)} paired tasks got the same verdict on both sides: there is no "
            "variance to plan from (a larger pilot)"
        )
    z = sum(_z(alpha, power))

    def tasks_for(noise: float) -> int:
        # (at least 2 tasks: a standard error needs two)
        return max(2, _ceil(z * z * (between + noise) / (difference * difference)))

    table = []
    for k in TABLE_SAMPLES:
        noise = (within_a + within_b) / k
        share = noise / (between + noise) if between + noise > 0 else 0.0
        table.append(
            PlanRow(samples_per_task=k, tasks=tasks_for(noise), variance=between + noise, sampling_share=share)
        )
    saturates_at = next(
        (k for k in TABLE_SAMPLES if between > 0 and (within_a + within_b) / k <= SATURATION * between), None
    )
    return plan(
        method="samples",
        tasks=tasks_for(within),
        variance=variance,
        within_a=within_a,
        within_b=within_b,
        within=within,
        between=between,
        table=table,
        saturates_at=saturates_at,
    )


def _within(verdicts: Mapping[str, Sequence[bool]], paired: list[str], side: str) -> float:
    """One side's sampling variance of a single verdict: the mean over its tasks of p(1-p) k/(k-1), each
    term the unbiased variance of that task's k verdicts. Only tasks with two samples or more tell it."""
    terms = []
    for task in paired:
        k = len(verdicts[task])
        if k >= 2:
            p = float(np.mean(verdicts[task]))
            terms.append(p * (1 - p) * k / (k - 1))
    if not terms:
        raise ValueError(
            f"pilot run {side} has one sample of each task, the other more: the sampling variance needs at least "
            f"2 samples of a task on each side (or 1 on both, for the McNemar plan)"
        )
    return float(np.mean(terms))


def _z(alpha: float, power: float) -> tuple[float, float]:
    return float(sps.norm.ppf(1 - alpha / 2)), float(sps.norm.ppf(power))


def _ceil(value: float) -> int:
    # A size that is an integer up to rounding (625.0000000001) is that integer, not one more.
    return math.ceil(round(value, 9))
