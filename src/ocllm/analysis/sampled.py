"""The figures of a task's repeated samples, kept as verdicts arrive: avg@k with its task-clustered standard
error, pass@k, maj@k, and each task's agreement (docs/statistics.md).

One sample per task is the case k = 1 of the same figures: avg@1 is the accuracy, pass@1 too, and maj@1 credits
a task whose one answer is right. A failed request is no sample of the task: it is counted in `errors` elsewhere
and left out of every figure here.
"""

from __future__ import annotations

import struct
import tempfile
from array import array
from collections.abc import Hashable, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, overload

from ocllm.analysis.clustered import (
    ClusteredMean,
    clustered_from_sums,
    interval,
    majority_is_gold,
    pass_at_k,
    pass_hat_k,
)  # fmt: skip
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


# How a vote is written while its task's samples are spilled (see SampledTally): GOLD, no answer, an answer equal to
# no other, an extracted answer (its text follows).
_GOLD, _NONE, _UNIQUE, _TEXT = b"g", b"n", b"u", b"t"


class SampledTally:
    """Verdicts added one sample at a time, grouped by task; the figures of any subset of the tasks.

    A rescore holds this for every task of a run, so nothing here is a Python object per task: each task's counts,
    its category and type (as indices), whether its vote is a majority for the gold and whether its votes agree are
    in arrays, one row a task, and its id in one byte string. A task's votes are kept only while its samples come
    (every reader yields a task's samples together); when the next task begins they are reduced to those two flags.
    A task whose samples come apart (a hand-written file may interleave them) gets a row per run of its samples;
    the rows are joined when the figures are first asked for, their votes read back from a spill file that holds
    every run's votes (in memory up to a megabyte, then on disk)."""

    def __init__(self) -> None:
        self._hash = array("q")  # hash of the task id: runs of one task are found by sorting these
        self._ids = bytearray()  # every row's task id, UTF-8, one after the other
        self._id_end = array("Q")
        self._category = array("I")  # index into self._names
        self._type = array("I")
        self._names: list[str] = []
        self._name_index: dict[str, int] = {}
        self._samples = array("I")
        self._scored = array("I")
        self._correct = array("I")
        self._majority = bytearray()  # 1: the gold is strictly the most frequent vote (maj@k credits the task)
        self._agree = bytearray()  # 1: every scored sample voted, and all alike
        self._open_id: str | None = None
        self._open_votes: list[Hashable | None] = []
        self._spill: tempfile.SpooledTemporaryFile[bytes] | None = None
        self._joined = True  # rows of one task joined (nothing to join yet)

    def add(
        self, task_id: str, category: str, task_type: str, correct: bool | None, failed: bool, cast: Hashable | None
    ) -> None:
        if task_id != self._open_id:
            self._close()
            self._open_id = task_id
            self._hash.append(hash(task_id))
            self._ids += task_id.encode("utf-8", "surrogatepass")
            self._id_end.append(len(self._ids))
            self._category.append(self._index(category))
            self._type.append(self._index(task_type))
            for column in (self._samples, self._scored, self._correct):
                column.append(0)
            self._majority.append(0)
            self._agree.append(0)
            self._joined = False
        row = len(self._samples) - 1
        self._samples[row] += 1
        if failed or correct is None:
            return
        self._scored[row] += 1
        self._correct[row] += correct is True
        self._open_votes.append(cast)

    def _index(self, name: str) -> int:
        index = self._name_index.get(name)
        if index is None:
            index = self._name_index[name] = len(self._names)
            self._names.append(name)
        return index

    def _close(self) -> None:
        """The open row's votes reduced to its two flags, and spilled in case the task comes again."""
        if self._open_id is None:
            return
        row = len(self._samples) - 1
        votes = self._open_votes
        self._majority[row], self._agree[row] = _flags(votes)
        if votes:
            if self._spill is None:
                self._spill = tempfile.SpooledTemporaryFile(max_size=1 << 20)  # noqa: SIM115 (closed when the tally goes)
            self._spill.write(_encoded(row, votes))
        self._open_votes = []
        self._open_id = None

    def _join(self) -> None:
        """Rows of one task (its samples came apart) joined into its first row, as if they had come together; the
        later rows are emptied (no samples: passed over by every figure)."""
        if self._joined:
            return
        self._close()
        self._joined = True
        import numpy as np

        hashes = np.frombuffer(self._hash, dtype=np.int64)
        order = np.argsort(hashes, kind="stable")  # rows of equal hash next to each other, in the order they came
        ranked = hashes[order]
        repeated = np.flatnonzero(ranked[1:] == ranked[:-1])
        if not len(repeated):
            return  # every task's samples came together: the common case, and nothing to do
        rows_of: dict[str, list[int]] = {}  # the task's rows, in order, for every id whose hash is repeated
        for at in np.unique(np.concatenate([repeated, repeated + 1])):
            row = int(order[at])
            rows_of.setdefault(self._id_of(row), []).append(row)
        groups = {rows[0]: rows[1:] for rows in rows_of.values() if len(rows) > 1}  # one hash, two ids: not joined
        votes = self._spilled({r for first, rest in groups.items() for r in (first, *rest)})
        for first, rest in groups.items():
            merged = list(votes.get(first, []))
            for row in rest:
                for column in (self._samples, self._scored, self._correct):
                    column[first] += column[row]
                    column[row] = 0
                merged += votes.get(row, [])
            self._majority[first], self._agree[first] = _flags(merged)

    def _spilled(self, rows: set[int]) -> dict[int, list[Hashable | None]]:
        """The votes of these rows, read back from the spill file."""
        out: dict[int, list[Hashable | None]] = {}
        if self._spill is None:
            return out
        self._spill.seek(0)
        read = self._spill.read
        while head := read(8):
            row, count = struct.unpack("<II", head)
            votes: list[Hashable | None] = []
            for _ in range(count):
                kind = read(1)
                if kind == _TEXT:
                    (size,) = struct.unpack("<I", read(4))
                    votes.append(read(size).decode("utf-8", "surrogatepass"))
                else:
                    votes.append(GOLD if kind == _GOLD else None if kind == _NONE else object())
            if row in rows:
                out[row] = votes
        self._spill.seek(0, 2)
        return out

    def _id_of(self, row: int) -> str:
        start = self._id_end[row - 1] if row else 0
        return self._ids[start : self._id_end[row]].decode("utf-8", "surrogatepass")

    def _rows(self, keep: Iterable[str] | None, category: str | None, task_type: str | None) -> array[int] | range:
        """The rows of the tasks asked for, in the order the tasks first came (in an array: a list of 100,000 row
        numbers would cost as much as the rest of the tally)."""
        self._join()
        if keep is not None:
            wanted = set(keep)
            return array("I", (r for r in range(len(self._samples)) if self._samples[r] and self._id_of(r) in wanted))
        column, name = (self._category, category) if category is not None else (self._type, task_type)
        if name is None:
            return range(len(self._samples))
        index = self._name_index.get(name)
        return array("I", (r for r, value in enumerate(column) if value == index))

    def figures(
        self,
        keep: Iterable[str] | None = None,
        *,
        by_task: bool = False,
        category: str | None = None,
        task_type: str | None = None,
    ) -> dict[str, Any]:
        """The sampled figures of the tasks named in `keep`, or of one category or task type (every task when none
        is given): samples_per_task, tasks_scored, accuracy_stderr (clustered on tasks), pass_at_k, majority_at_k;
        with `by_task`, also the standard error clustered on category (when there are two or more) and each task's
        agreement (when k > 1). Sums are taken in the order the tasks came, as a list of them would be summed."""
        rows = self._rows(keep, category, task_type)
        samples, scored_of, correct = self._samples, self._scored, self._correct
        scored = array("I", (r for r in rows if scored_of[r]))
        k = max((samples[r] for r in rows if samples[r]), default=1)
        on_tasks = clustered_from_sums(_Sums(scored, correct, scored_of))
        out: dict[str, Any] = {
            "samples_per_task": k,
            "tasks_scored": len(scored),
            "accuracy_stderr": on_tasks.stderr if on_tasks.clusters >= 2 else None,
            "pass_at_k": _pass_at(scored, scored_of, correct, k),
            "pass_hat_k": _pass_at(scored, scored_of, correct, k, every=True),
            "majority_at_k": sum(self._majority[r] for r in scored) / len(scored) if scored else None,
        }
        if by_task:
            categories: dict[int, list[float]] = {}
            for r in scored:
                total = categories.setdefault(self._category[r], [0.0, 0])
                total[0] += correct[r]
                total[1] += scored_of[r]
            on_categories = clustered_from_sums([(s, int(n)) for s, n in categories.values()])
            out["categories"] = on_categories.clusters
            out["accuracy_stderr_category"] = on_categories.stderr if on_categories.clusters >= 2 else None
            if k > 1:
                out["by_task"] = {self._id_of(r): self._agreement(r) for r in scored}
        return out

    def _agreement(self, row: int) -> TaskAgreement:
        return TaskAgreement(
            samples=self._scored[row],
            correct=self._correct[row],
            share=round(self._correct[row] / self._scored[row], 6),
            agree=bool(self._agree[row]),
            majority=bool(self._majority[row]),
        )


