"""What a room registers for other tools' files (`rescore --from`, and old-harness metrics files): how a record of
another tool becomes a task of its type.

The split (a decision of issue 31): reading a tool's file is `ocllm.formats`' (lm-eval's lines and filters, an
inspect_ai log's members and epochs, an MMLU-Pro result list, the response and the sample); which records are the
room's, and what their fields mean for its task (an MCQ doc's options and gold letter, a math doc's gold in its last
box, an IFEval doc's instructions) and for the tool's extracted answer, is the room's. Scoring never imports the
formats, so what a room registers is made of what is defined here:

- `LmEvalMapping`: which lm-eval docs the room reads, and a doc (`LmEvalDoc`) -> its Task and `previous`. The reader
  asks the rooms in four rounds, so that no doc is read two ways: a room that claims the doc by its fields whatever
  its task's name (IFEval's `instruction_id_list`); a room that claims the task by its name (`gsm8k*`, `ifeval*`);
  the room that reads any doc it finds its fields in (`reads_any`: MCQ, options in the doc or the prompt); and only
  when that room found nothing, a room that takes a doc of another name by its fields (a GSM8K `answer` with `####`).
- `HarnessMapping`, by the tool's name ("mmlu-pro", "inspect"): a file format whose records are all the room's
  tasks; the record (`HarnessRecord`, with the fields every record of the tool has read by the reader) -> the Task,
  and the tool's extracted answer as the room's answer.
- `TaskType.claims_untyped`: an old-harness record written before records named their `task_type` is claimed by
  the first room (in the registry's order) whose rule holds (MCQ: a record with `options`).

`NotScorable` is raised by a room for a record it cannot make a task of; the reader reports it as unscorable and
reads on. `verdict_of` and `first_item` are the small readings of tools' values every mapping shares.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

from ocllm.errors import InputError
from ocllm.models import Task


class NotScorable(InputError):
    """A record this scorer cannot score, though the file is of the right kind: the reader reports it
    (`unscorable`) and goes on with the next. Raised to a caller that does not, it is a one-line error."""

    def __init__(self, task_id: str, where: str, reason: str) -> None:
        super().__init__(f"{where}: {reason}")
        self.task_id = task_id
        self.where = where
        self.reason = reason


def verdict_of(value: Any) -> bool | None:
    """A tool's per-task score as correct (True), incorrect (False), or neither: 1 and 0 (int, float or bool);
    a fractional score is not a verdict on one answer."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float):
        if value == 1:
            return True
        if value == 0:
            return False
    return None


def first_item(value: Any) -> Any:
    """The first element, through lists of lists (lm-eval's `resps` is [[text]], `filtered_resps` [text] or
    [[text]]); None for an empty list."""
    while isinstance(value, list):
        if not value:
            return None
        value = value[0]
    return value


def metric_verdicts(row: Mapping[str, Any], preferred: tuple[str, ...]) -> dict[str, Any]:
    """An lm-eval line's per-doc metrics as verdicts: those it lists (`metrics`, else `preferred`) that hold a number,
    each as `verdict_of` reads it; the deciding metric is the first of `preferred` found, else the first found.
    Returns {"metric", "metric_value", "correct", "verdicts"}, as `previous` records them."""
    listed = row.get("metrics")
    names = [m for m in listed if isinstance(m, str)] if isinstance(listed, list) else list(preferred)
    values = {name: row[name] for name in names if isinstance(row.get(name), int | float)}  # bool included
    verdicts = {name: verdict_of(value) for name, value in values.items()}
    metric = next((m for m in preferred if m in values), next(iter(values), None))
    return {
        "metric": metric,
        "metric_value": values.get(metric) if metric else None,
        "correct": verdicts.get(metric) if metric else None,
        "verdicts": verdicts,
    }


@dataclass(frozen=True)
class LmEvalDoc:
    """One sample of an lm-eval doc, as the reader hands it to a room. (No NamedTuple: its `index` would hide the
    tuple's method.)"""

    where: str  # the file, line and doc (and response), for messages
    task_id: str  # `<task>/<doc_id>`
    task: str  # the lm-eval task the file is of (`gsm8k_cot`, `mmlu_pro_math`)
    lines: dict[str, tuple[int, dict[str, Any]]]  # the doc's line of each filter: (line number, the line)
    chosen: str  # the filter whose verdict is `previous`
    responses: list[str]  # the responses of the doc's request (several with lm-eval's `repeats`)
    index: int  # which of them this sample is
    prompt: str | None  # the prompt sent (the last user message of a chat)

    @property
    def row(self) -> dict[str, Any]:
        """The chosen filter's line."""
        return self.lines[self.chosen][1]

    @property
    def doc(self) -> dict[str, Any]:
        """The doc as the task saw it ({} where the line holds none)."""
        doc = self.row.get("doc")
        return doc if isinstance(doc, dict) else {}


def _claims_nothing(_value: Any) -> bool:
    return False


@dataclass(frozen=True, kw_only=True)
class LmEvalMapping:
    """Which lm-eval docs a room reads (the four rounds above), and one doc's sample -> its Task and `previous` (the
    tool's verdicts, all of them kept), or NotScorable."""

    read: Callable[[LmEvalDoc], tuple[Task, dict[str, Any]]]
    claims_doc: Callable[[dict[str, Any]], bool] = _claims_nothing  # round 1: by the doc's fields, any task name
    claims_task: Callable[[str], bool] = _claims_nothing  # round 2: by the lm-eval task's name
    reads_any: bool = False  # round 3: tried on a doc no room claimed; its NotScorable is the doc's
    may_claim_doc: Callable[[dict[str, Any]], bool] = _claims_nothing  # round 4: when round 3 found nothing


class HarnessRecord(NamedTuple):
    """A record of another tool's file, as the reader hands it to a room: what every record of the tool has, read,
    and the record itself for the room's own fields."""

    where: str
    task_id: str
    fields: Mapping[str, Any]  # the record as the tool wrote it (an MMLU-Pro result, an inspect_ai sample)
    question: str
    category: str
    subset: str | None = None
    prompt: str | None = None
    # The tool's gold where its format has one field for it whatever the task (inspect_ai's `target`, the one of a
    # list); None: the room reads its gold from `fields` (MMLU-Pro's `answer` or `answer_index`).
    gold: Any = None


@dataclass(frozen=True, kw_only=True)
class HarnessMapping:
    """How a room reads a tool's file format whose records are its tasks."""

    task: Callable[[HarnessRecord], Task]  # the record -> the room's Task, or NotScorable
    extracted: Callable[[Any], str | None]  # the tool's extracted answer as the room's answer; None: none it can tell
    # The fields that make a record one of the room's in the tool's files, beside the tool's own (MMLU-Pro results:
    # `options`); what the reader recognises such a file by.
    marks: tuple[str, ...] = ()
