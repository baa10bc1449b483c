"""Whether a function program failed outside its entry point (docs/scoring/code.md, C8): the entry point's def is
there and intact, and what failed is another line of the program, a usage example after the function that does not
parse or a top-level statement that raised while the definitions ran. The outcome stays the program's (the rule runs
the model's code as written); the flag says why, so that a summary can count "the function was there" apart."""

from __future__ import annotations

import ast
import re
from typing import Any

from ocllm.scoring.code.decision import OutsideError, OutsideFailure

_TEXT_CHARS = 200


def failed_outside(
    program: str, entry_point: str, outcome: str, report: dict[str, Any] | None
) -> OutsideFailure | None:
    """The failure outside the entry point's def, or None: the failure is not a load failure, its line is unknown,
    the program has no intact def of the entry point, or the failing line is inside it."""
    if report is None or not entry_point:
        return None
    status, line = report.get("status"), report.get("line")
    error: OutsideError
    if outcome == "syntax_error" and status == "syntax_error":
        error = "syntax_error"
    elif outcome == "exception" and status in ("exception", "exit") and report.get("phase") == "program":
        error = "exception"
    else:
        return None
    if not isinstance(line, int) or isinstance(line, bool) or line < 1:
        return None
    lines = program.splitlines()
    span = entry_point_span(lines, entry_point)
    if span is None or span[0] <= line <= span[1]:
        return None
    text = lines[line - 1].strip()[:_TEXT_CHARS] if line <= len(lines) else ""
    return OutsideFailure(
        error=error, line=line, text=text, entry_point_first_line=span[0], entry_point_last_line=span[1]
    )


def entry_point_span(lines: list[str], entry_point: str) -> tuple[int, int] | None:
    """The first and last line (from 1) of the program's last top-level def of the entry point, its decorators
    included, when that def parses by itself and has a body of its own (not only strings: C3's stub); else None.
    Read by lines, since the program as a whole may not parse: the def runs to the next line at column 0 that is
    neither blank nor a comment."""
    opening = re.compile(rf"(?:async\s+)?def\s+{re.escape(entry_point)}\s*\(")
    starts = [i for i, line in enumerate(lines) if opening.match(line)]
    if not starts:
        return None
    start = end = starts[-1]
    for i in range(start + 1, len(lines)):
        text = lines[i]
        if text.strip() and not text[0].isspace() and not text.startswith("#"):
            break
        if text.strip() and not text.startswith("#"):
            end = i
    while start > 0 and lines[start - 1].startswith("@"):
        start -= 1
    if not _intact(lines[start : end + 1], entry_point):
        return None
    return start + 1, end + 1


def _intact(lines: list[str], entry_point: str) -> bool:
    try:
        module = ast.parse("\n".join(lines))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    for node in module.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == entry_point:
            strings = all(
                isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant) and isinstance(s.value.value, str)
                for s in node.body
            )
            return not strings
    return False
