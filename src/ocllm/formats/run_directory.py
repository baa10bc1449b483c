"""A run directory of this project (manifest, suite copy, samples) as input to rescoring."""

from __future__ import annotations

import mmap
import os
import secrets
from array import array
from collections import Counter
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, BinaryIO

import msgspec

from ocllm.errors import InputError
from ocllm.files.atomic import MANIFEST, METRICS, SAMPLES, SUITE_COPY
from ocllm.formats.metrics_file import DECISION_FIELDS
from ocllm.formats.records import RunMeta, SavedRecord, SavedRun
from ocllm.models import Sample, Task, as_sent
from ocllm.server_facts import server_facts
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


def stream_run_dir(path: Path, tasks: Sequence[Task] | None = None) -> tuple[RunMeta, Iterator[SavedRecord]]:
    """The run's facts, and its records in suite order (a task's samples together, by their index), read one at a
    time: a first pass over samples.jsonl notes where each sample's line is (and the model names), then each line
    is read when its task comes. The raw outputs are never all in memory at once. `tasks`: the suite as the run
    that just wrote the folder holds it (its suite copy was written from them), so that it is not parsed again."""
    path = _run_of_metrics(path) or path
    if not (path / SUITE_COPY).exists() or not (path / SAMPLES).exists():
        raise InputError(f"{path}: not a run directory (needs {SUITE_COPY} and {SAMPLES})")
    # Checked now, read again task by task as the records are written; or the run's own, in memory already.
    suite = stream_suite(path / SUITE_COPY) if tasks is None else _HeldSuite(tasks)
    index, models = _index_samples(path / SAMPLES)
    previous = _PreviousDecisions(path / METRICS)
    meta = _manifest(path / MANIFEST)
    meta["tasks_in_suite"] = suite.count  # an interrupted run holds fewer: it is then not complete
    # Reports name the model the server answered as: the name the lane asked for may be an alias, or
    # another model altogether (a single-model server answers to any name).
    if models:
        meta["model"] = models.most_common(1)[0][0]

    def records() -> Iterator[SavedRecord]:
        with open(path / SAMPLES, "rb") as fh:
            try:
                for task in suite.tasks():
                    # Not run yet: an unfinished run is re-scored on what it holds.
                    for sample in index.samples_of(task.id, fh):
                        yield SavedRecord(as_sent(task, sample), sample, previous.get(task.id, sample.sample), {})
            finally:
                previous.close()

    return RunMeta.from_fields(meta), records()


class _HeldSuite:
    """A suite's tasks in memory, read as a StreamedSuite is."""

    def __init__(self, tasks: Sequence[Task]) -> None:
        self._tasks, self.count = tasks, len(tasks)

    def tasks(self) -> Iterator[Task]:
        return iter(self._tasks)


class _SampleHead(msgspec.Struct):
    """What the first pass reads of a sample line (msgspec skips the rest without keeping it)."""

    task_id: str
    sample: int = 0
    model: str | None = None


class _LineIndex:
    """Where each of a file's lines is, by task and sample index, kept in arrays (24 bytes a line, where a dict of
    tuples cost 400): the hash of its task id, its offset and length, sorted by (hash, sample index, line). A task's
    lines are found by bisection; whoever reads one checks that it is the task's (two ids may share a hash)."""

    def __init__(self, hashes: array[int], samples: array[int], starts: array[int], lengths: array[int]) -> None:
        import numpy as np

        hash_of = np.frombuffer(hashes, dtype=np.int64)
        # lexsort: the last key first; the line order breaks ties.
        order = np.lexsort((np.arange(len(hash_of)), np.frombuffer(samples, dtype=np.int64), hash_of))
        self._hash = hash_of[order]
        self._start = np.frombuffer(starts, dtype=np.int64)[order]
        self._length = np.frombuffer(lengths, dtype=np.int64)[order]

    def lines_of(self, task_id: str, fh: BinaryIO) -> Iterator[bytes]:
        """The lines that may be the task's, by sample index and then in the file's order."""
        key = hash(task_id)
        first, end = int(self._hash.searchsorted(key, side="left")), int(self._hash.searchsorted(key, side="right"))
        for at in range(first, end):
            fh.seek(int(self._start[at]))
            yield fh.read(int(self._length[at]))


class _SampleIndex(_LineIndex):
    def samples_of(self, task_id: str, fh: BinaryIO) -> Iterator[Sample]:
        """The task's samples, by their index (the last line of each, should a sample have been written twice)."""
        last: dict[int, Sample] = {}  # the task's samples (a handful)
        for line in self.lines_of(task_id, fh):
            sample = _SAMPLE.decode(line)
            if sample.task_id == task_id:
                last[sample.sample] = sample
        for number in sorted(last):
            yield last[number]


def _sort_key(sample: object) -> int:
    """A line's sample index as its index sorts it: one that fits no int64 (a hand-made file) sorts as -1 (only the
    order of a task's lines hangs on it; the lines themselves say which sample they are)."""
    return sample if isinstance(sample, int) and -(2**63) <= sample < 2**63 else -1


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
            indices.append(_sort_key(head.sample))
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


class _Skeleton(msgspec.Struct):
    tasks: list[_Decided | int] = msgspec.field(default_factory=list)


Previous = dict[str, Any]


