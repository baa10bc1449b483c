"""Shards of a suite: `--shard K/N` runs only the tasks whose stable hash of the id falls in shard K, so that N
jobs (a Slurm array, a Kubernetes Indexed Job) run one suite between them, and `ocllm merge` joins them.

The hash is of the id alone (SHA-256, not Python's salted `hash`): the same task lands in the same shard on
every machine, in every run, whatever else the suite holds."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from dataclasses import dataclass

from ocllm.errors import InputError
from ocllm.models import ShardRecord
from ocllm.run.bounds import BOUNDS, out_of_range
from ocllm.suites import Suite, canonical_jsonl, load_suite

_SHARD = re.compile(r"\s*(\d+)\s*/\s*(\d+)\s*")


@dataclass(frozen=True)
class Shard:
    index: int  # K, from 0
    count: int  # N

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"


def parse_shard(text: str) -> Shard:
    """K/N with 0 <= K < N, or one line saying what is wrong."""
    match = _SHARD.fullmatch(text)
    if not match:
        raise InputError(f"--shard {text!r}: expected K/N, e.g. 0/4 (K counts from 0)")
    index, count = int(match.group(1)), int(match.group(2))
    if count < 1 or index >= count:
        raise InputError(f"--shard {text!r}: K must be 0 to N-1 and N at least 1")
    if out_of_range("--shard", count) is not None:
        raise InputError(f"--shard {text!r}: N, the number of shards, must be {BOUNDS['--shard'].describe()}")
    return Shard(index, count)


def shard_of(task_id: str, count: int) -> int:
    digest = hashlib.sha256(task_id.encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") % count


def take_shard(suite: Suite, shard: Shard) -> tuple[Suite, ShardRecord]:
    """The shard's part of the suite (in suite order), and what the manifest records of it: the whole suite's
    hash and size, and where each of the shard's tasks stands in it, so that a merge can check the shards
    belong together and restore the suite's order."""
    positions = [i for i, task in enumerate(suite.tasks) if shard_of(task.id, shard.count) == shard.index]
    if not positions:
        # Refused before anything is written: a run folder of no task could neither run nor be merged.
        raise InputError(
            f"--shard {shard}: no task of the suite falls in shard {shard} (the suite {suite.name!r} has "
            f"{len(suite.tasks)} tasks; a smaller N gives every shard some)"
        )
    tasks = [suite.tasks[i] for i in positions]
    part = Suite(suite.name, suite.path, hashlib.sha256(canonical_jsonl(tasks)).hexdigest(), tasks)
    record = ShardRecord(
        index=shard.index,
        count=shard.count,
        suite_sha256=suite.sha256,
        suite_tasks=len(suite.tasks),
        positions=positions,
    )
    return part, record


def check_shards(suites: Iterable[str], shard: Shard) -> None:
    """Every lane's part of its suite, before `matrix` runs its first lane: an empty shard of the third lane is
    refused before the first one runs."""
    for name in dict.fromkeys(suites):
        take_shard(load_suite(name), shard)


def describe(record: ShardRecord | None) -> str:
    return "" if record is None else f" (shard {record.index}/{record.count})"


def shard_line(record: ShardRecord) -> str:
    """What the console says at the start and the end of a sharded run: which shard, and how much of the suite."""
    return f"shard {record.index}/{record.count}: {len(record.positions)} of {record.suite_tasks} tasks"
