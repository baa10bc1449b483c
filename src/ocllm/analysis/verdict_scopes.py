"""The input's own verdicts against this scorer's, per task type and per the other tool's own task within a type.

A folder of lm-eval tasks mixes letters (arc), numbers (gsm8k, minerva_math500) and instructions (ifeval). One
figure over all of them weighs three scorers' rules by how many docs each task happened to have, and its test says
nothing about any one of them: a pooled "p = 0.003" may rest on one task alone. So each type is paired on its own,
and each of the tool's tasks within it (gsm8k and minerva_math500 are both math, and their golds, prompts and
extractions differ). The pooled figures are kept, for the record, and named as pooled wherever they are drawn.

Kept as the records arrive, seven bytes a paired sample (the two verdicts, whether it starts a task, its scope), so
that a rescore of any size streams; the figures are computed once, at the end."""

from __future__ import annotations

from array import array
from collections.abc import Callable, Iterable

from ocllm.documents import InputVerdicts, Paired, ScopeVerdicts, TypeVerdicts
from ocllm.formats.records import SavedRecord
from ocllm.models import Decision
from ocllm.verdict_words import SCORER_LABEL

Scope = tuple[str, str | None]  # (task type, the tool's task or None)
# Which of the other tool's own tasks a task id is of (lm-eval's `gsm8k/12` -> `gsm8k`); None: the tool names none.
ToolTask = Callable[[str], str | None]


class VerdictScopes:
    """Both verdicts of every sample, with the scope it belongs to, gathered one sample at a time."""

    def __init__(self, tool_task: ToolTask | None = None) -> None:
        self.tool_task = tool_task
        self.old = bytearray()  # the input's verdict, one byte a paired sample
        self.new = bytearray()  # this scorer's
        # 1 where a sample starts another task than the one before: a task's samples come together (every reader
        # yields them so) and are paired as one task (paired.paired_by_task).
        self.starts_task = bytearray()
        self.scope_of = array("I")  # index into self.scopes
        self.scopes: list[Scope] = []
        self._index: dict[Scope, int] = {}
        self.unpaired: dict[Scope, int] = {}
        self._last_task: str | None = None
        self._figures: dict[str, InputVerdicts | None] = {}  # computed once (a bootstrap per scope), per label

    def add(self, task_type: str, tool_task: str | None, task_id: str, old: bool | None, new: bool | None) -> None:
        """One sample: `old` the input's verdict (None: it gave none), `new` this scorer's (None: the request
        failed). Paired only where both are known."""
        scope = (task_type, tool_task)
        if old is None or new is None:
            self.unpaired[scope] = self.unpaired.get(scope, 0) + 1
            return
        if scope not in self._index:
            self._index[scope] = len(self.scopes)
            self.scopes.append(scope)
        self.old.append(old)
        self.new.append(new)
        self.starts_task.append(task_id != self._last_task)
        self._last_task = task_id
        self.scope_of.append(self._index[scope])

    def add_decided(self, record: SavedRecord, d: Decision) -> None:
        """A record's own verdict (None: none, or the whole task's, as lm-eval's filter over repeats gives) and
        this scorer's decision of it."""
        tool_task = self.tool_task(d.task_id) if self.tool_task is not None else None
        self.add(d.task_type, tool_task, d.task_id, record.previous_verdict, d.correct)

    @property
    def unpaired_samples(self) -> int:
        return sum(self.unpaired.values())

    def figures(self, label: str) -> InputVerdicts | None:
        """The input's verdicts (side A, called `label`) against this scorer's (side B): pooled, per type, per the
        tool's task within a type. None when the input recorded no verdict for any sample this scorer decided."""
        if label not in self._figures:
            self._figures[label] = self._compute(label) if self.old else None
        return self._figures[label]

    def _compute(self, label: str) -> InputVerdicts:
        # Imported here: SciPy (with paired.py) costs 70 MB of memory, and a rescore streams its tasks in far less.
        import numpy as np

        from ocllm.analysis.paired import paired_by_task

        # Views of the bytes gathered, and index arrays: a Python object per sample would grow with the input.
        tasks = np.cumsum(np.frombuffer(self.starts_task, dtype=np.uint8), dtype=np.int64)  # a number per task
        old = np.frombuffer(self.old, dtype=np.uint8).astype(bool)
        new = np.frombuffer(self.new, dtype=np.uint8).astype(bool)
        scope_of = np.frombuffer(self.scope_of, dtype=np.uint32)
        in_scope = {scope: np.flatnonzero(scope_of == k) for k, scope in enumerate(self.scopes)}
        none = np.zeros(0, dtype=np.intp)

        def paired(rows: np.ndarray) -> Paired | None:
            if not len(rows):
                return None
            return paired_by_task(tasks[rows], old[rows], new[rows], label, SCORER_LABEL, sides="scoring")

        types = sorted({t for t, _ in [*in_scope, *self.unpaired]})
        by_type: dict[str, TypeVerdicts] = {}
        for name in types:
            scopes = sorted({s for s in [*in_scope, *self.unpaired] if s[0] == name}, key=_scope_order)
            rows = np.sort(np.concatenate([in_scope.get(s, none) for s in scopes]))
            by_task = {
                task: ScopeVerdicts(paired=paired(in_scope.get(scope, none)), unpaired=self.unpaired.get(scope, 0))
                for scope in scopes
                if (task := scope[1]) is not None
            }
            by_type[name] = TypeVerdicts(
                paired=paired(rows), unpaired=sum(self.unpaired.get(s, 0) for s in scopes), by_task=by_task
            )
        every = np.arange(len(self.old))
        return InputVerdicts(label=label, by_type=by_type, pooled=paired(every), unpaired=self.unpaired_samples)


def _scope_order(scope: Scope) -> tuple[bool, str]:
    return (scope[1] is not None, scope[1] or "")


def input_verdicts(
    records: Iterable[SavedRecord], decisions: Iterable[Decision], label: str, tool_task: ToolTask | None = None
) -> InputVerdicts | None:
    """The figures of a run held in memory (a report's): as the audit of `rescore --from` gives them."""
    scopes = VerdictScopes(tool_task)
    for record, decision in zip(records, decisions, strict=True):
        scopes.add_decided(record, decision)
    return scopes.figures(label)
