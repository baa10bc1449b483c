"""turns.jsonl: each request of a conversation, appended as it finishes (run/conversation.py).

An episode's sample goes to samples.jsonl when the episode ends; an episode stopped in its middle (Ctrl-C, SIGKILL,
a lost node) leaves no sample, and --resume starts it again. What it had done is kept here, as evidence: one line a
turn, `{"task_id", "sample", "attempt", "turn"}`, `attempt` counting the episode's starts from 0. Lines are never
rewritten; a torn last line (the process died mid-write) is cut off when the run is resumed, as samples.jsonl's is.
The finished episodes' turns are here too (their samples hold them whole): the log is written before the episode is
known to finish.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import BinaryIO

import msgspec

from ocllm.files.atomic import TURNS
from ocllm.models import Turn

__all__ = ["TURNS", "TurnLogFile", "started_before"]


class _Line(msgspec.Struct, kw_only=True):
    task_id: str
    sample: int
    attempt: int
    turn: Turn


_ENCODER = msgspec.json.Encoder()
_DECODER = msgspec.json.Decoder(_Line)


class TurnLogFile:
    """The run's turns.jsonl, open for appending while the run goes (opened at the first turn: a run without
    conversations writes none)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fh: BinaryIO | None = None

    def append(self, task_id: str, sample: int, attempt: int, turn: Turn) -> None:
        if self._fh is None:
            self._fh = open(self.path, "ab")  # noqa: SIM115 - held open for the run, closed in close()
        self._fh.write(_ENCODER.encode(_Line(task_id=task_id, sample=sample, attempt=attempt, turn=turn)) + b"\n")
        self._fh.flush()

    def close(self) -> None:
        fh, self._fh = self._fh, None
        if fh is not None:
            fh.flush()
            os.fsync(fh.fileno())
            fh.close()


def started_before(path: Path, *, repair: bool = False) -> dict[tuple[str, int], int]:
    """How many times each episode (task id, sample) was started, by the turns the log holds of it. With `repair`, a
    torn last line is cut from the file so that appends go on cleanly."""
    if not path.is_file():
        return {}
    data = path.read_bytes()
    started: dict[tuple[str, int], int] = {}
    good = 0
    for line in data.split(b"\n"):
        if not line.strip():
            good += len(line) + 1
            continue
        try:
            entry = _DECODER.decode(line)
        except (msgspec.DecodeError, msgspec.ValidationError):
            break  # a torn write: nothing after it was written whole
        key = (entry.task_id, entry.sample)
        started[key] = max(started.get(key, 0), entry.attempt + 1)
        good += len(line) + 1
    if repair and good < len(data):
        with open(path, "r+b") as fh:
            fh.truncate(good)
    return started
