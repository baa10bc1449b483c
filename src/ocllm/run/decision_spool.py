"""Decisions taken while a run goes, kept on disk by (task id, sample)  until the run's final scoring.

The runner decides each answer the moment it arrives (the progress line shows the accuracy so far), and
the final scoring writes metrics.json from the samples on disk. Deciding every answer a second time cost
as much as the rest of the harness together; the final scoring reads back what was decided instead. The
decisions are spooled to an anonymous file rather than kept in memory, so a run's memory does not grow
with the evidence of its decisions: only the offset of each one is held.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from types import TracebackType
from typing import IO, NamedTuple

import msgspec

from ocllm.models import Decision

_ENCODER = msgspec.json.Encoder()
# A decoder per decision type (a task type may add evidence of its own: scoring/task_type.py).
_DECODERS: dict[type[Decision], msgspec.json.Decoder[Decision]] = {}


class EncodedDecision(NamedTuple):
    """A decision as the spool keeps it: its type, its JSON, and whether it was correct (for the progress line).
    The decision workers return it encoded (run/decision_pool.py): JSON encodes in microseconds where pickling the
    Struct and its evidence cost ten times that, and the run's event loop then never decodes it at all."""

    kind: type[Decision]
    data: bytes
    correct: bool | None


def encode(decision: Decision) -> EncodedDecision:
    return EncodedDecision(type(decision), _ENCODER.encode(decision), decision.correct)


def decode(encoded: EncodedDecision) -> Decision:
    kind = encoded.kind
    decoder = _DECODERS.get(kind) or _DECODERS.setdefault(kind, msgspec.json.Decoder(kind))
    return decoder.decode(encoded.data)


class DecisionSpool:
    """`add` a sample's decision as it is taken; `get` it back by (task id, sample index) (None when this run did
    not decide that sample: it ran in an earlier invocation, and is decided afresh)."""

    def __init__(self, folder: Path) -> None:
        self._folder = folder
        self._file: IO[bytes] | None = None
        self._where: dict[tuple[str, int], tuple[int, int, type[Decision]]] = {}
        self._end = 0
        # Whether the file's position is its end: a seek flushes the file's buffer (a write to the disk per
        # decision), so adds in a row (the whole run) append without one, and only a read in between moves it.
        self._at_end = True

    def add(self, key: tuple[str, int], decision: Decision) -> None:
        self.add_encoded(key, encode(decision))

    def add_encoded(self, key: tuple[str, int], encoded: EncodedDecision) -> None:
        """`add`, for a decision a worker has encoded already."""
        if self._file is None:
            # Opened at the first decision, when the run's folder exists: the same disk as samples.jsonl
            # (not a /tmp that may be memory), and an anonymous file, gone when closed whatever happens.
            self._file = tempfile.TemporaryFile(dir=self._folder, prefix=".decisions-")  # noqa: SIM115 (closed by close())
        if not self._at_end:
            self._file.seek(self._end)
            self._at_end = True
        self._file.write(encoded.data)
        self._where[key] = (self._end, len(encoded.data), encoded.kind)
        self._end += len(encoded.data)

    def get(self, key: tuple[str, int]) -> Decision | None:
        span = self._where.get(key)
        if span is None or self._file is None:
            return None
        start, length, kind = span
        self._file.seek(start)
        self._at_end = False
        return decode(EncodedDecision(kind, self._file.read(length), None))

    def close(self) -> None:
        if self._file is not None:
            self._file.close()

    def __enter__(self) -> DecisionSpool:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, value: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.close()
