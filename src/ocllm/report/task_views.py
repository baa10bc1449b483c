"""Each task of a run as its page draws it: with its whole evidence (facts, prompt, the raw output with the
statements marked in it, the type's own blocks from its room), or as one row of the compact table; and which
tasks of a large run are drawn in full.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ocllm.models import token_counts
from ocllm.report.wording import (
    count,
    expected_text,
    extracted_text,
    seconds,
    task_evidence,
    verdict_of,
)
from ocllm.scoring import task_types
from ocllm.visible_text import visible


@dataclass(frozen=True)
class Segment:
    """A stretch of raw model text; `index` is the statement (of the task view's list) it belongs to, if any."""

    text: str
    index: int | None = None
    deciding: bool = False


def segments(text: str, spans: Sequence[tuple[int, int, int]], decided: int | None) -> list[Segment]:
    """Split `text` into plain stretches and the statements found in it (start, end, candidate index).
    Spans that fall outside the text or overlap an earlier one are left unmarked rather than trusted."""
    out: list[Segment] = []
    pos = 0
    for start, end, index in sorted(spans):
        if start < pos or end <= start or end > len(text):
            continue
        if start > pos:
            out.append(Segment(text[pos:start]))
        out.append(Segment(text[start:end], index, index == decided))
        pos = end
    if pos < len(text):
        out.append(Segment(text[pos:]))
    return out


def _usage_facts(usage: Mapping[str, Any] | None) -> list[tuple[str, str]]:
    if not isinstance(usage, Mapping):
        return []
    facts = []
    for key in ("prompt_tokens", "completion_tokens"):
        if isinstance(usage.get(key), int):
            facts.append((key.replace("_", " "), count(usage[key])))
    _, reasoning = token_counts(dict(usage))
    if reasoning is not None:
        facts.append(("reasoning tokens", count(reasoning)))
    return facts


def changed(task: Mapping[str, Any]) -> bool:
    previous = task.get("previous") or {}
    return isinstance(previous.get("correct"), bool) and previous["correct"] != task.get("correct")


def _text_scored_by(task: Mapping[str, Any]) -> str | None:
    name = task.get("task_type")
    known = task_types.TASK_TYPES.get(name) if isinstance(name, str) else None
    return known.label if known is not None and not known.extracts_answer else None


def task_view(task: Mapping[str, Any], tool: str | None = None, sampled: bool = False) -> dict[str, Any]:
    """Everything the per-task view shows, as plain values (the template escapes them). `tool`: the other tool
    whose verdict `previous` holds (rescore --from), else the input's; `sampled`: the run asked each task several
    times, and the record is one sample (its index is shown)."""
    own = task_evidence(task)  # the type's own blocks, drawn by its room (scoring/task_view.py)
    decided = next((i for i, st in enumerate(own.statements) if st.deciding), None)
    content = task.get("raw_content") or ""
    reasoning = task.get("raw_reasoning") or ""

    def spans(field_name: str) -> list[tuple[int, int, int]]:
        return [
            (st.start, st.end, i)
            for i, st in enumerate(own.statements)
            if st.raw_field == field_name and st.start is not None and st.end is not None
        ]

    verdict = verdict_of(task)
    expected, extracted = expected_text(task), extracted_text(task)
    facts: list[tuple[str, str]] = [
        ("expected", expected),
        ("extracted", extracted),
        ("found in", str(task.get("extraction_source") or "—")),
        ("method", str(task.get("extraction_method") or "—")),
        ("ambiguity", str(task.get("ambiguity") or "—")),
        ("finish reason", str(task.get("finish_reason") or "—")),
    ]
    facts += own.facts
    facts += _usage_facts(task.get("usage"))
    if isinstance(task.get("latency_s"), int | float):
        facts.append(("latency", seconds(float(task["latency_s"]))))
    previous = task.get("previous") or {}
    if isinstance(previous.get("correct"), bool):
        was = "correct" if previous["correct"] else "wrong"
        whose = f"{tool}'s verdict" if tool else "input's verdict"
        facts.append((whose, f"{was} (extracted {previous.get('extracted_final_answer') or '—'})"))
    task_id = str(task.get("task_id", ""))
    category = str(task.get("category", ""))
    # What the filter box matches, lower-cased as it lower-cases what is typed: the text as the page shows it (its
    # control characters written as visible text first, so that "u+202e" finds the U+202E the page shows).
    search = visible(" ".join(
        [
            task_id,
            category,
            expected,
            extracted,
            str(task.get("extraction_method") or ""),
            str(task.get("ambiguity") or ""),
            str(task.get("rule") or ""),
            verdict,
        ]
    )).lower()
    return {
        "id": task_id,
        "sample": int(task.get("sample") or 0) if sampled else None,
        "type": task.get("task_type"),
        # A type whose whole text is the answer finds no statements: the page says what scores it instead.
        "scored_by": _text_scored_by(task),
        "category": category,
        "verdict": verdict,
        "expected": expected,
        "extracted": extracted,
        "method": str(task.get("extraction_method") or "—"),
        "ambiguity": str(task.get("ambiguity") or "—"),
        "truncated": bool(task.get("truncated")),
        "changed": changed(task),
        "rule": str(task.get("rule") or "—"),
        "reason": str(task.get("reason") or ""),
        "error": task.get("error"),
        "facts": facts,
        "prompt": task.get("prompt") or "",
        "options": own.options,
        "content": segments(content, spans("content"), decided),
        "reasoning": segments(reasoning, spans("reasoning"), decided),
        "reasoning_chars": len(reasoning),
        "reasoning_statements": sum(st.raw_field == "reasoning" for st in own.statements),
        "statements": own.statements,
        "tables": own.tables,
        "listings": own.listings,
        "search": search,
    }


# A run page shows at most this many tasks with their whole evidence (prompt, output, statements); the rest
# are one row each of a plain table. Every task's evidence was 70 MB of HTML for 12,000 MMLU-Pro tasks, a page
# a browser takes a minute to open; the evidence of every task stays in the run's JSON document.
FULL_EVIDENCE = 300


def _evidence_rank(task: Mapping[str, Any]) -> int:
    """Which tasks a large run's page shows in full first: the decisions that changed, failed requests,
    truncated and ambiguous answers, then the other tasks not answered correctly."""
    if changed(task):
        return 0
    if task.get("error"):
        return 1
    if task.get("truncated"):
        return 2
    if task.get("ambiguity") not in (None, "none"):
        return 3
    return 4 if task.get("correct") is not True else 5


def in_full(tasks: Sequence[Mapping[str, Any]]) -> set[int]:
    """The indexes of the tasks shown with their whole evidence: all of a run of FULL_EVIDENCE tasks or fewer."""
    if len(tasks) <= FULL_EVIDENCE:
        return set(range(len(tasks)))
    ranked = sorted(range(len(tasks)), key=lambda i: (_evidence_rank(tasks[i]), i))
    return set(ranked[:FULL_EVIDENCE])


def index_row(task: Mapping[str, Any], sampled: bool = False) -> dict[str, Any]:
    """A task as one row of the compact table: what it was asked, what was read, how, and the verdict."""
    previous = task.get("previous") or {}
    return {
        "id": str(task.get("task_id", "")),
        "sample": int(task.get("sample") or 0) if sampled else None,
        "category": str(task.get("category", "")),
        "verdict": verdict_of(task),
        "expected": expected_text(task),
        "extracted": extracted_text(task),
        "how": f"{task.get('extraction_method') or '—'} · {task.get('ambiguity') or '—'}",
        "truncated": bool(task.get("truncated")),
        "changed": changed(task),
        "reason": str(task.get("reason") or ""),
        "previous_verdict": "correct" if previous.get("correct") else "wrong",
        "previous_extracted": str(previous.get("extracted_final_answer") or "—"),
    }
