"""A run directory of this project (manifest, suite copy, samples) as input to rescoring."""

from __future__ import annotations

import mmap
import os
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec

from ocllm.errors import InputError
from ocllm.files.atomic import MANIFEST, METRICS, SAMPLES, SUITE_COPY
from ocllm.formats.metrics_file import DECISION_FIELDS
from ocllm.formats.records import RunMeta, SavedRecord, SavedRun
from ocllm.models import Sample, as_sent
from ocllm.server_facts import server_facts
from ocllm.suites import load_suite


def recognise(path: Path) -> bool:
    """A folder: this project's run directory (refused with a clear line when its files are missing). Also
    the metrics.json inside one: it holds the decisions, while the raw outputs are in samples.jsonl beside it."""
    return path.is_dir() or _run_of_metrics(path) is not None


def _run_of_metrics(path: Path) -> Path | None:
    if path.name == METRICS and path.is_file() and (path.parent / SAMPLES).is_file():
        return path.parent if (path.parent / SUITE_COPY).is_file() else None
    return None


def load_run_dir(path: Path) -> SavedRun:
    meta, records = stream_run_dir(path)
    return SavedRun(path, meta, list(records))


def stream_run_dir(path: Path) -> tuple[RunMeta, Iterator[SavedRecord]]:
    """The run's facts, and its records in suite order (a task's samples together, by their index), read one at a
    time: a first pass over samples.jsonl notes where each sample's line is (and the model names), then each line
    is read when its task comes. The raw outputs are never all in memory at once."""
    path = _run_of_metrics(path) or path
    if not (path / SUITE_COPY).exists() or not (path / SAMPLES).exists():
        raise InputError(f"{path}: not a run directory (needs {SUITE_COPY} and {SAMPLES})")
    tasks = load_suite(str(path / SUITE_COPY)).tasks
    where, models = _index_samples(path / SAMPLES)
    previous = _previous_decisions(path / METRICS)
    meta = _manifest(path / MANIFEST)
    meta["tasks_in_suite"] = len(tasks)  # an interrupted run holds fewer: it is then not complete
    # Reports name the model the server answered as: the name the lane asked for may be an alias, or
    # another model altogether (a single-model server answers to any name).
    if models:
        meta["model"] = models.most_common(1)[0][0]

    def records() -> Iterator[SavedRecord]:
        with open(path / SAMPLES, "rb") as fh:
            for task in tasks:
                # Not run yet: an unfinished run is re-scored on what it holds.
                for index, span in sorted(where.get(task.id, {}).items()):
                    fh.seek(span[0])
                    sample = _SAMPLE.decode(fh.read(span[1] - span[0]))
                    yield SavedRecord(as_sent(task, sample), sample, previous.get((task.id, index), {}), {})

    return RunMeta.from_fields(meta), records()


class _SampleHead(msgspec.Struct):
    """What the first pass reads of a sample line (msgspec skips the rest without keeping it)."""

    task_id: str
    sample: int = 0
    model: str | None = None


_HEAD = msgspec.json.Decoder(_SampleHead)
_SAMPLE = msgspec.json.Decoder(Sample)


def _index_samples(samples: Path) -> tuple[dict[str, dict[int, tuple[int, int]]], Counter[str]]:
    """Where each sample's line is, by task and sample index (the last one, should a sample appear twice), and
    the model names the server answered as. A torn last line (the process died mid-write) is left out; a bad line
    elsewhere is an error, as when a run is resumed."""
    where: dict[str, dict[int, tuple[int, int]]] = {}
    models: Counter[str] = Counter()
    with open(samples, "rb") as fh:
        offset = 0
        for number, line in enumerate(fh, start=1):
            start, offset = offset, offset + len(line)
            if not line.strip():
                continue
            try:
                head = _HEAD.decode(line)
            except (msgspec.DecodeError, msgspec.ValidationError):
                if not line.endswith(b"\n"):
                    break  # the last line, torn
                raise InputError(f"{samples}:{number}: not a valid sample line") from None
            where.setdefault(head.task_id, {})[head.sample] = (start, offset)
            if head.model:
                models[head.model] += 1
    return where, models


class _Decided(msgspec.Struct):
    """A task of metrics.json as far as its decision goes; the raw output it also holds is skipped."""

    task_id: Any = None
    sample: Any = 0
    extracted_final_answer: Any = msgspec.UNSET
    extraction_source: Any = msgspec.UNSET
    extraction_method: Any = msgspec.UNSET
    ambiguity: Any = msgspec.UNSET
    ambiguity_flag: Any = msgspec.UNSET
    scoring_decision: Any = msgspec.UNSET
    rule: Any = msgspec.UNSET
    correct: Any = msgspec.UNSET


class _Metrics(msgspec.Struct):
    tasks: list[_Decided] = msgspec.field(default_factory=list)


def _previous_decisions(metrics: Path) -> dict[tuple[str, int], dict[str, Any]]:
    """The decisions metrics.json holds, by task id and sample index. Metrics are derived: a damaged or foreign
    file only means there is nothing to compare against, never an error."""
    if not metrics.exists():
        return {}
    try:
        with open(metrics, "rb") as fh:
            if not os.fstat(fh.fileno()).st_size:
                return {}
            # Mapped, not read: the raw outputs metrics.json also holds are skipped without being loaded.
            with mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as mapped:
                doc = msgspec.json.decode(mapped, type=_Metrics)
    except (OSError, ValueError, msgspec.DecodeError, msgspec.ValidationError):
        return {}
    return {
        (t.task_id, t.sample): {k: getattr(t, k) for k in DECISION_FIELDS if getattr(t, k) is not msgspec.UNSET}
        for t in doc.tasks
        if isinstance(t.task_id, str) and isinstance(t.sample, int)
    }


def _manifest(path: Path) -> dict[str, Any]:
    manifest = _json_object(path)
    lane = manifest.get("lane")
    lane = lane if isinstance(lane, dict) else {}
    suite = manifest.get("suite")
    wall = manifest.get("wall_s")
    facts = server_facts(manifest)
    timing = None
    if isinstance(wall, int | float) and not isinstance(wall, bool) and wall > 0:
        timing = {"wall_s": wall, "requests": manifest.get("requests"), "endpoints": manifest.get("endpoints") or []}
    return {
        "run_format": manifest.get("format"),
        "lane": lane.get("name"),
        "model": lane.get("model"),
        "requested_model": lane.get("model"),
        "lane_settings": lane,
        "suite": suite.get("name") if isinstance(suite, dict) else None,
        "timing": timing,
        "server": None if facts is None else msgspec.to_builtins(facts),
        "command": manifest.get("command"),
    }


def _json_object(path: Path) -> dict[str, Any]:
    if not path.exists():
        return {}
    try:
        doc = msgspec.json.decode(path.read_bytes())
    except msgspec.DecodeError:
        return {}
    return doc if isinstance(doc, dict) else {}
