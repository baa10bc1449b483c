"""What an output may replace: never one of the files it is made from, whatever path reaches it, and an existing
file only when it is an ocllm output of the same kind (recognised by its first bytes), unless `--force`.

Every command with -o/--out asks here before it writes anything: import, rescore (and its --report), report,
compare, matrix-report and merge. Inputs are compared by the file itself (device and inode, so `data/../x`,
`./x`, a symlink and a hard link are all the same file); a folder given as an input stands for the files in it,
a run directory for its own files (its report/ folder is an output, not an input)."""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import NamedTuple

import msgspec

from ocllm.errors import InputError
from ocllm.files.atomic import MANIFEST, RUN_FILES, SAMPLES

# Enough of a file to see what wrote it: a document's format line, a page's <head>, a suite's first line.
_HEAD_BYTES = 64 * 1024
_FIRST_LINE_BYTES = 1 << 20  # a suite line may hold a long question


class Kind(NamedTuple):
    """One kind of output: the command that writes it (for the message) and how its content is recognised."""

    writer: str  # "ocllm import"
    recognise: Callable[[Path], bool]


def _head(path: Path, size: int = _HEAD_BYTES) -> bytes:
    try:
        with open(path, "rb") as fh:
            return fh.read(size)
    except OSError:
        return b""


def _json_format(prefix: str) -> Callable[[Path], bool]:
    """A pretty JSON document of ours: a top-level `"format": "ocllm-..."` line (two spaces in; a JSON string
    holds no raw newline, so such a line is a top-level key)."""
    pattern = re.compile(rb'^  "format": "' + re.escape(prefix.encode()) + rb'/\d+",?$', re.MULTILINE)

    def recognise(path: Path) -> bool:
        head = _head(path)
        return head.startswith(b"{") and pattern.search(head) is not None

    return recognise


def _markdown(title: str) -> Callable[[Path], bool]:
    return lambda path: _head(path, 4096).startswith(f"# {title}".encode())


def _html(title: str) -> Callable[[Path], bool]:
    def recognise(path: Path) -> bool:
        head = _head(path)
        return b'<meta name="generator" content="ocllm ' in head and f"<title>{title}".encode() in head

    return recognise


def _suite(path: Path) -> bool:
    """A suite this project wrote (import, a run's suite.jsonl): its first line in the one canonical spelling,
    compact with sorted keys, with the fields that spelling always carries. Hand-written and other tools'
    JSONL hardly ever is."""
    try:
        with open(path, "rb") as fh:
            line = fh.readline(_FIRST_LINE_BYTES)
        fields = msgspec.json.decode(line)
    except (OSError, msgspec.DecodeError):
        return False
    if not isinstance(fields, dict) or not {"id", "type", "question", "category"} <= fields.keys():
        return False
    return msgspec.json.encode(fields, order="sorted") + b"\n" == line


SUITE = Kind("ocllm import", _suite)
METRICS = Kind("ocllm rescore", _json_format("ocllm-metrics"))
AUDIT = Kind("ocllm rescore --report", _markdown("Rescoring audit: "))
REPORT_FILES = {
    "report.md": Kind("ocllm report", _markdown("Run report: ")),
    "report.html": Kind("ocllm report", _html("Run report: ")),
}
COMPARISON_FILES = {
    "comparison.json": Kind("ocllm compare", _json_format("ocllm-comparison")),
    "comparison.md": Kind("ocllm compare", _markdown("Comparison: ")),
    "comparison.html": Kind("ocllm compare", _html("Comparison: ")),
}
MATRIX_FILES = {
    "matrix.json": Kind("ocllm matrix-report", _json_format("ocllm-matrix")),
    "matrix.md": Kind("ocllm matrix-report", _markdown("Matrix: ")),
    "matrix.html": Kind("ocllm matrix-report", _html("Matrix: ")),
}


def is_run_directory(path: Path) -> bool:
    return (path / SAMPLES).is_file() or (path / MANIFEST).is_file()


