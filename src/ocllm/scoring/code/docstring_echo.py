"""Whether an answer wrote the prompt's docstring again (docs/scoring/code.md, C8, "What the answer spent"): the
code prefix's docstring of the entry point, its first 60 characters with runs of white space as one, found in the
code the answer gave. Not a verdict: a figure of what the default prompt costs a model in tokens, counted in the
summary, so that a lane with another template shows the difference (issue 41)."""

from __future__ import annotations

import ast

from ocllm.scoring.code.fields import CodeTask

_COMPARED = 60
_MIN_CHARS = 12  # shorter ("Add.") could be any answer's words


def prefix_docstring(task: CodeTask) -> str | None:
    """The code prefix's docstring of the entry point (else its module's), white space run together; None when it
    has none, none long enough to tell, or the prefix does not parse."""
    if not task.code_prefix or not task.entry_point:
        return None
    try:
        module = ast.parse(task.code_prefix)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    found = None
    for node in ast.walk(module):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == task.entry_point:
            found = ast.get_docstring(node)
    text = " ".join((found or ast.get_docstring(module) or "").split())
    return text[:_COMPARED] if len(text) >= _MIN_CHARS else None


def repeated_docstring(task: CodeTask, code: str | None) -> bool | None:
    """True when the answer's code holds the prefix's docstring again; None when no code was taken, or the task has
    no docstring to repeat."""
    docstring = prefix_docstring(task) if code is not None else None
    if code is None or docstring is None:
        return None
    return docstring in " ".join(code.split())
