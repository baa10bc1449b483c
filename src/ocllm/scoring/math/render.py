"""How reports put a math record's evidence in words: each normal form with the steps that made it, and the
comparator that decided (the gold and the answer as stated are drawn as given)."""

from __future__ import annotations

from collections.abc import Sequence

from ocllm.scoring.math.decision import MathCandidate, MathDecision
from ocllm.scoring.math.fields import MathTask
from ocllm.scoring.scored import Scored
from ocllm.scoring.task_view import Statement, TaskView, candidates_of, statement

Math = Scored[MathTask, MathDecision]


def _normal_form(value: str, steps: Sequence[str]) -> str:
    chain = " → ".join(steps) if steps else "as written"
    return f"{value} ({chain})"


def evidence_lines(scored: Math) -> list[tuple[str, str]]:
    decision = scored.decision
    if decision is None:
        return []
    lines = []
    if decision.normalised_answer is not None:
        lines.append(("answer, normalised", _normal_form(decision.normalised_answer, decision.normalisation)))
    if decision.gold_normalised is not None:
        lines.append(("gold, normalised", _normal_form(decision.gold_normalised, decision.gold_normalisation)))
    if decision.comparator != "none":
        detail = decision.comparison_detail
        lines.append(("compared", f"{decision.comparator}: {decision.comparison}" + (f" ({detail})" if detail else "")))
    if decision.verifier:
        lines.append(("verifier", decision.verifier))
    return lines


def _statement(candidate: MathCandidate, deciding: bool) -> Statement:
    """A math statement states a value: drawn with its normal form where that differs."""
    value, normal = candidate.value, candidate.normalised
    return statement(candidate, deciding, stated=value + (f" → {normal}" if normal != value else ""))


def task_view(scored: Math) -> TaskView:
    """The normal forms and the comparator among the task's facts, and each statement with the value it states."""
    decision = scored.decision
    found = candidates_of(decision.candidates, decision.decided_by) if decision is not None else []
    return TaskView(facts=evidence_lines(scored), statements=[_statement(c, deciding) for c, deciding in found])
