"""The figures of a task's repeated samples, kept as verdicts arrive: avg@k with its task-clustered standard
error, pass@k, maj@k, and each task's agreement (docs/statistics.md).

One sample per task is the case k = 1 of the same figures: avg@1 is the accuracy, pass@1 too, and maj@1 credits
a task whose one answer is right. A failed request is no sample of the task: it is counted in `errors` elsewhere
and left out of every figure here.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable
from typing import TYPE_CHECKING, Any

from ocllm.analysis.clustered import ClusteredMean, clustered_from_sums, interval, majority_is_gold, pass_at_k
from ocllm.documents import Figures, TaskAgreement

if TYPE_CHECKING:
    from ocllm.analysis.stats import Interval

# The vote every correct sample casts: the gold answer, however the model wrote it (0.5 and 1/2 are one vote). An
# object equal to nothing else, so that no extracted answer (the text "gold", say) can be taken for it.
GOLD = object()


def vote(correct: bool | None, extracted: str | None, extracts_answer: bool) -> Hashable | None:
    """What a sample votes for maj@k: the gold when it is right; else the answer it gave (None: it gave none). A
    type whose answer is the whole text (required substrings) extracts nothing to compare, so each of its wrong
    samples is an answer of its own (an object equal to no other)."""
    if correct is True:
        return GOLD
    if not extracts_answer:
        return object()
    return extracted


class _Task:
    """One task's counts and votes. A rescore holds one of these per task (and no decision), so it is kept small:
    the votes are a list only from a second scored sample on; one sample's vote is `first`."""

    __slots__ = ("category", "correct", "first", "more", "samples", "scored", "task_type")

    def __init__(self, category: str, task_type: str) -> None:
        self.category = category
        self.task_type = task_type
        self.samples = self.scored = self.correct = 0
        self.first: Hashable | None = None
        self.more: list[Hashable | None] | None = None

    def vote(self, cast: Hashable | None) -> None:
        if self.scored == 1:
            self.first = cast
        elif self.more is None:
            self.more = [cast]
        else:
            self.more.append(cast)

    @property
    def votes(self) -> list[Hashable | None]:
        return [] if not self.scored else [self.first, *(self.more or ())]


class SampledTally:
    """Verdicts added one sample at a time, grouped by task; the figures of any subset of the tasks."""

    def __init__(self) -> None:
        self._tasks: dict[str, _Task] = {}

    def add(
        self, task_id: str, category: str, task_type: str, correct: bool | None, failed: bool, cast: Hashable | None
    ) -> None:
        task = self._tasks.get(task_id)
        if task is None:
            task = self._tasks[task_id] = _Task(category, task_type)
        task.samples += 1
        if failed or correct is None:
            return
        task.scored += 1
        task.correct += correct is True
        task.vote(cast)

    def figures(self, keep: Iterable[str] | None = None, *, by_task: bool = False) -> dict[str, Any]:
        """The sampled figures of the tasks named in `keep` (every task when None): samples_per_task, tasks_scored,
        accuracy_stderr (clustered on tasks), pass_at_k, majority_at_k; with `by_task`, also the standard error
        clustered on category (when there are two or more) and each task's agreement (when k > 1)."""
        tasks = list(self._tasks.items()) if keep is None else [(t, self._tasks[t]) for t in keep]
        scored = [(tid, task) for tid, task in tasks if task.scored]
        k = max((task.samples for _, task in tasks), default=1)
        on_tasks = clustered_from_sums([(task.correct, task.scored) for _, task in scored])
        out: dict[str, Any] = {
            "samples_per_task": k,
            "tasks_scored": len(scored),
            "accuracy_stderr": on_tasks.stderr if on_tasks.clusters >= 2 else None,
            "pass_at_k": _pass_at(scored, k),
            "majority_at_k": (
                sum(majority_is_gold(task.votes, GOLD) for _, task in scored) / len(scored) if scored else None
            ),
        }
        if by_task:
            categories: dict[str, list[float]] = {}
            for _, task in scored:
                total = categories.setdefault(task.category, [0.0, 0])
                total[0] += task.correct
                total[1] += task.scored
            on_categories = clustered_from_sums([(s, int(n)) for s, n in categories.values()])
            out["categories"] = on_categories.clusters
            out["accuracy_stderr_category"] = on_categories.stderr if on_categories.clusters >= 2 else None
            if k > 1:
                out["by_task"] = {tid: _agreement(task) for tid, task in scored}
        return out

    def ids_by(self, attribute: str) -> dict[str, list[str]]:
        """Task ids by "category" or "task_type", in the order they came."""
        grouped: dict[str, list[str]] = {}
        for tid, task in self._tasks.items():
            grouped.setdefault(getattr(task, attribute), []).append(tid)
        return grouped


