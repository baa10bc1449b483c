"""`ocllm merge`: join the run directories of a suite's shards (`--shard K/N`) into one run directory that
every command reads as an ordinary run.

Shards belong together only when they ran the same suite (the whole suite's hash), the same lane settings
that shape the answers, the same scorer version and policy, and no task twice; every shard of the N must be
there, each whole: one whole sample line for each sample of each of its tasks (samples_per_task of them), none
for another task (a torn or unfinished
shard would make a run that looks finished with tasks missing). Anything else is refused in one line naming
the shard (and the line), before anything is written. The merged suite.jsonl is the whole
suite in its own order (restored from the positions each shard recorded), so its hash is the suite's."""

from __future__ import annotations

import hashlib
from collections import Counter
from pathlib import Path
from typing import Any, NamedTuple

import msgspec

from ocllm.analysis.rescore import RescoredFile, score_run_dir
from ocllm.errors import InputError
from ocllm.files.atomic import MANIFEST, SAMPLES, SUITE_COPY, atomic_write_bytes, write_json, write_samples
from ocllm.files.output_guard import check_merge_output
from ocllm.models import RunManifest, Sample, SuiteRecord, Task
from ocllm.run.directory_reader import (
    OUTPUT_SETTINGS,
    SERVER_LOG,
    Lane,
    changed_templates,
    check_output_folder,
    read_manifest,
    recorded_lane,
    shard_of,
)
from ocllm.suites import canonical_jsonl, load_suite

# Lane settings that decide how answers are scored: shards scored differently do not add up.
_POLICY_SETTINGS = ("allow_reasoning_fallback", "conflict_policy", "think_prefilled")
# Shards asked their tasks as often as each other: avg@k and pass@k over shards of other k would not add up.
_SAMPLING_SETTINGS = ("samples_per_task",)
_SAMPLE = msgspec.json.Decoder(Sample)


class Merged(NamedTuple):
    out_dir: Path
    lane: Lane
    result: RescoredFile
    shards: int


class _Shard(NamedTuple):
    path: Path
    manifest: RunManifest
    tasks: list[Task]
    samples: list[Sample]


def merge_runs(runs: list[Path], out_dir: Path, *, force: bool = False) -> Merged:
    """Check every shard, and the output folder, before anything is written: a refused merge leaves no trace."""
    shards = [_read_shard(path) for path in runs]
    _check_together(shards)
    first = shards[0].manifest
    assert first.shard is not None
    lane = recorded_lane(first, shards[0].path / MANIFEST)
    check_merge_output(out_dir, [s.path for s in shards], force=force)
    check_output_folder(out_dir)

    placed: dict[int, Task] = {}
    for shard in shards:
        assert shard.manifest.shard is not None
        placed.update(zip(shard.manifest.shard.positions, shard.tasks, strict=True))
    if len(placed) != first.shard.suite_tasks:
        raise InputError(
            f"{shards[0].path}: the shards hold {len(placed)} of the suite's {first.shard.suite_tasks} tasks"
        )
    tasks = [placed[i] for i in sorted(placed)]
    suite_bytes = canonical_jsonl(tasks)
    if hashlib.sha256(suite_bytes).hexdigest() != first.shard.suite_sha256:
        raise InputError(f"{shards[0].path}: the shards' tasks do not make up the suite they name (hash differs)")
    samples = [sample for shard in shards for sample in shard.samples]
    manifest = msgspec.structs.replace(
        first,
        suite=SuiteRecord(name=first.suite.name, sha256=first.shard.suite_sha256, tasks=len(tasks)),
        shard=None,
        merged_from=[str(s.path) for s in shards],
        requests=sum(s.manifest.requests for s in shards),
        retries=dict(sum((Counter(s.manifest.retries) for s in shards), Counter())),
        resends=sum(s.manifest.resends for s in shards),
        # Machine time: the shards may have run side by side, and each one's server was busy for its own.
        wall_s=round(sum(s.manifest.wall_s for s in shards), 3),
        scoring_tail_s=round(sum(s.manifest.scoring_tail_s for s in shards), 3),
        endpoints=None,
        started_at=min(s.manifest.started_at for s in shards),
        finished_at=max((s.manifest.finished_at or "" for s in shards), default="") or None,
        status=_status([s.manifest for s in shards]),
        # Simulated if any shard was: its figures are in the merged run's.
        simulated=any(s.manifest.simulated for s in shards),
        server=None,
        notices=[],
    )

    # Everything is checked: write. The manifest first, so that a merge stopped half-way is still recognised
    # as a merge, which the next try replaces.
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / SERVER_LOG).unlink(missing_ok=True)  # a replaced run's server log is not the shards'
    write_json(out_dir / MANIFEST, manifest)
    atomic_write_bytes(out_dir / SUITE_COPY, suite_bytes)
    write_samples(out_dir / SAMPLES, samples)

    result = score_run_dir(out_dir, lane.name, lane.policy())  # as a finished run is scored
    manifest.notices = list(result.notices)
    manifest.served_model = result.served_model or manifest.served_model
    write_json(out_dir / MANIFEST, manifest)
    return Merged(out_dir, lane, result, len(shards))


