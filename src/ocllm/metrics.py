"""Aggregate decisions into the summary figures every output shares."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any, Protocol

from ocllm.models import Decision


class Verdict(Protocol):
    """What tallying needs of a scored task (a Decision, or a comparison's ScoredTask)."""

    @property
    def category(self) -> str: ...
    @property
    def correct(self) -> bool | None: ...
    @property
    def error(self) -> str | None: ...


def tally_categories(items: Iterable[Verdict]) -> dict[str, dict[str, Any]]:
    """total, correct, errors and accuracy per category, in name order."""
    by_category: dict[str, dict[str, Any]] = {}
    for item in items:
        cat = by_category.setdefault(item.category, {"total": 0, "correct": 0, "errors": 0})
        cat["total"] += 1
        cat["correct"] += item.correct is True
        cat["errors"] += item.error is not None
    for cat in by_category.values():
        cat["scored"] = cat["total"] - cat["errors"]  # failed requests are not scored
        cat["accuracy"] = accuracy(cat["correct"], cat["scored"])
    return dict(sorted(by_category.items()))


def summarize(decisions: list[Decision]) -> dict[str, Any]:
    """Totals overall and per category. Errors are counted apart and left out of the accuracy."""
    by_category = tally_categories(decisions)
    total = len(decisions)
    correct = sum(d.correct is True for d in decisions)
    errors = sum(d.error is not None for d in decisions)
    return {
        "total": total,
        "correct": correct,
        "errors": errors,
        "scored": total - errors,
        "accuracy": accuracy(correct, total - errors),
        "by_category": by_category,
        "by_ambiguity": dict(Counter(d.ambiguity for d in decisions).most_common()),
        "by_method": dict(Counter(d.extraction_method for d in decisions).most_common()),
        "by_source": dict(Counter(d.extraction_source for d in decisions).most_common()),
        "truncated": sum(d.truncated for d in decisions),
    }


def accuracy(correct: int, scored: int) -> float:
    return round(correct / scored, 6) if scored else 0.0


def token_counts(usage: dict[str, Any] | None) -> tuple[int | None, int | None]:
    """(completion tokens, reasoning tokens) of a server's usage object, None where it did not say.
    vLLM puts reasoning tokens under completion_tokens_details; SGLang at the top level of usage."""
    usage = usage if isinstance(usage, dict) else {}
    completion = usage.get("completion_tokens")
    details = usage.get("completion_tokens_details")
    reasoning = details.get("reasoning_tokens") if isinstance(details, dict) else None
    if reasoning is None:
        reasoning = usage.get("reasoning_tokens")
    return (
        completion if isinstance(completion, int) and not isinstance(completion, bool) else None,
        reasoning if isinstance(reasoning, int) and not isinstance(reasoning, bool) else None,
    )
