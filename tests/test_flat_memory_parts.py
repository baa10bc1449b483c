"""The parts that keep a rescore's memory flat in its input's length (issue 45, item 4) decide what they decided
before: repeated (task, sample) keys, the changed decisions spilled to disk, and the paired figures taken from
arrays rather than a table of lists per task."""

from __future__ import annotations

import random

import numpy as np

from ocllm.analysis.clustered import clustered_mean, each_its_own_cluster
from ocllm.analysis.paired import paired_by_task, paired_figures
from ocllm.files.spilled_rows import SpilledRows
from ocllm.formats.repeated_keys import Repeat, RepeatedKeys


def test_no_key_given_twice_is_no_repeat() -> None:
    keys = RepeatedKeys()
    for i in range(1000):
        keys.add(f"gsm8k/{i}", 0, 0)
        keys.add(f"gsm8k/{i}", 1, 0)  # another sample of the same task is another key
    assert keys.first_repeat() is None
    assert RepeatedKeys().first_repeat() is None


def test_the_repeat_named_is_the_first_a_reader_meets() -> None:
    keys = RepeatedKeys()
    for i in range(100):
        keys.add(f"t/{i}", 0, 0)
    keys.add("t/70", 0, 1)  # the first repeat, in the second file
    keys.add("t/3", 0, 1)
    keys.add("t/70", 0, 2)
    assert keys.first_repeat() == Repeat("t/70", 0, 0, 1)


def test_a_repeat_within_one_file_names_that_file_twice() -> None:
    keys = RepeatedKeys()
    keys.add("q", 1, 0)
    keys.add("q", 0, 0)
    keys.add("q", 1, 0)
    assert keys.first_repeat() == Repeat("q", 1, 0, 0)


def test_keys_of_one_hash_are_told_apart_by_their_bytes() -> None:
    keys = RepeatedKeys()
    keys.add("a", 0, 0)
    keys.add("b", 0, 0)
    keys._hashes[1] = keys._hashes[0]  # a collision, made: different keys, one hash
    assert keys.first_repeat() is None
    keys.add("b", 0, 3)
    keys._hashes[2] = keys._hashes[0]
    assert keys.first_repeat() == Repeat("b", 0, 0, 3)


def test_spilled_rows_read_back_in_order_past_the_memory_bound() -> None:
    rows = SpilledRows(kept=3)
    written = [(f"task/{i}", "expected", "é → ✓ " * (i % 7), str(i)) for i in range(40_000)]  # several megabytes
    for row in written[:20_000]:
        rows.append(row)
    assert list(rows) == written[:20_000]
    for row in written[20_000:]:  # appending goes on after a read
        rows.append(row)
    assert len(rows) == len(written) and rows.head == written[:3]
    assert list(rows) == written
    rows.close()
    assert not SpilledRows(kept=3) and list(SpilledRows(kept=3)) == []


def test_each_its_own_cluster_is_the_clustered_mean_to_the_last_bit() -> None:
    rng = random.Random(45)
    for n in (0, 1, 2, 3, 10, 1001):
        values = [rng.choice((-1.0, 0.0, 1.0, rng.random(), 1 / 3)) for _ in range(n)]
        assert each_its_own_cluster(values) == clustered_mean(values, range(n))
        assert each_its_own_cluster(np.asarray(values)) == clustered_mean(values, range(n))


def test_paired_figures_of_arrays_are_those_of_lists() -> None:
    rng = random.Random(7)
    for n in (1, 2, 5, 40, 3000):
        a = [rng.random() < 0.6 for _ in range(n)]
        b = [rng.random() < 0.7 for _ in range(n)]
        from_lists = paired_figures(a, b, "A", "B")
        assert paired_figures(np.asarray(a), np.asarray(b), "A", "B") == from_lists
        assert from_lists.a_wins == sum(x and not y for x, y in zip(a, b, strict=True))
        assert from_lists.both_wrong == sum(not x and not y for x, y in zip(a, b, strict=True))
        # One sample a task, the task numbers an array (a rescore's) or ids of any kind (compare's).
        assert paired_by_task(np.arange(n), np.asarray(a), np.asarray(b), "A", "B") == from_lists
        assert paired_by_task([f"id{i}" for i in range(n)], a, b, "A", "B") == from_lists


def test_samples_of_a_task_are_paired_as_one_task_whatever_holds_the_ids() -> None:
    rng = random.Random(11)
    ids = [f"t{i // 3}" for i in range(300)]  # three samples a task, the tasks in order
    numbers = np.asarray([i // 3 for i in range(300)])
    a = [rng.random() < 0.5 for _ in ids]
    b = [rng.random() < 0.6 for _ in ids]
    figures = paired_by_task(ids, a, b, "A", "B")
    assert figures.n_paired == 100 and figures.samples_per_task_a == 3
    assert paired_by_task(numbers, np.asarray(a), np.asarray(b), "A", "B") == figures
    # The tasks' first appearance orders the shares, not their names: ids out of order give the same figures.
    shuffled = [f"z{99 - i // 3}" for i in range(300)]
    assert paired_by_task(shuffled, a, b, "A", "B") == figures
