"""Aggregate decisions into the summary figures every output shares."""

from __future__ import annotations

from collections import Counter
from typing import Any

from ocllm.models import Decision


def summarize(decisions: list[Decision]) -> dict[str, Any]:
    """Totals overall and per category. Errors are counted apart and left out of the accuracy."""
    by_category: dict[str, dict[str, Any]] = {}
    for d in decisions:
        cat = by_category.setdefault(d.category, {"total": 0, "correct": 0, "errors": 0})
        cat["total"] += 1
        cat["correct"] += d.correct is True
        cat["errors"] += d.error is not None
    for cat in by_category.values():
        cat["accuracy"] = _accuracy(cat["correct"], cat["total"] - cat["errors"])
    total = len(decisions)
    correct = sum(d.correct is True for d in decisions)
    errors = sum(d.error is not None for d in decisions)
    return {
        "total": total,
        "correct": correct,
        "errors": errors,
        "accuracy": _accuracy(correct, total - errors),
        "complete": errors == 0,
        "by_category": dict(sorted(by_category.items())),
        "by_ambiguity": dict(Counter(d.ambiguity for d in decisions).most_common()),
        "by_method": dict(Counter(d.extraction_method for d in decisions).most_common()),
        "by_source": dict(Counter(d.extraction_source for d in decisions).most_common()),
        "truncated": sum(d.truncated for d in decisions),
    }


def _accuracy(correct: int, scored: int) -> float:
    return round(correct / scored, 6) if scored else 0.0
