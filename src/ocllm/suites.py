"""Suites: JSONL files of tasks, validated before any request is sent."""

from __future__ import annotations

import hashlib
import json
import sys
from array import array
from collections.abc import Iterator
from importlib import resources
from pathlib import Path
from typing import Any, NamedTuple

import msgspec

from ocllm.errors import InputError
from ocllm.files.reading import text_lines, too_deep
from ocllm.files.surrogates import first_lone_surrogate, may_hold_surrogate
from ocllm.models import Task
from ocllm.scoring import task_types

_REQUIRED = ("id", "type", "question", "category")
# The most bytes one suite line may hold (docs/lanes.md, "Bounds on suites"), checked before it is parsed: a
# question of a million-token context is about 4 MB of English (this is twice that); a schema or tools at their
# own bounds (10,000 values, 100,000 characters) fit. A 1 GB line is refused after its first
# 8 MB are read, where it was read whole, then parsed, then counted.
MAX_LINE_BYTES = 8 * 1024 * 1024
_LINE_BOUND = 'a suite line holds at most 8 MB (docs/lanes.md, "Bounds on suites")'


class Suite(NamedTuple):
    name: str
    path: Path
    sha256: str  # of the canonical serialisation: the manifest records it, --resume checks it
    tasks: list[Task]
    file_sha256: str = ""  # of the file's bytes, as manifests recorded it before the canonical form

    def canonical(self) -> bytes:
        return canonical_jsonl(self.tasks)


def first_tasks(suite: Suite, limit: int) -> Suite:
    """The suite's first `limit` tasks, in its order, as a suite of their own (`ocllm run --limit N`): its hash is
    theirs, so a run of them resumes only with the same limit, and no figure claims the tasks left out."""
    if limit >= len(suite.tasks):
        return suite
    tasks = suite.tasks[:limit]
    return Suite(suite.name, suite.path, hashlib.sha256(canonical_jsonl(tasks)).hexdigest(), tasks)


def canonical_jsonl(tasks: list[Task]) -> bytes:
    """One spelling of a suite, whatever file it was read from (a JSONL file written by hand, or one day a
    dataset's Parquet): one task a line, every field a suite line may carry that is set, keys sorted. A run
    directory's suite.jsonl is this, and its hash is the suite's identity."""
    lines = []
    for task in tasks:
        fields = msgspec.to_builtins(task)
        fields.setdefault("question", "")
        fields.setdefault("category", task.category)
        fields.pop("prompt", None)  # the prompt as sent belongs to a sample, not to the suite
        lines.append(msgspec.json.encode(fields, order="sorted") + b"\n")
    return b"".join(lines)


def shipped_suites() -> dict[str, Path]:
    folder = resources.files("ocllm") / "data" / "suites"
    return {Path(str(p)).stem: Path(str(p)) for p in folder.iterdir() if str(p).endswith(".jsonl")}


def resolve_suite(name_or_path: str) -> Path:
    """A shipped suite's name ("demo") or a path to a JSONL file."""
    shipped = shipped_suites()
    if name_or_path in shipped:
        return shipped[name_or_path]
    path = Path(name_or_path)
    try:
        if path.exists():
            return path
    except OSError as exc:  # a folder on the way that may not be read, a name too long: not "no such file"
        raise InputError(f"{name_or_path}: cannot read ({exc.strerror or exc})") from None
    raise InputError(f"{name_or_path}: no such file, and not a shipped suite ({', '.join(sorted(shipped))})")


def load_suite(name_or_path: str) -> Suite:
    """A suite read a line at a time, each line bounded (MAX_LINE_BYTES) before it is parsed, so that a hostile
    file costs at most one bounded line beside the tasks kept."""
    path = resolve_suite(name_or_path)
    file_hash = hashlib.sha256()  # of the bytes after a byte-order mark, as manifests have recorded it
    tasks: list[Task] = []
    seen: dict[str, int] = {}
    lines = suite_lines(path, file_hash)
    try:
        for number, line in lines:
            if not line.strip():
                continue
            task = parse_task_line(path, number, line)
            if task.id in seen:
                raise InputError(f"{path}:{number}: field 'id': {task.id!r} already used on line {seen[task.id]}")
            seen[task.id] = number
            tasks.append(task)
    except InputError:
        _read_through(lines)
        raise
    if not tasks:
        raise InputError(f"{path}: the suite holds no tasks")
    canonical = hashlib.sha256(canonical_jsonl(tasks)).hexdigest()
    return Suite(path.stem, path, canonical, tasks, file_hash.hexdigest())


