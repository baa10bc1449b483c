"""How reports put a math record's evidence in words: each normal form with the steps that made it, and the
comparator that decided (the gold and the answer as stated are drawn as given)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ocllm.scoring.task_view import Statement, TaskView, candidates_of, statement


def _normal_form(value: object, steps: object) -> str:
    chain = " → ".join(str(s) for s in steps) if isinstance(steps, list) and steps else "as written"
    return f"{value} ({chain})"


def evidence_lines(record: Mapping[str, Any]) -> list[tuple[str, str]]:
    if record.get("error") is not None:
        return []
    lines = []
    if record.get("normalised_answer") is not None:
        lines.append(("answer, normalised", _normal_form(record["normalised_answer"], record.get("normalisation"))))
    if record.get("gold_normalised") is not None:
        lines.append(("gold, normalised", _normal_form(record["gold_normalised"], record.get("gold_normalisation"))))
    comparator, comparison = record.get("comparator"), record.get("comparison")
    if comparator and comparator != "none":
        detail = record.get("comparison_detail")
        lines.append(("compared", f"{comparator}: {comparison}" + (f" ({detail})" if detail else "")))
    if record.get("verifier"):
        lines.append(("verifier", str(record["verifier"])))
    return lines


def _statement(candidate: Mapping[str, Any], deciding: bool) -> Statement:
    """A math statement states a value: drawn with its normal form where that differs."""
    value, normal = candidate.get("value"), candidate.get("normalised")
    stated = None
    if value is not None:
        stated = str(value) + (f" → {normal}" if normal is not None and normal != value else "")
    return statement(candidate, deciding, stated=stated)


def task_view(record: Mapping[str, Any]) -> TaskView:
    """The normal forms and the comparator among the task's facts, and each statement with the value it states."""
    return TaskView(
        facts=evidence_lines(record),
        statements=[_statement(c, deciding) for c, deciding in candidates_of(record)],
    )
