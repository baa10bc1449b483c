"""A fixed, fair sample of a dataset, the same on every machine: seeded, stable, and nested.

Every task gets a place in one seeded order per category (a hash of the seed and its id, so the place does
not depend on which other files were read). `--per-category N` takes the first N of each category;
`--limit N` takes the first N of one order that interleaves the categories in proportion to their size.
Either way a larger N keeps every task a smaller N took: a 20-per-category run is part of a 50 one.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict

from ocllm.models import Task


def _rank_key(seed: int, task_id: str) -> bytes:
    return hashlib.sha256(f"{seed}\0{task_id}".encode()).digest()


def _by_category(tasks: list[Task], group: list[str], seed: int) -> dict[str, list[int]]:
    """Indices of the tasks of each category (`group[i]` is task i's), in the seeded order."""
    members: dict[str, list[int]] = defaultdict(list)
    for i, name in enumerate(group):
        members[name].append(i)
    return {name: sorted(idx, key=lambda i: _rank_key(seed, tasks[i].id)) for name, idx in members.items()}


def per_category(tasks: list[Task], group: list[str], n: int, seed: int) -> list[Task]:
    """N tasks of each category (all of a smaller one), in the order they were read."""
    keep = {i for order in _by_category(tasks, group, seed).values() for i in order[:n]}
    return [t for i, t in enumerate(tasks) if i in keep]


def limited(tasks: list[Task], group: list[str], n: int, seed: int) -> list[Task]:
    """N tasks in all, spread over the categories in proportion to their size, in the order read.

    Each task's place is where it falls in its category's seeded order, as a fraction of the category
    (the middle of its slot: (rank + 0.5) / size); taking the N smallest places takes from each category
    about N * size / total, and one order serves every N, so the samples nest."""
    places: list[tuple[float, bytes, int]] = []
    for order in _by_category(tasks, group, seed).values():
        size = len(order)
        places.extend(((rank + 0.5) / size, _rank_key(seed, tasks[i].id), i) for rank, i in enumerate(order))
    keep = {i for _, _, i in sorted(places)[:n]}
    return [t for i, t in enumerate(tasks) if i in keep]
