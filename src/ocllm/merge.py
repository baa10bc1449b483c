"""`ocllm merge`: join the run directories of a suite's shards (`--shard K/N`) into one run directory that
every command reads as an ordinary run.

Shards belong together only when they ran the same suite (the whole suite's hash), the same lane settings
that shape the answers, the same scorer version and policy, and no task twice; every shard of the N must be
there. Anything else is refused in one line naming the difference. The merged suite.jsonl is the whole
suite in its own order (restored from the positions each shard recorded), so its hash is the suite's."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any, NamedTuple

import msgspec

from ocllm.errors import InputError
from ocllm.lanes import Lane, lane_from_mapping
from ocllm.models import RunManifest, Sample, SuiteRecord, Task
from ocllm.rescore import RescoredFile
from ocllm.run_directory import OUTPUT_SETTINGS, RunDirectory, read_manifest
from ocllm.rundir import MANIFEST, SAMPLES, SUITE_COPY, atomic_write_bytes, read_samples, write_json, write_samples
from ocllm.suites import canonical_jsonl, load_suite

# Lane settings that decide how answers are scored: shards scored differently do not add up.
_POLICY_SETTINGS = ("allow_reasoning_fallback", "conflict_policy", "think_prefilled")


class Merged(NamedTuple):
    out_dir: Path
    lane: Lane
    result: RescoredFile
    shards: int


class _Shard(NamedTuple):
    path: Path
    manifest: RunManifest
    tasks: list[Task]


def merge_runs(runs: list[Path], out_dir: Path) -> Merged:
    shards = [_read_shard(path) for path in runs]
    _check_together(shards)
    first = shards[0].manifest
    assert first.shard is not None
    target = RunDirectory(out_dir)
    target.check(resume=False)
    for shard in shards:
        if shard.path.resolve() == out_dir.resolve():
            raise InputError(f"{out_dir}: the merged run cannot be written into one of its shards")

    placed: dict[int, Task] = {}
    for shard in shards:
        assert shard.manifest.shard is not None
        placed.update(zip(shard.manifest.shard.positions, shard.tasks, strict=True))
    tasks = [placed[i] for i in sorted(placed)]
    suite_bytes = canonical_jsonl(tasks)
    if hashlib.sha256(suite_bytes).hexdigest() != first.shard.suite_sha256:
        raise InputError(f"{shards[0].path}: the shards' tasks do not make up the suite they name (hash differs)")
    samples: list[Sample] = []
    for shard in shards:
        samples += read_samples(shard.path / SAMPLES)

    out_dir.mkdir(parents=True, exist_ok=True)
    atomic_write_bytes(out_dir / SUITE_COPY, suite_bytes)
    write_samples(out_dir / SAMPLES, samples)
    manifest = msgspec.structs.replace(
        first,
        suite=SuiteRecord(name=first.suite.name, sha256=first.shard.suite_sha256, tasks=len(tasks)),
        shard=None,
        merged_from=[str(s.path) for s in shards],
        requests=sum(s.manifest.requests for s in shards),
        # Machine time: the shards may have run side by side, and each one's server was busy for its own.
        wall_s=round(sum(s.manifest.wall_s for s in shards), 3),
        endpoints=None,
        started_at=min(s.manifest.started_at for s in shards),
        finished_at=max((s.manifest.finished_at or "" for s in shards), default="") or None,
        status=_status([s.manifest for s in shards]),
        server=None,
        notices=[],
    )
    write_json(out_dir / MANIFEST, manifest)

    from ocllm.runner import score_run_dir  # the runner's own scoring, as a finished run is scored

    lane = _lane_of(first)
    result = score_run_dir(out_dir, lane)
    manifest.notices = list(result.notices)
    manifest.served_model = result.served_model or manifest.served_model
    write_json(out_dir / MANIFEST, manifest)
    return Merged(out_dir, lane, result, len(shards))


def _read_shard(path: Path) -> _Shard:
    if not (path / MANIFEST).is_file() or not (path / SUITE_COPY).is_file() or not (path / SAMPLES).is_file():
        raise InputError(f"{path}: not a run directory (needs {MANIFEST}, {SUITE_COPY} and {SAMPLES})")
    manifest = read_manifest(path / MANIFEST)
    if manifest.shard is None:
        raise InputError(f"{path}: not a shard (it ran the whole suite; shards are run with --shard K/N)")
    tasks = load_suite(str(path / SUITE_COPY)).tasks
    if len(tasks) != len(manifest.shard.positions):
        raise InputError(f"{path}: its suite.jsonl does not match the shard its manifest records")
    return _Shard(path, manifest, tasks)


def _check_together(shards: list[_Shard]) -> None:
    first = shards[0]
    a = first.manifest
    assert a.shard is not None
    seen: dict[int, Path] = {}
    where: dict[str, Path] = {}
    for shard in shards:
        b = shard.manifest
        assert b.shard is not None
        if b.shard.count != a.shard.count:
            raise InputError(
                f"{shard.path}: a shard of {b.shard.count}, while {first.path} is a shard of {a.shard.count}"
            )
        if b.shard.suite_sha256 != a.shard.suite_sha256:
            raise InputError(f"{shard.path}: ran another suite than {first.path} (the whole suite's hash differs)")
        if b.scorer_version != a.scorer_version:
            raise InputError(f"{shard.path}: scored by scorer {b.scorer_version}, {first.path} by {a.scorer_version}")
        for key in (*OUTPUT_SETTINGS, *_POLICY_SETTINGS):
            if b.lane.get(key) != a.lane.get(key):
                raise InputError(
                    f"{shard.path}: lane setting {key!r} is {b.lane.get(key)!r}, in {first.path} {a.lane.get(key)!r}"
                )
        if b.shard.index in seen:
            raise InputError(f"{shard.path}: shard {b.shard.index}/{b.shard.count} is also {seen[b.shard.index]}")
        seen[b.shard.index] = shard.path
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


def _lane_of(manifest: RunManifest) -> Lane:
    """The lane the shards ran, from the settings a manifest records (its managed server aside: a merge
    starts none, and the manifest keeps only the names of the server's env)."""
    settings = {k: v for k, v in manifest.lane.items() if k not in ("name", "server")}
    return lane_from_mapping(str(manifest.lane.get("name") or "merged"), settings, "manifest")
