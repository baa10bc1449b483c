"""Reader of metrics files: the old harness's and this project's output, as input to rescoring.

Both are a JSON object with a `tasks` list (or a bare list of task records). Each record carries
the raw model output (`raw_content`, `raw_reasoning`, `finish_reason`) beside the task definition
(`options`, `expected_answer`, `required_substrings`) and the decision some scorer took. Only the
raw output and the task definition are read for scoring; the old decision is kept as `previous`.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec

from ocllm.errors import InputError
from ocllm.files.reading import InvalidJSON, has_non_standard_numbers, json_items, load_json_whole, outline
from ocllm.formats.harness_records import untyped_claimed
from ocllm.formats.records import RunMeta, SavedRecord, SavedRun
from ocllm.models import SAMPLE_KEYS, sample_from_record
from ocllm.scoring import task_types

# Fields holding a scorer's decision in the old format or ours; copied untouched into `previous`.
DECISION_FIELDS = (
    "extracted_final_answer",
    "extraction_source",
    "extraction_method",
    "ambiguity",
    "ambiguity_flag",
    "scoring_decision",
    "rule",
    "correct",
)
# Fields that describe the run rather than the decision; carried through to the output.
CARRIED_FIELDS = ("prompt", "latency_s", "usage", "subset")
# What this project's output records under `source` about the run it was scored from (`run_format`: another
# tool's, for a document `rescore --from` wrote).
_RUN_FIELDS = ("lane", "model", "requested_model", "lane_settings", "suite", "tasks_in_suite", "run_format", "server",
               "command", "verdicts_of")
# Optional fields and the types they must have when present (null is always allowed).
_FIELD_TYPES: tuple[tuple[str, type | tuple[type, ...], str], ...] = (
    ("raw_content", str, "text"),
    ("raw_reasoning", str, "text"),
    ("prompt", str, "text"),
    ("finish_reason", str, "text"),
    ("error", str, "text"),
    ("category", str, "text"),
    ("latency_s", (int, float), "a number"),
    ("usage", dict, "an object"),
)


def recognise(path: Path) -> bool:
    """A JSON file: this project's metrics or rescore output, or the old harness's metrics."""
    return path.is_file() and path.suffix.lower() == ".json"


def load_metrics_file(path: Path) -> SavedRun:
    """A metrics file, its records in memory (reports and comparisons show every task)."""
    meta, records = stream_metrics_file(path)
    return SavedRun(path, meta, list(records))


def stream_metrics_file(path: Path) -> tuple[RunMeta, Iterator[SavedRecord]]:
    """A metrics file: an object with a `tasks` list (the old harness's, or this project's output), or a
    bare list of task records; the run's facts, and its records one at a time.

    Two passes over the file. The first checks that all of it is JSON and collects the object's fields
    beside `tasks`, which may come after it (this project's output ends with its summary), passing over
    the records without building them; the second builds the records one at a time, as they are used."""
    if path.exists() and not path.is_file():
        raise InputError(f"{path}: not a regular file (a metrics file is read twice, so it cannot be a pipe)")
    try:
        top, fields, tasks = outline(path, "tasks")
        whole: list[Any] | None = None  # the records are read from the file as they are used
    except InvalidJSON:
        if not has_non_standard_numbers(path):
            raise
        # NaN or Infinity, as Python's json module writes a latency never measured, say: not JSON, but what
        # the old harness may have written. Read whole by that same module (memory as large as the file).
        top, fields, tasks, whole = _outline_whole(path)
    if top == "start_array":
        meta: dict[str, Any] = {}
        prefix = "item"
    elif top == "start_map" and tasks == ["start_array"]:
        # Not the run's facts: the tasks, their summary, and what an earlier rescore said of them.
        meta = {k: v for k, v in fields.items() if k not in ("summary", "notices")}
        summary = fields.get("summary")
        scorer = summary.get("scorer") if isinstance(summary, dict) else None
        if isinstance(scorer, dict):
            meta["scorer"] = scorer  # this project's output: the policy it was scored with
        left_out = summary.get("unscorable_records") if isinstance(summary, dict) else None
        if left_out:
            meta["unscorable"] = left_out  # rescored from another tool's file: the records it could not score
        source = fields.get("source")
        if isinstance(source, dict):
            # This project's output names the run it came from (lane, model, suite size): a metrics.json
            # read back says as much about the run as its directory would, an interrupted one included.
            meta.update({k: v for k, v in source.items() if k in _RUN_FIELDS and k not in meta})
            # Rescored from another tool's files (`rescore --from` lists them): where they were read from names
            # the run; a rescore of that document keeps the first origin.
            origin = source.get("origin") or (source.get("path") if "files" in source else None)
            if isinstance(origin, str):
                meta["origin"] = origin
        prefix = "tasks.item"
    elif len(tasks) > 1:
        # Which of them would be the run? A JSON object's keys should be unique; a reader may take either.
        raise InputError(f"{path}: the key 'tasks' appears {len(tasks)} times")
    else:
        raise InputError(f"{path}: expected an object with a 'tasks' list, or a list of task records")

    def records() -> Iterator[SavedRecord]:
        # The one thing kept per record: its task id and sample index, to refuse a second record of it.
        seen: set[tuple[str, int]] = set()
        rows = json_items(path, prefix) if whole is None else iter(whole)
        for index, row in enumerate(rows, start=1):
            record = _record(path, index, row)
            key = (record.task.id, record.sample.sample)
            if key in seen:
                again = f" sample {key[1]}" if key[1] else ""
                raise InputError(f"{path}: task {record.task.id!r}{again} appears twice")
            seen.add(key)
            yield record

    return RunMeta.from_fields(meta), records()


def _record_keys(exc: msgspec.ValidationError) -> str:
    """msgspec's words, naming a Sample field by the key a record writes it under."""
    said = str(exc)
    for key, name in SAMPLE_KEYS:
        said = said.replace(f"`$.{name}`", f"`{key}`")
    return said


def _outline_whole(path: Path) -> tuple[str | None, dict[str, Any], list[str], list[Any]]:
    """What `outline` says of a file, read whole (see `load_json_whole`), with the records themselves."""
    data = load_json_whole(path)
    if isinstance(data, list):
        return "start_array", {}, [], data
    if not isinstance(data, dict):
        return None, {}, [], []
    tasks = data.get("tasks")
    fields = {k: v for k, v in data.items() if k != "tasks"}
    opens = [] if "tasks" not in data else ["start_array" if isinstance(tasks, list) else "value"]
    return "start_map", fields, opens, tasks if isinstance(tasks, list) else []


def _record(path: Path, index: int, row: Any) -> SavedRecord:
    where = f"{path}: task #{index}"
    if not isinstance(row, dict):
        raise InputError(f"{where} is not a JSON object")
    task_id = row.get("task_id")
    if not isinstance(task_id, str) or not task_id:
        raise InputError(f"{where} has no task_id")
    where = f"{path}: task {task_id!r}"
    # A record of the old harness from before records named their type: the room that claims it (MCQ: options).
    task_type = row.get("task_type") or untyped_claimed(row)
    if not isinstance(task_type, str) or task_type not in task_types.TASK_TYPES:
        raise InputError(f"{where} has task_type {task_type!r}; expected one of {', '.join(task_types.TASK_TYPES)}")
    own_fields = task_types.of(task_type).saved_task_fields(where, row)  # the type's fields, checked

    for field, kinds, what in _FIELD_TYPES:
        if row.get(field) is not None and (not isinstance(row[field], kinds) or isinstance(row[field], bool)):
            raise InputError(f"{where} has a {field} that is not {what}")

    task = task_types.of(task_type).task_struct(
        id=task_id,
        question=str(row.get("question") or ""),
        category=str(row.get("category") or "uncategorized"),
        subset=row.get("subset"),
        prompt=row.get("prompt"),
        **own_fields,
    )
    index_of_sample = row.get("sample", 0)
    if not isinstance(index_of_sample, int) or isinstance(index_of_sample, bool) or index_of_sample < 0:
        raise InputError(f"{where} has a sample that is not a whole number from 0 (the index of its sample)")
    # Structured calls that are not a list were never read (the old harness wrote none): none, as before.
    carried = row if isinstance(row.get("tool_calls"), list | None) else {**row, "tool_calls": None}
    try:
        sample = sample_from_record(carried)
    except msgspec.ValidationError as exc:
        raise InputError(f"{where} holds a sample field of the wrong kind ({_record_keys(exc)})") from None
    previous = {k: row[k] for k in DECISION_FIELDS if k in row}
    if isinstance(row.get("previous"), dict) and isinstance(row["previous"].get("tool"), str):
        # A document rescored from another tool's results: that tool's decision stays the one set against
        # this scorer's (what `rescore --from` counted as changed), however often the document is re-scored.
        previous = row["previous"]
    carried = {k: row[k] for k in CARRIED_FIELDS if k in row}
    return SavedRecord(task, sample, previous, carried)