class _Sums(Sequence[tuple[float, int]]):
    """Each scored task's (correct, scored), read from the tally's columns as `clustered_from_sums` asks for them
    (a list of 100,000 pairs would cost as much as the rest of the tally)."""

    def __init__(self, rows: array[int], correct: array[int], scored: array[int]) -> None:
        self._rows, self._correct, self._scored = rows, correct, scored

    def __len__(self) -> int:
        return len(self._rows)

    @overload
    def __getitem__(self, i: int) -> tuple[float, int]: ...
    @overload
    def __getitem__(self, i: slice) -> Sequence[tuple[float, int]]: ...
    def __getitem__(self, i: int | slice) -> tuple[float, int] | Sequence[tuple[float, int]]:
        if isinstance(i, slice):
            return [(self._correct[r], self._scored[r]) for r in self._rows[i]]
        r = self._rows[i]
        return (self._correct[r], self._scored[r])

    def __iter__(self) -> Iterator[tuple[float, int]]:
        correct, scored = self._correct, self._scored
        return ((correct[r], scored[r]) for r in self._rows)


def _flags(votes: list[Hashable | None]) -> tuple[int, int]:
    """(majority for the gold, all votes alike) of one task's votes."""
    if not votes:
        return 0, 0
    return int(majority_is_gold(votes, GOLD)), int(None not in votes and len(set(votes)) == 1)