class _PreviousDecisions:
    """The decisions metrics.json holds, by task id and sample index, read when asked for (`get`). Metrics are
    derived: a damaged or foreign file only means there is nothing to compare against, never an error.

    This project writes metrics.json one task a line. Those lines are indexed (`_LineIndex`), not held: a first
    pass decodes each line that is one JSON object, notes where it is, and copies the rest of the file with every
    run of such lines replaced by one number (a skeleton of a few kilobytes). The file is JSON exactly when the
    skeleton is (each line replaced was a whole JSON value), so decoding the skeleton checks the file as decoding
    it whole did, and its `tasks` says which runs of lines are the tasks. A file laid out otherwise (tasks over
    several lines) is decoded whole, as before."""

    def __init__(self, metrics: Path) -> None:
        self._path = metrics
        self._index: _LineIndex | None = None
        self._whole: dict[tuple[str, int], Previous] = {}
        self._file: BinaryIO | None = None
        if not metrics.exists():
            return
        try:
            if not self._read_by_lines():
                self._whole = _whole_decisions(metrics)
        except (OSError, ValueError, msgspec.DecodeError, msgspec.ValidationError):
            self._index, self._whole = None, {}

    def _read_by_lines(self) -> bool:
        """Index the task lines; False when the file is not laid out one task a line (or holds no task)."""
        nonce = secrets.randbits(48) << 12  # a run's number in the skeleton: none the file itself holds
        columns: tuple[array[int], ...] = (
            array("q"),
            array("q"),
            array("q"),
            array("q"),
        )  # hash, sample, start, length
        runs: list[tuple[int, int]] = []  # the lines (first, end) of each run, among those indexed
        skeleton = bytearray()
        in_run = False  # the line before was an object followed by a comma: a run of them goes on
        with open(self._path, "rb") as fh:
            offset = 0
            for line in fh:
                start, offset = offset, offset + len(line)
                body, comma = _body(line)
                decided = _one_line_object(body)
                if decided is None:
                    skeleton += line
                    in_run = False
                    continue
                if in_run:
                    del skeleton[-2:]  # the run so far and this line: one value
                else:
                    runs.append((len(columns[0]), len(columns[0])))
                    skeleton += b"%d" % (nonce + len(runs) - 1)
                skeleton += b",\n" if comma else b"\n"
                in_run = comma
                runs[-1] = (runs[-1][0], len(columns[0]) + 1)
                task_id, sample = decided.task_id, decided.sample
                columns[0].append(hash(task_id) if isinstance(task_id, str) else 0)
                columns[1].append(_sort_key(sample))
                columns[2].append(start)
                columns[3].append(len(line))
        # Whatever the skeleton does not settle is settled by decoding the file whole: a skeleton that is no JSON
        # (a file that is not, or a whole document on one line), tasks laid out over several lines, or none.
        try:
            doc = msgspec.json.decode(bytes(skeleton), type=_Skeleton)
        except (msgspec.DecodeError, msgspec.ValidationError):
            return False
        in_tasks = [item - nonce for item in doc.tasks if isinstance(item, int)]
        if len(in_tasks) != len(doc.tasks) or not in_tasks:
            return False
        if in_tasks != sorted(set(in_tasks)) or not all(0 <= run < len(runs) for run in in_tasks):
            return False  # a number in tasks that no run of lines was replaced by: the file's own
        if [runs[run] for run in in_tasks] != [(0, len(columns[0]))]:  # other one-line objects beside the tasks
            keep = [i for run in in_tasks for i in range(*runs[run])]
            columns = tuple(array("q", (column[i] for i in keep)) for column in columns)
        self._index = _LineIndex(*columns)
        return True

    def get(self, task_id: str, sample: int) -> Previous:
        if self._index is None:
            return self._whole.get((task_id, sample), {})
        if self._file is None:
            self._file = open(self._path, "rb")  # noqa: SIM115 (closed by close(), when the records are read)
        found: Previous = {}
        for line in self._index.lines_of(task_id, self._file):
            decided = _DECIDED.decode(_body(line)[0])
            if decided.task_id == task_id and isinstance(decided.sample, int) and decided.sample == sample:
                found = _fields(decided)  # the last line of a (task, sample) written twice, as a dict kept it
        return found

    def close(self) -> None:
        if self._file is not None:
            self._file.close()


_DECIDED = msgspec.json.Decoder(_Decided)


def _body(line: bytes) -> tuple[bytes, bool]:
    """A line without its white space and the comma after it (an array's item), and whether it had one."""
    body = line.strip()
    return (body[:-1].rstrip(), True) if body.endswith(b",") else (body, False)


def _one_line_object(body: bytes) -> _Decided | None:
    if not body.startswith(b"{"):
        return None
    try:
        return _DECIDED.decode(body)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None


def _fields(t: _Decided) -> Previous:
    return {k: getattr(t, k) for k in DECISION_FIELDS if getattr(t, k) is not msgspec.UNSET}


def _whole_decisions(metrics: Path) -> dict[tuple[str, int], Previous]:
    """The decisions of a metrics.json whose tasks are not one a line, decoded whole."""
    with open(metrics, "rb") as fh:
        if not os.fstat(fh.fileno()).st_size:
            return {}
        # Mapped, not read: the raw outputs metrics.json also holds are skipped without being loaded.
        with mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as mapped:
            doc = msgspec.json.decode(mapped, type=_Metrics)
    return {
        (t.task_id, t.sample): _fields(t) for t in doc.tasks if isinstance(t.task_id, str) and isinstance(t.sample, int)
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
        timing = {
            "wall_s": wall, "requests": manifest.get("requests"), "endpoints": manifest.get("endpoints") or [],
            "scoring_tail_s": manifest.get("scoring_tail_s"),
        }  # fmt: skip
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