def input_files(inputs: Iterable[Path]) -> list[Path]:
    """The files the inputs stand for: a file itself (and, inside a run directory, that run's files, which its
    reader reads with it); a run directory its files; any other folder every file in it."""
    files: list[Path] = []
    for path in inputs:
        if path.is_dir():
            if is_run_directory(path):
                files += [path / name for name in RUN_FILES]
            else:
                files += [p for p in path.rglob("*") if p.is_file()]
        else:
            files.append(path)
            if is_run_directory(path.parent):
                files += [path.parent / name for name in RUN_FILES]
    return files


def _identity(path: Path) -> tuple[int, int] | None:
    try:
        # Symlinks followed, and `..` after a folder that does not exist yet (which the writer would create).
        st = os.stat(os.path.realpath(path))
    except (OSError, ValueError):
        return None
    return st.st_dev, st.st_ino


class Inputs:
    """The files an output must never replace, by identity."""

    def __init__(self, inputs: Iterable[Path]) -> None:
        self._by_identity: dict[tuple[int, int], Path] = {}
        for path in input_files(inputs):
            identity = _identity(path)
            if identity is not None:
                self._by_identity.setdefault(identity, path)

    def find(self, path: Path) -> Path | None:
        identity = _identity(path)
        return None if identity is None else self._by_identity.get(identity)


def check_output(
    path: Path, kind: Kind, inputs: Iterable[Path] | Inputs, *, force: bool = False, flag: str = "-o"
) -> None:
    """Refuse, in one line, to write `path` over an input (even with `force`), or over an existing file that is
    not an output of `kind` (unless `force`)."""
    known = inputs if isinstance(inputs, Inputs) else Inputs(inputs)
    _check(path, kind, known, force=force, named=f"{flag} {path}")


def check_folder_output(
    folder: Path, files: Mapping[str, Kind], inputs: Iterable[Path], *, force: bool = False, flag: str = "-o"
) -> None:
    """The same for each file an output folder receives (report, compare, matrix-report)."""
    known = Inputs(inputs)
    for name, kind in files.items():
        _check(folder / name, kind, known, force=force, named=f"{flag} {folder}: {folder / name}")


def _check(path: Path, kind: Kind, inputs: Inputs, *, force: bool, named: str) -> None:
    source = inputs.find(path)
    if source is not None:
        same = "" if str(source) == str(path) else f" ({source})"
        raise InputError(f"{named}: refusing to write the output over its own input{same}, even with --force")
    if force or not path.is_file():
        return  # (a folder or a device in its place is refused by the atomic writer, in its own words)
    if path.name in RUN_FILES and is_run_directory(path.parent):
        # A run's suite copy or metrics look like our own outputs, but belong with the run's samples.
        raise InputError(f"{named} is part of the run directory {path.parent}; use --force to replace it")
    if kind.recognise(path):
        return
    raise InputError(f"{named} exists and was not written by {kind.writer}; use --force to replace it")


def check_merge_output(out_dir: Path, shards: Iterable[Path], *, force: bool = False, flag: str = "-o") -> None:
    """A merged run goes to a new or empty folder, or replaces a merged run (the same kind: made again from the
    shards, which stay); an ordinary run there is replaced only with `force`, since its samples may be the only
    copy of their work. Never into one of the shards, nor over any file of theirs."""
    shards = list(shards)
    never = "refusing to write over it, even with --force"
    target = _identity(out_dir)
    for shard in shards:
        if target is not None and target == _identity(shard):
            same = "" if str(shard) == str(out_dir) else f" ({shard})"
            raise InputError(f"{flag} {out_dir}: is one of the shards it merges{same}; {never}")
    known = Inputs(shards)
    for name in RUN_FILES:
        source = known.find(out_dir / name)
        if source is not None:
            raise InputError(f"{flag} {out_dir}: its {name} is {source}, of one of the shards it merges; {never}")
    if force or not (out_dir / SAMPLES).is_file() or not (out_dir / SAMPLES).stat().st_size:
        return
    if not _is_merge(out_dir / MANIFEST):
        raise InputError(f"{flag} {out_dir}: holds a run that is not a merge; use --force to replace it")


def _is_merge(manifest: Path) -> bool:
    try:
        recorded = msgspec.json.decode(_head(manifest, 1 << 24))
    except msgspec.DecodeError:
        return False
    return isinstance(recorded, dict) and bool(recorded.get("merged_from"))
