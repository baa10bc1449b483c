"""What a math run's summary adds to the common figures: how its answers were compared, and the checks that
decided nothing (a symbolic check stopped at its CPU-time limit, a value screened as too large to evaluate, an
equivalence left undecided), shown apart."""

from __future__ import annotations

from collections import Counter
from typing import Any

from ocllm.models import Decision
from ocllm.scoring.math.symbolic import SYMBOLIC_LIMIT_S


class MathTally:
    def __init__(self) -> None:
        self.comparators: Counter[str] = Counter()
        self.killed = 0
        self.undecided = 0
        self.screened = 0  # of the undecided: values the screen kept from the symbolic check

    def add(self, decision: Decision) -> None:
        comparator = getattr(decision, "comparator", "none")
        comparison = getattr(decision, "comparison", "not_compared")
        if comparator != "none":
            self.comparators[comparator] += 1
        self.killed += comparison == "killed"
        self.undecided += comparison == "undecided"
        self.screened += comparator == "screen"

    def figures(self) -> dict[str, Any]:
        return {
            "symbolic_checks_killed": self.killed,
            "undecided": self.undecided,
            "screened": self.screened,
            "decided_by": dict(self.comparators.most_common()),
        }

    def notices(self) -> list[str]:
        notices = []
        if self.killed:
            notices.append(
                f"{self.killed} math answer(s) could not be checked: the symbolic check reached its "
                f"{SYMBOLIC_LIMIT_S:g} s CPU-time limit (not decided, not credited; counted apart as "
                "symbolic_checks_killed)"
            )
        if self.undecided:
            screened = (
                f"; {self.screened} of them were not sent to the symbolic check, their value too large to evaluate "
                "(a power tower, a huge factorial, power or number: counted as screened)"
                if self.screened
                else ""
            )
            notices.append(
                f"{self.undecided} math answer(s) were left undecided: no comparator could confirm them equal or "
                f"different (not credited; each decision's comparison_detail says why){screened}"
            )
        return notices
