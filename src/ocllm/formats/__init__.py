"""Readers of saved runs: each turns one kind of file into Tasks, Samples and the file's own decisions.

A registry, so that another tool's format is one more module with a `recognise(path)` and a reader, and
every command that reads saved runs (rescore, compare, report, matrix-report) reads it. Readers are asked
in order; the first that recognises the path reads it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import NamedTuple

from ocllm.errors import InputError
from ocllm.files.file_kind import refuse_lfs_pointer
from ocllm.formats import metrics_file, run_directory
from ocllm.formats.not_text import screen
from ocllm.formats.records import RunMeta, SavedRecord, SavedRun

__all__ = ["READERS", "Reader", "RunMeta", "SavedRecord", "SavedRun", "load_saved_run", "stream_saved_run"]


class Reader(NamedTuple):
    name: str
    recognise: Callable[[Path], bool]
    read: Callable[[Path], SavedRun]
    # The run's facts, and its records one at a time (for rescoring that holds counters, not records).
    stream: Callable[[Path], tuple[RunMeta, Iterator[SavedRecord]]]


READERS: list[Reader] = [
    Reader("ocllm run directory", run_directory.recognise, run_directory.load_run_dir, run_directory.stream_run_dir),
    Reader(
        "metrics file (ocllm or the old harness)",
        metrics_file.recognise,
        metrics_file.load_metrics_file,
        metrics_file.stream_metrics_file,
    ),
]


def load_saved_run(path: Path) -> SavedRun:
    """A saved run of any known kind: a run directory, or a metrics file."""
    saved = _reader_for(path).read(path)
    return saved._replace(records=list(_screened(saved.meta, path, saved.records)))


def stream_saved_run(path: Path) -> tuple[RunMeta, Iterator[SavedRecord]]:
    """The same, its records read one at a time where the format allows it."""
    meta, records = _reader_for(path).stream(path)
    return meta, _screened(meta, path, records)


def _screened(meta: RunMeta, path: Path, records: Iterable[SavedRecord]) -> Iterator[SavedRecord]:
    """The records, each through the rule for what is not text (formats/not_text.py): a record whose task is not
    text joins the run's unscorable ones (complete once the records are read through)."""
    for record in records:
        kept = screen(record, path)
        if isinstance(kept, SavedRecord):
            yield kept
        else:
            meta.unscorable.append(kept)


def _reader_for(path: Path) -> Reader:
    refuse_lfs_pointer(path)  # a results file kept in Git LFS and never pulled: said as what it is
    for reader in READERS:
        if reader.recognise(path):
            return reader
    if not path.exists():
        raise InputError(f"{path}: no such file")
    # A file of another extension is read as a metrics file: its content says whether it is one.
    return READERS[-1]
