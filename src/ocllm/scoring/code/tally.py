"""What a code run's summary adds: the tasks per outcome, per kind of task (function, stdin); timeouts split by the
limit reached (CPU or wall); syntax errors on answers cut at max_tokens; and the tasks not run because no sandbox
could run them, which are left out of the accuracy (their `correct` is None) and said in a notice with the reason."""

from __future__ import annotations

from collections import Counter
from typing import Any

from ocllm.models import Decision


class CodeTally:
    def __init__(self) -> None:
        self.outcomes: Counter[str] = Counter()
        self.by_kind: dict[str, Counter[str]] = {}
        self.timeouts: Counter[str] = Counter()
        self.syntax_truncated = 0
        self.refused = 0
        self.refused_why: Counter[str] = Counter()
        self.tests_errors: Counter[str] = Counter()  # task ids whose tests could not run against the program

    def add(self, decision: Decision) -> None:
        outcome = getattr(decision, "outcome", None)
        if decision.error is not None or outcome is None:
            return  # a failed request: nothing was answered, nothing ran
        kind = str(getattr(decision, "task_kind", "function"))
        self.outcomes[outcome] += 1
        self.by_kind.setdefault(kind, Counter())[outcome] += 1
        if outcome == "timeout":
            runs = getattr(decision, "runs", [])
            limit = next((run.timeout for run in reversed(runs) if run.timeout), None)
            self.timeouts[limit or "cpu"] += 1
        if outcome == "syntax_error" and decision.truncated:
            self.syntax_truncated += 1
        if outcome == "sandbox_refused":
            self.refused += 1
            sandbox = getattr(decision, "sandbox", None)
            self.refused_why[str(getattr(sandbox, "refused", None) or decision.reason or "no sandbox")] += 1
        if outcome == "tests_error":
            self.tests_errors[decision.task_id] += 1

    def figures(self) -> dict[str, Any]:
        return {
            "outcomes": dict(sorted(self.outcomes.items())),
            "outcomes_by_kind": {kind: dict(sorted(c.items())) for kind, c in sorted(self.by_kind.items())},
            "timeouts": {"cpu": self.timeouts["cpu"], "wall": self.timeouts["wall"]},
            "syntax_errors_truncated": self.syntax_truncated,
            "sandbox_refused": self.refused,
            "tests_error": sum(self.tests_errors.values()),
        }

    def notices(self) -> list[str]:
        said: list[str] = []
        if self.refused:
            why, _ = self.refused_why.most_common(1)[0]
            others = f" (and {len(self.refused_why) - 1} other reason(s))" if len(self.refused_why) > 1 else ""
            said.append(
                f"{self.refused} code task(s) were not run: {why.rstrip('.')}{others}. They are not counted: neither "
                "right nor wrong, left out of the accuracy (outcome sandbox_refused)"
            )
        if self.tests_errors:
            shown = ", ".join(sorted(self.tests_errors)[:5]) + (" ..." if len(self.tests_errors) > 5 else "")
            said.append(
                f"{sum(self.tests_errors.values())} code answer(s) could not be judged: the task's tests fail before "
                f"any call reaches the program, or pass it what cannot cross to it ({shown}). They are not counted: "
                "neither right nor wrong, left out of the accuracy (outcome tests_error)"
            )
        if self.syntax_truncated:
            said.append(
                f"{self.syntax_truncated} code answer(s) that were cut at max_tokens (finish_reason length) ended in "
                "a syntax error: the program likely stops where the answer was cut, so a larger max_tokens may pass "
                "them"
            )
        return said