def suite_lines(path: Path, digest: Any = None) -> Iterator[tuple[int, str]]:
    """The lines of a suite file and their numbers, a line at a time, each bounded before it is parsed
    (`files.reading.text_lines`: split at "\\n" as JSON Lines are; not UTF-8, a Git LFS pointer and a line past
    MAX_LINE_BYTES each said in one line); `digest` fed the file's bytes after a byte-order mark."""
    return text_lines(path, MAX_LINE_BYTES, _LINE_BOUND, digest)


# A Struct, not a NamedTuple: a field `count` there would hide tuple.count (what mypy refuses).
class StreamedSuite(msgspec.Struct, frozen=True):
    """A suite file read through once, its tasks checked as `load_suite` checks them, and read again task by task
    when `tasks()` is called: a run directory of 100,000 tasks is re-scored without its suite in memory."""

    path: Path
    count: int

    def tasks(self) -> Iterator[Task]:
        for number, line in suite_lines(self.path):
            if line.strip():
                yield parse_task_line(self.path, number, line)


def stream_suite(path: Path) -> StreamedSuite:
    """The suite's tasks checked, one at a time, with the error `load_suite` gives first (a byte that is not UTF-8
    anywhere, else the first line that is wrong or uses an id again, else an empty suite). What is kept meanwhile
    is a hash of each id, eight bytes a task; only ids whose hash repeats are compared, in a second pass."""
    hashes = array("q")
    lines = suite_lines(path)
    try:
        for number, line in lines:
            if line.strip():
                hashes.append(hash(parse_task_line(path, number, line).id))
    except InputError:
        _read_through(lines)
        _refuse_a_repeated_id(path, hashes)  # an id used twice before the bad line comes first too
        raise
    if not hashes:
        raise InputError(f"{path}: the suite holds no tasks")
    _refuse_a_repeated_id(path, hashes)
    return StreamedSuite(path, len(hashes))


def _read_through(lines: Iterator[tuple[int, str]]) -> None:
    """The rest of a suite after a bad line: a byte that is not UTF-8 anywhere in the file is the first thing said
    of it (as when the file was read whole before its lines)."""
    for _ in lines:
        pass


def _refuse_a_repeated_id(path: Path, hashes: array[int]) -> None:
    """`load_suite`'s error for the first task (of those hashed) whose id an earlier one used, if any."""
    import numpy as np

    ranked = np.sort(np.frombuffer(hashes, dtype=np.int64))
    repeated = set(ranked[1:][ranked[1:] == ranked[:-1]].tolist())
    if not repeated:
        return
    seen: dict[str, int] = {}
    tasks = 0
    for number, line in suite_lines(path):
        if not line.strip():
            continue
        tasks += 1
        if tasks > len(hashes):
            return
        task_id = parse_task_line(path, number, line).id
        if hash(task_id) not in repeated:
            continue
        if task_id in seen:
            raise InputError(f"{path}:{number}: field 'id': {task_id!r} already used on line {seen[task_id]}")
        seen[task_id] = number


def parse_task_line(path: Path, number: int, line: str) -> Task:
    where = f"{path}:{number}"
    try:
        row = json.loads(line)
    except json.JSONDecodeError as exc:
        raise InputError(f"{where}: invalid JSON at column {exc.colno}: {exc.msg}") from None
    except RecursionError:
        raise InputError(too_deep(where)) from None
    except ValueError as exc:
        if "integer string conversion" not in str(exc):
            raise
        # json reads a number with int(), which refuses more digits than sys.get_int_max_str_digits() (4,300).
        raise InputError(
            f"{where}: a JSON integer of more than {sys.get_int_max_str_digits():,} digits, the most Python reads "
            'from text; write a long number as a string ("answer": "123...")'
        ) from None
    if not isinstance(row, dict):
        raise InputError(f"{where}: expected a JSON object")
    # A lone surrogate ("\\udc00", valid JSON) is no text: no request could carry it, no file could hold the run.
    not_text = first_lone_surrogate(row) if may_hold_surrogate(line) else None
    if not_text is not None:
        field, at = not_text
        raise InputError(f"{where}: field '{field}': holds a lone UTF-16 surrogate ({at}), which is not text")
    for field in _REQUIRED:
        if field not in row:
            raise InputError(f"{where}: missing field '{field}'")
    if not isinstance(row["id"], str) or not row["id"]:
        raise InputError(f"{where}: field 'id': must be a non-empty string")
    if not isinstance(row["type"], str) or row["type"] not in task_types.TASK_TYPES:
        raise InputError(f"{where}: field 'type': {row['type']!r} is not one of {', '.join(task_types.TASK_TYPES)}")
    task_type = task_types.of(row["type"])
    task_type.check_suite_line(where, row)
    try:
        return msgspec.convert(row, task_type.task_struct)
    except msgspec.ValidationError as exc:
        raise InputError(f"{where}: {exc}") from None
