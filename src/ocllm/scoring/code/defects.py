"""A dataset's defect told apart from the model's failure (docs/scoring/code.md, C8): the task's tests raised NameError
in their own code for a name that neither the task (its question, its code prefix) nor the program defines. No
program the model could have written from what it was shown would have passed: MBPP 367's setup code builds trees of
a class `Node` that only MBPP's reference solution defines, and the prompt never names it.

A name the question mentions stays the model's to define (a task that asks for a class `Node` and a function): only
a name the model was never shown is the dataset's."""

from __future__ import annotations

import ast
import re
from typing import Any

from ocllm.scoring.code.decision import DatasetDefect
from ocllm.scoring.code.fields import CodeTask


def dataset_defect(task: CodeTask, program: str, report: dict[str, Any] | None) -> DatasetDefect | None:
    """The defect the tests' report shows, or None. Only the tests' own NameError counts (the program's is re-raised
    as the program's exception, never reported here), before or after calls reached the program."""
    if report is None or report.get("status") not in ("failed_assertion", "tests_error"):
        return None
    name = report.get("undefined_name")
    if not isinstance(name, str) or not name.isidentifier():
        return None
    if re.search(rf"(?<![\w.]){re.escape(name)}(?!\w)", task.question):
        return None
    if name in top_level_names(task.code_prefix or "") or name in top_level_names(program):
        return None
    where = report.get("where")
    return DatasetDefect(name=name, where=where if isinstance(where, str) else None)


def defect_reason(defect: DatasetDefect, calls: object) -> str:
    at = f" at {defect.where}" if defect.where else ""
    when = "before any call reached the program" if not calls else f"after {calls} call(s) of the program"
    return (
        f"the tests use `{defect.name}` (NameError{at}, {when}), which neither the task's question nor its code "
        "prefix nor the program defines: a defect of the dataset's tests, not the model's failure"
    )


def top_level_names(source: str) -> set[str]:
    """The names a module binds at its top level (defs, classes, imports, assignments, loop and with targets, in
    `if`/`try`/loop bodies too), not inside functions or classes. A source that does not parse binds none."""
    try:
        module = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return set()
    names: set[str] = set()
    pending: list[ast.stmt] = list(module.body)
    while pending:
        node = pending.pop()
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
            continue
        if isinstance(node, ast.Import | ast.ImportFrom):
            names.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
            continue
        for field in ("body", "orelse", "finalbody"):
            pending.extend(getattr(node, field, None) or [])
        for handler in getattr(node, "handlers", None) or []:
            pending.extend(handler.body)
            if handler.name:
                names.add(handler.name)
        for part in ast.iter_child_nodes(node):
            if isinstance(part, ast.stmt | ast.ExceptHandler):
                continue
            names.update(n.id for n in ast.walk(part) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store))
    return names