def _pass_at(scored: list[tuple[str, _Task]], k: int) -> dict[str, float]:
    """pass@j for j = 1..k, each the mean over the tasks with at least j scored samples (a task whose request
    failed has fewer; it counts where it can)."""
    out = {}
    for j in range(1, k + 1):
        values = [pass_at_k(task.scored, task.correct, j) for _, task in scored if task.scored >= j]
        if values:
            out[str(j)] = round(sum(values) / len(values), 6)
    return out


def _agreement(task: _Task) -> TaskAgreement:
    return TaskAgreement(
        samples=task.scored,
        correct=task.correct,
        share=round(task.correct / task.scored, 6),
        agree=None not in task.votes and len(set(task.votes)) == 1,
        majority=majority_is_gold(task.votes, GOLD),
    )


def accuracy_interval(correct: int, scored: int, samples_per_task: int, stderr: float | None, tasks: int) -> Interval:
    """The 95% interval of an accuracy: Wilson's with one sample per task (as always); with more, the t interval
    of the task-clustered standard error on tasks - 1 degrees of freedom (docs/statistics.md). Where every task's
    samples agree the clustered error is 0 and would claim certainty: the Wilson interval over tasks is given
    instead, each task one trial (its samples then say no more than one of them). With one task and several
    samples, the whole range: its samples measure that task, not the accuracy of tasks like it."""
    from ocllm.analysis.stats import Interval, wilson  # SciPy: only where an interval is drawn

    if samples_per_task <= 1:
        return wilson(correct, scored)
    if stderr is None:
        return Interval(0.0, 1.0)  # under two tasks: no standard error
    mean = correct / scored if scored else 0.0
    # Every task's share the same: a float sum may leave 1e-17 for the 0 it is.
    return share_interval(ClusteredMean(mean, stderr, tasks, scored), same=stderr <= 1e-12)


# What `accuracy_interval` computed, in the words every page uses for it (issue 30: a page said "clustered on
# tasks" of an interval that was the Wilson fallback).
WILSON = "Wilson"
CLUSTERED = "t interval clustered on tasks"
WILSON_OVER_TASKS = "Wilson over tasks (every task's share correct the same: no clustered error to use)"
WHOLE_RANGE = "the whole range (one task: its samples say nothing of other tasks)"


def interval_method(scored: int, samples_per_task: int, stderr: float | None) -> str | None:
    """Which interval `accuracy_interval` gives for these figures; None where nothing was scored (no interval)."""
    if scored <= 0:
        return None
    if samples_per_task <= 1:
        return WILSON
    if stderr is None:
        return WHOLE_RANGE
    return WILSON_OVER_TASKS if stderr <= 1e-12 else CLUSTERED


def share_interval(estimate: ClusteredMean, *, same: bool) -> Interval:
    """The interval of a mean of tasks' shares clustered on tasks: the t interval; with under two tasks the whole
    range (one task's samples say nothing of the tasks it stands for); where every task's share is the same
    (`same`: the standard error is 0 and would claim certainty) Wilson's over tasks, each task one trial."""
    from ocllm.analysis.stats import Interval, wilson

    if estimate.clusters < 2:
        return Interval(0.0, 1.0)
    if same:
        return wilson(round(estimate.mean * estimate.clusters), estimate.clusters)
    return interval(estimate)


def summary_interval(figures: Figures) -> Interval:
    """`accuracy_interval` of a summary's (or any scope's) figures."""
    return accuracy_interval(
        figures.correct, figures.scored, figures.samples_per_task, figures.accuracy_stderr, figures.tasks_scored
    )
