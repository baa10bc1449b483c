"""What a math run's summary adds to the common figures: how its answers were compared, and the checks that
decided nothing (a symbolic check stopped at its CPU-time limit, a value screened as too large to evaluate, an
equivalence left undecided), shown apart."""

from __future__ import annotations

from collections import Counter
from typing import Any

from ocllm.scoring.math.decision import MathDecision
from ocllm.scoring.math.statements import MAX_STATEMENT_PLACES
from ocllm.scoring.math.symbolic import SYMBOLIC_LIMIT_S


class MathTally:
    def __init__(self) -> None:
        self.comparators: Counter[str] = Counter()
        self.killed = 0
        self.undecided = 0
        self.screened = 0  # of the undecided: values the screen kept from the symbolic check
        self.too_many_statements = 0  # regions past rule M2's bound on statements: not read, not credited

    def add(self, decision: MathDecision) -> None:
        if decision.comparator != "none":
            self.comparators[decision.comparator] += 1
        self.killed += decision.comparison == "killed"
        self.undecided += decision.comparison == "undecided"
        self.screened += decision.comparator == "screen"
        self.too_many_statements += decision.rule == "too_many_statements"

    def figures(self) -> dict[str, Any]:
        return {
            "symbolic_checks_killed": self.killed,
            "undecided": self.undecided,
            "screened": self.screened,
            "too_many_statements": self.too_many_statements,
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
        if self.too_many_statements:
            notices.append(
                f"{self.too_many_statements} math answer(s) were not read: a region held more than "
                f"{MAX_STATEMENT_PLACES:,} places where a statement may begin (not credited; counted apart as "
                "too_many_statements)"
            )
        return notices