def _read_shard(path: Path) -> _Shard:
    if not (path / MANIFEST).is_file() or not (path / SUITE_COPY).is_file() or not (path / SAMPLES).is_file():
        raise InputError(f"{path}: not a run directory (needs {MANIFEST}, {SUITE_COPY} and {SAMPLES})")
    manifest = read_manifest(path / MANIFEST)
    record = manifest.shard
    if record is None:
        raise InputError(f"{path}: not a shard (it ran the whole suite; shards are run with --shard K/N)")
    if record.count < 1 or not 0 <= record.index < record.count:
        raise InputError(
            f"{path}: its manifest records shard {record.index}/{record.count}, which cannot be "
            "(K must be 0 to N-1 and N at least 1)"
        )
    if any(not 0 <= p < record.suite_tasks for p in record.positions):
        raise InputError(
            f"{path}: its manifest places tasks at positions beyond the suite's {record.suite_tasks} tasks"
        )
    if len(set(record.positions)) != len(record.positions):
        raise InputError(f"{path}: its manifest places two tasks at one position of the suite")
    tasks = load_suite(str(path / SUITE_COPY)).tasks
    if len(tasks) != len(record.positions):
        raise InputError(f"{path}: its suite.jsonl does not match the shard its manifest records")
    for task in tasks:
        if shard_of(task.id, record.count) != record.index:
            raise InputError(
                f"{path}: task {task.id!r} does not fall in shard {record.index}/{record.count} "
                f"(its id hashes to shard {shard_of(task.id, record.count)})"
            )
    per_task = manifest.lane.get("samples_per_task", 1)
    if not isinstance(per_task, int) or isinstance(per_task, bool) or per_task < 1:
        raise InputError(f"{path}: its manifest records samples_per_task {per_task!r}, which cannot be")
    return _Shard(path, manifest, tasks, _shard_samples(path, tasks, per_task))


