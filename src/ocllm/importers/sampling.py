"""A fixed, fair sample of a dataset, the same on every machine: seeded, stable, and nested.

Every task gets a place in one seeded order per category (a hash of the seed and its id, so the place does
not depend on which other files were read). `--per-category N` takes the first N of each category;
`--limit N` takes the first N of one order that interleaves the categories in proportion to their size.
Either way a larger N keeps every task a smaller N took: a 20-per-category run is part of a 50 one.

The sample is drawn while the rows are read: a task is offered once and kept only while it is among the N first
of its category's order (a heap per category), since neither sample ever takes more from a category. So an
import of a million rows holds N tasks a category, not a million; the sample is the same as if every task had
been built first.
"""

from __future__ import annotations

import hashlib
import heapq
from collections import Counter

from ocllm.models import Task


def _rank_key(seed: int, task_id: str) -> bytes:
    return hashlib.sha256(f"{seed}\0{task_id}".encode()).digest()


class SeededSample:
    """The tasks of an import offered one at a time, in the order read; `tasks()` is the sample, in that order.
    With neither `per_category` nor `limit` every task is kept."""

    def __init__(self, seed: int, per_category: int | None = None, limit: int | None = None) -> None:
        self._seed = seed
        self._per_category = per_category
        self._limit = limit
        self._take = per_category if per_category is not None else limit  # at most this many of a category
        self._all: list[Task] = []
        # Per category, the `_take` first of its seeded order so far: a max-heap by place (the rank negated).
        self._kept: dict[str, list[tuple[int, int, Task]]] = {}
        self._sizes: Counter[str] = Counter()
        self._offered = 0

    def offer(self, task: Task, group: str) -> None:
        """A task read, of category `group` (the dataset's own, whatever --category renames it to)."""
        index = self._offered
        self._offered += 1
        if self._take is None:
            self._all.append(task)
            return
        self._sizes[group] += 1
        entry = (-int.from_bytes(_rank_key(self._seed, task.id), "big"), index, task)
        heap = self._kept.setdefault(group, [])
        if len(heap) < self._take:
            heapq.heappush(heap, entry)
        elif entry[0] > heap[0][0]:  # earlier in the order than the last one kept
            heapq.heapreplace(heap, entry)

    def tasks(self) -> list[Task]:
        if self._take is None:
            return self._all
        chosen: list[tuple[int, Task]] = []
        if self._per_category is not None:
            chosen = [(index, task) for heap in self._kept.values() for _, index, task in heap]
        else:
            chosen = self._in_proportion()
        return [task for _, task in sorted(chosen, key=lambda pair: pair[0])]

    def _in_proportion(self) -> list[tuple[int, Task]]:
        """N tasks in all, spread over the categories in proportion to their size.

        Each task's place is where it falls in its category's seeded order, as a fraction of the category
        (the middle of its slot: (rank + 0.5) / size); taking the N smallest places takes from each category
        about N * size / total, and one order serves every N, so the samples nest. No category gives more than
        N, so the N first of each (all that was kept) hold the N smallest places."""
        places: list[tuple[float, int, int, Task]] = []
        for group, heap in self._kept.items():
            size = self._sizes[group]
            for rank, (negated, index, task) in enumerate(sorted(heap, reverse=True)):
                places.append(((rank + 0.5) / size, -negated, index, task))
        places.sort(key=lambda place: place[:3])
        return [(index, task) for _, _, index, task in places[: self._limit]]
