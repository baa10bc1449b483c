"""What a code run's summary adds: the tasks per outcome, per kind of task (function, stdin); timeouts split by the
limit reached (CPU or wall); syntax errors on answers cut at max_tokens; the answers that defined the entry point and
failed outside it (a usage line that does not parse or raised), with the line; the dataset's defects, apart from the
other tests_error; and the tasks not run because no sandbox could run them, which are left out of the accuracy (their
`correct` is None) and said in a notice with the reason."""

from __future__ import annotations

from collections import Counter
from typing import Any

from ocllm.scoring.code.decision import CodeDecision


class CodeTally:
    def __init__(self) -> None:
        self.outcomes: Counter[str] = Counter()
        self.by_kind: dict[str, Counter[str]] = {}
        self.timeouts: Counter[str] = Counter()
        self.syntax_truncated = 0
        self.refused = 0
        self.refused_why: Counter[str] = Counter()
        self.tests_errors: Counter[str] = Counter()  # task ids whose tests could not run against the program
        self.defects: dict[str, str] = {}  # task id -> the name its tests use that nothing defines (a dataset defect)
        self.defect_count = 0  # answers (a task answered several times counts each time, as every outcome does)
        self.outside: dict[str, str] = {}  # task id -> "line N (syntax_error)": entry point defined, outside failed
        self.outside_by_error: Counter[str] = Counter()
        # The lane ran function programs as their entry point and what it uses (code_runs, C7a): "cut" when a def of
        # it was found, "as_written" when none was and the program ran whole.
        self.entry_point_only: Counter[str] = Counter()
        self.docstrings: Counter[bool] = Counter()  # answers with code whose task had a docstring: repeated or not

    def add(self, decision: CodeDecision) -> None:
        outcome = decision.outcome
        if outcome is None:
            return  # a decision of this room always has one (a failed request's is the base Decision, never handed)
        kind = decision.task_kind
        self.outcomes[outcome] += 1
        self.by_kind.setdefault(kind, Counter())[outcome] += 1
        if outcome == "timeout":
            limit = next((run.timeout for run in reversed(decision.runs) if run.timeout), None)
            self.timeouts[limit or "cpu"] += 1
        if outcome == "syntax_error" and decision.truncated:
            self.syntax_truncated += 1
        if outcome == "sandbox_refused":
            self.refused += 1
            refused = decision.sandbox.refused if decision.sandbox is not None else None
            self.refused_why[refused or decision.reason or "no sandbox"] += 1
        defect = decision.dataset_defect
        if outcome == "tests_error" and defect is not None:
            self.defects[decision.task_id] = defect.name
            self.defect_count += 1
        elif outcome == "tests_error":
            self.tests_errors[decision.task_id] += 1
        outside = decision.failed_outside_entry_point
        if outside is not None:
            self.outside[decision.task_id] = f"line {outside.line}"
            self.outside_by_error[outside.error] += 1
        if decision.repeated_docstring is not None:
            self.docstrings[decision.repeated_docstring] += 1
        only = decision.entry_point_only
        if only is not None:
            self.entry_point_only["cut" if only.found else "as_written"] += 1

    def figures(self) -> dict[str, Any]:
        figures: dict[str, Any] = {
            "outcomes": dict(sorted(self.outcomes.items())),
            "outcomes_by_kind": {kind: dict(sorted(c.items())) for kind, c in sorted(self.by_kind.items())},
            "timeouts": {"cpu": self.timeouts["cpu"], "wall": self.timeouts["wall"]},
            "syntax_errors_truncated": self.syntax_truncated,
            "sandbox_refused": self.refused,
            "tests_error": sum(self.tests_errors.values()) + self.defect_count,
            "dataset_defects": self.defect_count,
            "failed_outside_entry_point": {
                "syntax_error": self.outside_by_error["syntax_error"],
                "exception": self.outside_by_error["exception"],
            },
        }
        if self.docstrings:  # only tasks whose code prefix has a docstring to repeat
            figures["docstring_repeated"] = {"repeated": self.docstrings[True], "of": sum(self.docstrings.values())}
        if self.entry_point_only:  # only a lane that asked for it: a default run's figures are as they were
            figures["entry_point_only"] = {
                "cut": self.entry_point_only["cut"], "as_written": self.entry_point_only["as_written"]
            }
        return figures

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
            shown = _first_few(sorted(self.tests_errors))
            said.append(
                f"{sum(self.tests_errors.values())} code answer(s) could not be judged: the task's tests fail before "
                f"any call reaches the program, or pass it what cannot cross to it ({shown}). They are not counted: "
                "neither right nor wrong, left out of the accuracy (outcome tests_error)"
            )
        if self.defects:
            shown = _first_few([f"{task} ({name})" for task, name in sorted(self.defects.items())])
            said.append(
                f"{self.defect_count} code answer(s) met a defect of the dataset: the task's tests use a name that "
                f"neither the task's question nor its code prefix nor the program defines ({shown}). Not the "
                "model's failure: neither right nor wrong, left out of the accuracy (outcome tests_error)"
            )
        if self.outside:
            shown = _first_few([f"{task} {line}" for task, line in sorted(self.outside.items())])
            said.append(
                f"{sum(self.outside_by_error.values())} code answer(s) defined the entry point, and code outside it "
                "failed "
                f"({self.outside_by_error['syntax_error']} syntax error(s), {self.outside_by_error['exception']} "
                f"exception(s) while the definitions ran: {shown}): usage lines after the function, run as the "
                "model wrote them. A harness that runs only the entry point (evalplus) would have tested the function"
            )
        if self.entry_point_only:
            cut, whole = self.entry_point_only["cut"], self.entry_point_only["as_written"]
            said.append(
                f"{cut + whole} code answer(s) ran under code_runs = \"entry_point_only\": the entry point and what "
                "it uses, every other top-level line left out (evalplus's way; the default runs the program as "
                "written), so this lane's pass rate reads beside evalplus's, not beside a default lane's"
                + (f". {whole} had no def of the entry point that parses, and ran as written" if whole else "")
            )
        if self.syntax_truncated:
            said.append(
                f"{self.syntax_truncated} code answer(s) that were cut at max_tokens (finish_reason length) ended in "
                "a syntax error: the program likely stops where the answer was cut, so a larger max_tokens may pass "
                "them"
            )
        return said


def _first_few(names: list[str], shown: int = 5) -> str:
    """The first few of a notice's tasks, and "..." when there are more."""
    return ", ".join(names[:shown]) + (" ..." if len(names) > shown else "")
