"""Files on disk: atomic writes, so that a crash never leaves a half-written output behind."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO, NamedTuple

import msgspec

from ocllm.errors import OcllmError
from ocllm.files.temporaries import remove_stale_temporaries, temporary_name
from ocllm.models import Sample


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write to a temporary name beside `path`, flush it to disk, then rename it into place."""
    if path.exists() and not path.is_file():
        # Renaming over a directory fails, and over a device (as root) would replace it.
        raise OcllmError(f"{path}: exists and is not a regular file; refusing to replace it")
    remove_stale_temporaries(path)  # what a killed ocllm left of this output
    tmp = temporary_name(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(tmp, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except OSError as exc:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise OcllmError(f"{path}: cannot write ({exc.strerror or exc})") from None
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise


class PieceWriter:
    """The file `atomic_writer` hands out: writes that fail (a full disk) are the user's one-line error."""

    def __init__(self, fh: BinaryIO, path: Path) -> None:
        self._fh, self._path = fh, path

    def write(self, data: bytes) -> None:
        try:
            self._fh.write(data)
        except OSError as exc:
            raise OcllmError(f"{self._path}: cannot write ({exc.strerror or exc})") from None


@contextlib.contextmanager
def atomic_writer(path: Path) -> Iterator[PieceWriter]:
    """A file written piece by piece under a temporary name beside `path`, renamed into place only when
    the block ends without an error: a reader never sees half of it, and a failure leaves nothing."""
    if path.exists() and not path.is_file():
        raise OcllmError(f"{path}: exists and is not a regular file; refusing to replace it")
    remove_stale_temporaries(path)
    tmp = temporary_name(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fh = open(tmp, "wb")  # noqa: SIM115 - closed below, whatever the block does
    except OSError as exc:
        raise OcllmError(f"{path}: cannot write ({exc.strerror or exc})") from None
    try:
        with fh:
            yield PieceWriter(fh, path)
            # Our own steps say what failed in one line; an error of the block itself passes through as it is.
            try:
                fh.flush()
                os.fsync(fh.fileno())
            except OSError as exc:
                raise OcllmError(f"{path}: cannot write ({exc.strerror or exc})") from None
        try:
            os.replace(tmp, path)
        except OSError as exc:
            raise OcllmError(f"{path}: cannot write ({exc.strerror or exc})") from None
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise


def atomic_write_text(path: Path, text: str) -> None:
    atomic_write_bytes(path, text.encode("utf-8"))


# --- The run directory -------------------------------------------------------------------------
# manifest.json  what ran: versions, lane settings (no secrets), suite name and hash, server models, times
# suite.jsonl    the suite's tasks exactly as run, so the directory can be re-scored on its own
# samples.jsonl  one line per finished task, appended and flushed as each finishes; never rewritten
#                except by --retry-errors, which drops failed lines (atomically) before re-running them
# metrics.json   derived: the decisions and summary, recomputed whenever the run finishes
# turns.jsonl    a conversation's requests, one line each as it finishes (run/turn_log.py): what an episode
#                stopped in its middle had done; absent from a run without conversations
MANIFEST = "manifest.json"
SUITE_COPY = "suite.jsonl"
SAMPLES = "samples.jsonl"
METRICS = "metrics.json"
TURNS = "turns.jsonl"
RUN_FILES = (MANIFEST, SUITE_COPY, SAMPLES, METRICS, TURNS)


def read_samples(path: Path, *, repair: bool = False) -> list[Sample]:
    """Every sample line. A torn last line (the process died mid-write) is dropped, and with
    `repair` cut from the file so appends continue cleanly; a bad line elsewhere is an error."""
    if not path.exists():
        return []
    data = path.read_bytes()
    lines = data.split(b"\n")
    samples = []
    good_bytes = 0
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            good_bytes += len(line) + 1
            continue
        try:
            samples.append(_SAMPLE_DECODER.decode(line))
        except (msgspec.DecodeError, msgspec.ValidationError):
            if number == len(lines):  # the last line, with no newline after it: a torn write
                break
            raise OcllmError(f"{path}:{number}: not a valid sample line") from None
        good_bytes += len(line) + 1
    if repair and good_bytes < len(data):
        with open(path, "r+b") as fh:
            fh.truncate(min(good_bytes, len(data)))
    elif repair and data and not data.endswith(b"\n"):
        # The last line is whole but lost its newline: add it, or the next append would join the two.
        with open(path, "ab") as fh:
            fh.write(b"\n")
    return samples


class Span(NamedTuple):
    """Where one line a SampleWriter appended stands in its file: what an answer waiting for its decision keeps in
    memory instead of the answer itself (run/decision_pool.LiveDecisions)."""

    offset: int
    length: int


class SampleWriter:
    """Appends one JSON line per finished task and flushes it at once, so a crash loses nothing
    that finished. (Flushed to the OS, which survives the process being killed; fsync at close.)"""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fh = open(path, "ab")  # noqa: SIM115 - held open for the whole run, closed in close()
        self._end = self._fh.seek(0, os.SEEK_END)

    def append(self, sample: Sample) -> Span:
        line = _ENCODER.encode(sample) + b"\n"
        self._fh.write(line)
        self._fh.flush()
        span = Span(self._end, len(line))
        self._end += len(line)
        return span

    def read(self, span: Span) -> Sample:
        """The sample appended at `span`, read back from the file (it was flushed when appended)."""
        with open(self.path, "rb") as fh:
            fh.seek(span.offset)
            return _SAMPLE_DECODER.decode(fh.read(span.length))

    def close(self) -> None:
        self._fh.flush()
        os.fsync(self._fh.fileno())
        self._fh.close()


def write_samples(path: Path, samples: list[Sample]) -> None:
    atomic_write_bytes(path, b"".join(_ENCODER.encode(s) + b"\n" for s in samples))


def pretty_json(document: object) -> bytes:
    """Every JSON file this project writes: indented by two, one trailing newline."""
    return msgspec.json.format(_ENCODER.encode(document), indent=2) + b"\n"


def write_json(path: Path, document: object) -> None:
    atomic_write_bytes(path, pretty_json(document))


_ENCODER = msgspec.json.Encoder()
_SAMPLE_DECODER = msgspec.json.Decoder(Sample)
