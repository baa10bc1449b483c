"""What a math run's summary adds to the common figures: how its answers were compared, and the checks that
decided nothing (a symbolic check killed at its limit, an equivalence left undecided), shown apart."""

from __future__ import annotations

from collections import Counter
from typing import Any

from ocllm.models import Decision


class MathTally:
    def __init__(self) -> None:
        self.comparators: Counter[str] = Counter()
        self.killed = 0
        self.undecided = 0

    def add(self, decision: Decision) -> None:
        comparator = getattr(decision, "comparator", "none")
        comparison = getattr(decision, "comparison", "not_compared")
        if comparator != "none":
            self.comparators[comparator] += 1
        self.killed += comparison == "killed"
        self.undecided += comparison == "undecided"

    def figures(self) -> dict[str, Any]:
        return {
            "symbolic_checks_killed": self.killed,
            "undecided": self.undecided,
            "decided_by": dict(self.comparators.most_common()),
        }