def _shard_samples(path: Path, tasks: list[Task], per_task: int) -> list[Sample]:
    """A shard's samples, every line whole and each sample of each of the shard's tasks once. A run stopped
    mid-write leaves a torn last line, and an unfinished shard lacks samples: merged, either would make a run that looks
    finished with tasks missing, so both are refused (`run ... --resume` in the shard cuts the torn line and
    finishes it)."""
    file = path / SAMPLES
    ids = {task.id for task in tasks}
    first_at: dict[tuple[str, int], int] = {}
    samples: list[Sample] = []
    for number, line in enumerate(file.read_bytes().split(b"\n"), start=1):
        if not line.strip():
            continue
        try:
            sample = _SAMPLE.decode(line)
        except (msgspec.DecodeError, msgspec.ValidationError):
            raise InputError(
                f"{file}:{number}: not a whole sample line (a torn write? `ocllm run ... --resume` in the shard "
                "repairs it)"
            ) from None
        if sample.task_id not in ids:
            raise InputError(f"{file}:{number}: task {sample.task_id!r} is not one of the shard's tasks")
        if sample.sample >= per_task:
            raise InputError(
                f"{file}:{number}: sample {sample.sample} of task {sample.task_id!r}, but the shard asked "
                f"{per_task} sample(s) per task"
            )
        key = (sample.task_id, sample.sample)
        if key in first_at:
            which = f"sample {sample.sample} of task" if per_task > 1 else "sample of task"
            raise InputError(
                f"{file}:{number}: a second {which} {sample.task_id!r} (the first is line {first_at[key]})"
            )
        first_at[key] = number
        samples.append(sample)
    expected = len(tasks) * per_task
    if len(samples) < expected:
        what = f"{len(tasks)} tasks"
        if per_task > 1:
            what = f"{expected} samples ({per_task} for each of {len(tasks)} tasks)"
        raise InputError(
            f"{path}: {expected - len(samples)} of its {what} have no sample (the shard did not "
            "finish: run it again with --resume)"
        )
    return samples


def _check_together(shards: list[_Shard]) -> None:
    first = shards[0]
    a = first.manifest
    assert a.shard is not None
    seen: dict[int, Path] = {}
    where: dict[str, Path] = {}
    placed: dict[int, Path] = {}
    for shard in shards:
        b = shard.manifest
        assert b.shard is not None
        if b.shard.count != a.shard.count:
            raise InputError(
                f"{shard.path}: a shard of {b.shard.count}, while {first.path} is a shard of {a.shard.count}"
            )
        if b.shard.suite_tasks != a.shard.suite_tasks:
            raise InputError(
                f"{shard.path}: a shard of a suite of {b.shard.suite_tasks} tasks, {first.path} of "
                f"{a.shard.suite_tasks}"
            )
        if b.request_settings != a.request_settings:  # what was added to every request (cache_prompt, ...)
            raise InputError(
                f"{shard.path}: its requests carried {b.request_settings or 'nothing more'}, those of {first.path} "
                f"{a.request_settings or 'nothing more'}"
            )
        if b.shard.suite_sha256 != a.shard.suite_sha256:
            raise InputError(f"{shard.path}: ran another suite than {first.path} (the whole suite's hash differs)")
        if b.scorer_version != a.scorer_version:
            raise InputError(f"{shard.path}: scored by scorer {b.scorer_version}, {first.path} by {a.scorer_version}")
        for key in (*OUTPUT_SETTINGS, *_POLICY_SETTINGS, *_SAMPLING_SETTINGS):
            if b.lane.get(key) != a.lane.get(key):
                raise InputError(
                    f"{shard.path}: lane setting {key!r} is {b.lane.get(key)!r}, in {first.path} {a.lane.get(key)!r}"
                )
        if changed := changed_templates(a.lane, b.lane):  # whichever keys each shard's manifest kept them under
            raise InputError(f"{shard.path}: lane setting {changed[0]!r} differs from {first.path}'s")
        if b.shard.index in seen:
            raise InputError(f"{shard.path}: shard {b.shard.index}/{b.shard.count} is also {seen[b.shard.index]}")
        seen[b.shard.index] = shard.path
        for position in b.shard.positions:
            if position in placed:
                raise InputError(f"{shard.path}: task {position} of the suite is also in {placed[position]}")
            placed[position] = shard.path
        for task in shard.tasks:
            if task.id in where:
                raise InputError(f"{shard.path}: task {task.id!r} is also in {where[task.id]}")
            where[task.id] = shard.path
    missing = [str(k) for k in range(a.shard.count) if k not in seen]
    if missing:
        raise InputError(
            f"shard(s) {', '.join(missing)} of {a.shard.count} missing: merge needs every shard of the suite"
        )


def _status(manifests: list[RunManifest]) -> Any:
    statuses = {m.status for m in manifests}
    for status in ("running", "interrupted", "finished_with_errors"):
        if status in statuses:
            return status
    return "finished"
