"""Suites: JSONL files of tasks, validated before any request is sent."""

from __future__ import annotations

import codecs
import hashlib
import json
import sys
from array import array
from collections.abc import Iterator
from importlib import resources
from pathlib import Path
from typing import NamedTuple

import msgspec

from ocllm.errors import InputError
from ocllm.files.reading import not_utf8, too_deep, unreadable
from ocllm.models import Task
from ocllm.scoring import task_types

_REQUIRED = ("id", "type", "question", "category")


class Suite(NamedTuple):
    name: str
    path: Path
    sha256: str  # of the canonical serialisation: the manifest records it, --resume checks it
    tasks: list[Task]
    file_sha256: str = ""  # of the file's bytes, as manifests recorded it before the canonical form

    def canonical(self) -> bytes:
        return canonical_jsonl(self.tasks)


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
    path = resolve_suite(name_or_path)
    tasks: list[Task] = []
    seen: dict[str, int] = {}
    lines = suite_lines(path)
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
    return Suite(path.stem, path, canonical, tasks, _file_sha256(path))


def _file_sha256(path: Path) -> str:
    """The hash of the file's text as manifests recorded it: its bytes without a leading byte-order mark (the text
    is UTF-8, `suite_lines` has checked it)."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        head = fh.read(len(codecs.BOM_UTF8))
        digest.update(head.removeprefix(codecs.BOM_UTF8))
        while piece := fh.read(1 << 20):
            digest.update(piece)
    return digest.hexdigest()


def suite_lines(path: Path) -> Iterator[tuple[int, str]]:
    """The lines of a suite file and their numbers, read a piece at a time: the lines `read_text(path).splitlines()`
    gives, numbered from 1, with the same one-line errors (not UTF-8: the byte and its offset in the file). A line
    break byte ends no UTF-8 character, so each piece ending in one decodes on its own."""
    number = 0
    try:
        with open(path, "rb") as fh:
            offset = 0
            for piece in fh:
                first = offset == 0
                try:
                    text = piece.decode("utf-8-sig" if first else "utf-8")  # a byte-order mark only at the start
                except UnicodeDecodeError as exc:
                    at = exc.start + (len(codecs.BOM_UTF8) if first and piece.startswith(codecs.BOM_UTF8) else 0)
                    raise not_utf8(path, piece[at], offset + at) from None
                offset += len(piece)
                for line in text.splitlines():  # \r, \x1c, \u2028 ... end a line too, as in the text read whole
                    number += 1
                    yield number, line
    except OSError as exc:
        raise unreadable(path, exc) from None


class StreamedSuite(NamedTuple):
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
    for field in _REQUIRED:
        if field not in row:
            raise InputError(f"{where}: missing field '{field}'")
    if not isinstance(row["id"], str) or not row["id"]:
        raise InputError(f"{where}: field 'id': must be a non-empty string")
    if not isinstance(row["type"], str) or row["type"] not in task_types.TASK_TYPES:
        raise InputError(f"{where}: field 'type': {row['type']!r} is not one of {', '.join(task_types.NAMES)}")
    task_types.of(row["type"]).check_suite_line(where, row)
    try:
        return msgspec.convert(row, Task)
    except msgspec.ValidationError as exc:
        raise InputError(f"{where}: {exc}") from None