def _encoded(row: int, votes: list[Hashable | None]) -> bytes:
    parts = [struct.pack("<II", row, len(votes))]
    for cast in votes:
        if cast is GOLD:
            parts.append(_GOLD)
        elif cast is None:
            parts.append(_NONE)
        elif isinstance(cast, str):
            text = cast.encode("utf-8", "surrogatepass")
            parts.append(_TEXT + struct.pack("<I", len(text)) + text)
        else:
            parts.append(_UNIQUE)  # an answer equal to no other (`vote` of a type that extracts none)
    return b"".join(parts)


def _pass_at(scored: array[int], n: array[int], c: array[int], k: int, *, every: bool = False) -> dict[str, float]:
    """pass@j (with `every`, pass^j: all j right) for j = 1..k, each the mean over the tasks with at least j scored
    samples (a task whose request failed has fewer; it counts where it can)."""
    estimate = pass_hat_k if every else pass_at_k
    out = {}
    for j in range(1, k + 1):
        count = sum(1 for r in scored if n[r] >= j)
        if count:
            out[str(j)] = round(sum(estimate(n[r], c[r], j) for r in scored if n[r] >= j) / count, 6)
    return out


def accuracy_interval(
    correct: int, scored: int, samples_per_task: int, stderr: float | None, tasks: int
) -> Interval | None:
    """The 95% interval of an accuracy: Wilson's with one sample per task (as always); with more, the t interval
    of the task-clustered standard error on tasks - 1 degrees of freedom (docs/statistics.md). Where every task's
    samples agree the clustered error is 0 and would claim certainty: the Wilson interval over tasks is given
    instead, each task one trial (its samples then say no more than one of them). None where there is none: nothing
    scored, or one task and several samples (its samples measure that task, not the accuracy of tasks like it); the
    whole range in their place would read as an interval that was measured."""
    from ocllm.analysis.stats import wilson  # SciPy: only where an interval is drawn

    if scored <= 0:
        return None
    if samples_per_task <= 1:
        return wilson(correct, scored)
    if stderr is None:
        return None  # under two tasks: no standard error
    mean = correct / scored
    # Every task's share the same: a float sum may leave 1e-17 for the 0 it is.
    return share_interval(ClusteredMean(mean, stderr, tasks, scored), same=stderr <= 1e-12)


# What `accuracy_interval` computed, in the words every page uses for it (issue 30: a page said "clustered on
# tasks" of an interval that was the Wilson fallback).
WILSON = "Wilson"
CLUSTERED = "t interval clustered on tasks"
WILSON_OVER_TASKS = "Wilson over tasks (every task's share correct the same: no clustered error to use)"
NO_INTERVAL = "no interval (one task: its samples say nothing of other tasks)"


def interval_method(scored: int, samples_per_task: int, stderr: float | None) -> str | None:
    """Which interval `accuracy_interval` gives for these figures (NO_INTERVAL: why it gives none for one task); None
    where nothing was scored."""
    if scored <= 0:
        return None
    if samples_per_task <= 1:
        return WILSON
    if stderr is None:
        return NO_INTERVAL
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


def summary_interval(figures: Figures) -> Interval | None:
    """`accuracy_interval` of a summary's (or any scope's) figures."""
    return accuracy_interval(
        figures.correct, figures.scored, figures.samples_per_task, figures.accuracy_stderr, figures.tasks_scored
    )
