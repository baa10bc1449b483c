"""A task's record as a room's report hooks read it: decoded once into the room's own structs (issue 42).

A document holds each task's record flat, as JSON says it (models.decision_record, analysis/rescore.task_record):
the decision's fields, the task's, the sample's. The hooks that put a record in words (`TaskType.expected_text`,
`extracted_text`, `evidence_lines`, `task_view`) take it as a `Scored`: the task in its room's struct, the decision in
its room's decision struct, so that a room reads `scored.decision.hedged`, never `record.get("hedged")`, and the
checker holds it to its own fields. The callers build it once per record (`task_types.scored`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic

import msgspec

from ocllm.models import Decision, Task

# A task's record in a document (a rescore's, metrics.json's, a report's): a mapping, as the JSON says it.
Record = Mapping[str, Any]

# A room's task struct and its decision struct: covariant, and by default the base structs, which the registry holds
# every room as (scoring/task_type.py says why).
if TYPE_CHECKING:
    # typing's TypeVar takes a default from Python 3.13 on; typing_extensions is no dependency of ours, so the default
    # is the checker's alone (at run time a TypeVar's default and variance matter to nothing here).
    from typing_extensions import TypeVar

    TaskT = TypeVar("TaskT", bound=Task, covariant=True, default=Task)
    DecisionT = TypeVar("DecisionT", bound=Decision, covariant=True, default=Decision)
else:
    from typing import TypeVar

    TaskT = TypeVar("TaskT", bound=Task, covariant=True)
    DecisionT = TypeVar("DecisionT", bound=Decision, covariant=True)

_S = TypeVar("_S", bound=msgspec.Struct)


@dataclass(frozen=True, slots=True)
class Scored(Generic[TaskT, DecisionT]):
    """One record, read once for every hook that draws it."""

    # The record as the document holds it: what every record has (its gold and answer as given, its rule, error and
    # truncation), which a hook reads by key where `decision` is None; never a room's own evidence.
    record: Record
    # The task's fields the record keeps, in its room's struct (`answer` is not kept: the gold as the decision states
    # it is the record's expected_answer); None when they do not decode.
    task: TaskT | None
    # The room's decision, with its evidence. None for a failed request (its record is the base Decision's, rule
    # request_error, which no room's closed sets hold), and for a record that is no decision of the room (`unread`).
    decision: DecisionT | None
    # Why the record is no decision of the room, in msgspec's words: None when it is one (or a failed request).
    unread: str | None = None

    @property
    def failed(self) -> bool:
        """The request failed: nothing was answered, and the record says why in `error`."""
        return self.record.get("error") is not None

    def recorded(self, struct: type[_S]) -> _S | None:
        """The record read as `struct`, where `decision` is None: what a record that is no decision of the room may
        still say in the room's own words, every field of `struct` with a default (another tool's verdicts in an
        input's `previous`: lm-eval's IFEval metrics as instructions followed, scoring/instructions/lm_eval.py).
        None when the record does not decode into it."""
        try:
            return msgspec.convert(dict(self.record), struct)
        except msgspec.ValidationError:
            return None

    @property
    def content(self) -> str:
        """The visible answer the decision was taken from, as the record keeps it ("" when it does not: a run
        directory's metrics.json leaves the raw output to samples.jsonl)."""
        content = self.record.get("raw_content")
        return content if isinstance(content, str) else ""


def scored_as(record: Record, task_struct: type[TaskT], decision_type: type[DecisionT]) -> Scored[TaskT, DecisionT]:
    """A record read as a room's: its task and its decision each decoded into the room's struct, every other key of
    the record left to `record`.

    A record that does not decode into the decision struct is still drawn (a report must show every task): with
    `decision` None, from the fields every record has, the room's own evidence left out and `unread` saying why. That
    is an input's `previous` (the old harness's fields alone), a record of a type this scorer lacks (drawn as multiple
    choice), or a document an older version wrote whose evidence has another shape. A document this version wrote
    always decodes: the reports re-score what they draw."""
    fields = dict(record)
    task = _decoded({**fields, "id": record.get("task_id")}, task_struct)
    if record.get("error") is not None:
        return Scored(record, task, None)
    try:
        return Scored(record, task, msgspec.convert(fields, decision_type))
    except msgspec.ValidationError as exc:
        return Scored(record, task, None, unread=str(exc))


def _decoded(fields: dict[str, Any], struct: type[TaskT]) -> TaskT | None:
    # The record names its type by `task_type`, which the struct's tag field (`type`) is not: a record drawn as
    # another type's (multiple choice, for a type this scorer lacks) still decodes its fields.
    try:
        return msgspec.convert(fields, struct)
    except msgspec.ValidationError:
        return None
