"""A run directory of this project (manifest, suite copy, samples) as input to rescoring."""

from __future__ import annotations

import mmap
import os
from array import array
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

import msgspec

from ocllm.errors import InputError
from ocllm.files.atomic import MANIFEST, METRICS, SAMPLES, SUITE_COPY
from ocllm.formats.metrics_file import DECISION_FIELDS
from ocllm.formats.records import RunMeta, SavedRecord, SavedRun
from ocllm.models import Sample, as_sent
from ocllm.suites import stream_suite


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
    suite = stream_suite(path / SUITE_COPY)  # checked now, read again task by task as the records are written
    index, models = _index_samples(path / SAMPLES)
    previous = _previous_decisions(path / METRICS)
    meta = _manifest(path / MANIFEST)
    meta["tasks_in_suite"] = suite.count  # an interrupted run holds fewer: it is then not complete
    # Reports name the model the server answered as: the name the lane asked for may be an alias, or
    # another model altogether (a single-model server answers to any name).
    if models:
        meta["model"] = models.most_common(1)[0][0]

    def records() -> Iterator[SavedRecord]:
        with open(path / SAMPLES, "rb") as fh:
            for task in suite.tasks():
                # Not run yet: an unfinished run is re-scored on what it holds.
                for sample in index.samples_of(task.id, fh):
                    yield SavedRecord(as_sent(task, sample), sample, previous.get((task.id, sample.sample), {}), {})

    return RunMeta.from_fields(meta), records()


class _SampleHead(msgspec.Struct):
    """What the first pass reads of a sample line (msgspec skips the rest without keeping it)."""

    task_id: str
    sample: int = 0
    model: str | None = None


class _SampleIndex:
    """Where each sample line of samples.jsonl is, kept in arrays (about 30 bytes a line, where a dict of tuples
    cost 400): the hash of its task id, its sample index, its offset and length, sorted by (hash, sample index,
    line). A task's lines are found by bisection; each line read is checked to be of the task (two ids may share a
    hash), and of a sample written twice the last line is taken."""

    def __init__(self, hashes: array[int], samples: array[int], starts: array[int], lengths: array[int]) -> None:
        import numpy as np

        hash_of = np.frombuffer(hashes, dtype=np.int64)
        # lexsort: the last key first; the line order breaks ties (argsort of a stable sort keeps it).
        order = np.lexsort((np.arange(len(hash_of)), np.frombuffer(samples, dtype=np.int64), hash_of))
        self._hash = hash_of[order]
        self._sample = np.frombuffer(samples, dtype=np.int64)[order]
        self._start = np.frombuffer(starts, dtype=np.int64)[order]
        self._length = np.frombuffer(lengths, dtype=np.int64)[order]

    def samples_of(self, task_id: str, fh: BinaryIO) -> Iterator[Sample]:
        """The task's samples, by their index (the last line of each), read from `fh`."""
        key = hash(task_id)
        lo, hi = int(self._hash.searchsorted(key, side="left")), int(self._hash.searchsorted(key, side="right"))
        last: dict[int, Sample] = {}  # the task's samples (a handful): its own lines, the later one of a pair
        for at in range(lo, hi):
            fh.seek(int(self._start[at]))
            sample = _SAMPLE.decode(fh.read(int(self._length[at])))
            if sample.task_id == task_id:
                last[sample.sample] = sample
        for number in sorted(last):
            yield last[number]


_HEAD = msgspec.json.Decoder(_SampleHead)
_SAMPLE = msgspec.json.Decoder(Sample)


def _index_samples(samples: Path) -> tuple[_SampleIndex, Counter[str]]:
    """Where each sample's line is, by task and sample index (the last one, should a sample appear twice), and
    the model names the server answered as. A torn last line (the process died mid-write) is left out; a bad line
    elsewhere is an error, as when a run is resumed."""
    hashes, indices, starts, lengths = array("q"), array("q"), array("q"), array("q")
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
            hashes.append(hash(head.task_id))
            indices.append(head.sample)
            starts.append(start)
            lengths.append(len(line))
            if head.model:
                models[head.model] += 1
    return _SampleIndex(hashes, indices, starts, lengths), models


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
    }


def _json_object(path: Path) -> dict[str, Any]:
    if not path.exists():
        return {}
    try:
        doc = msgspec.json.decode(path.read_bytes())
    except msgspec.DecodeError:
        return {}
    return doc if isinstance(doc, dict) else {}
