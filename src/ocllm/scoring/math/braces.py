"""Which brace closes which, in LaTeX text: a box's value, and a solution's last box (scoring/math/golds.py);
and how many items a text lists outside its brackets."""

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


# Brackets that open and close an interval or a tuple.
_OPENERS = "([{"
_CLOSERS = ")]}"


def top_level_items(text: str) -> int:
    """How many comma-separated items the text lists outside any bracket: "3,5,7" is 3, "(1,2)" is 1."""
    depth = 0
    items = 1
    for ch in text:
        if ch in _OPENERS:
            depth += 1
        elif ch in _CLOSERS:
            depth = max(0, depth - 1)
        elif ch == "," and depth == 0:
            items += 1
    return items
