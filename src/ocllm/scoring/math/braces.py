"""Which brace closes which, in LaTeX text: a box's value, and a solution's last box (importers/math_golds.py)."""

from __future__ import annotations

import re

_BRACE_OR_ESCAPE = re.compile(r"\\.|[{}]", re.DOTALL)


def brace_pairs(text: str) -> dict[int, int]:
    """Every brace that closes, by where it opens: one pass over the text (a megabyte of boxes that never close
    is not scanned once per box). Escaped braces (\\{ \\}) do not count."""
    pairs: dict[int, int] = {}
    stack: list[int] = []
    for m in _BRACE_OR_ESCAPE.finditer(text):
        ch = m.group(0)
        if ch == "{":
            stack.append(m.start())
        elif ch == "}" and stack:
            pairs[stack.pop()] = m.start()
    return pairs
