"""A math task's own fields: the gold answer (plain or LaTeX) and an optional relative tolerance."""

from __future__ import annotations

import math
from typing import Any

from ocllm.errors import InputError
from ocllm.models import Task
from ocllm.scoring.math.stated import BOX_LIMIT


class MathTask(Task, tag="math", kw_only=True):
    """A math task: the gold answer (plain or LaTeX) in `answer`, and an optional relative tolerance, for measured
    quantities: a stated number within it of the gold is equal."""

    tolerance: float | None = None

# The longest gold a suite may give (docs/lanes.md, "Bounds on suites"): a box longer than BOX_LIMIT characters is
# not read as a statement, so a longer gold could never be credited in one, and nothing would say why.
MAX_GOLD_CHARS = BOX_LIMIT


def _gold(value: object) -> str | None:
    """The gold as text: a string as written, an integer or finite decimal a suite writes as a JSON number."""
    if isinstance(value, str):
        return value if value.strip() else None
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if isinstance(value, float) and math.isfinite(value):
        return repr(value)
    return None


def _tolerance_problem(value: object) -> str | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return f"{value!r} is not a number"
    if not 0 < value < 1:
        return f"{value!r} is not a relative tolerance between 0 and 1 (0.01 is 1%)"
    return None


def check_suite_line(where: str, row: dict[str, Any]) -> None:
    gold = _gold(row.get("answer"))
    if gold is None:
        raise InputError(f"{where}: field 'answer': a math task needs its gold answer as text (plain or LaTeX)")
    if len(gold) > MAX_GOLD_CHARS:
        raise InputError(
            f"{where}: field 'answer': a gold of {len(gold):,} characters, longer than the {MAX_GOLD_CHARS:,} a math "
            "answer is read in (the longest \\boxed{} read; docs/lanes.md, 'Bounds on suites')"
        )
    row["answer"] = gold  # a JSON number becomes the text it is read as; the suite's canonical form keeps that
    if (problem := _tolerance_problem(row.get("tolerance"))) is not None:
        raise InputError(f"{where}: field 'tolerance': {problem}")


def saved_task_fields(where: str, row: dict[str, Any]) -> dict[str, Any]:
    """A saved record's gold (`expected_answer`) and tolerance."""
    gold = _gold(row.get("expected_answer"))
    if gold is None:
        raise InputError(f"{where} is a math task without an expected_answer")
    if (problem := _tolerance_problem(row.get("tolerance"))) is not None:
        raise InputError(f"{where} has a tolerance that is {problem.split(' is ', 1)[1]}")
    return {"answer": gold, "tolerance": row.get("tolerance")}


def record_fields(task: MathTask) -> dict[str, Any]:
    return {"tolerance": task.tolerance}
