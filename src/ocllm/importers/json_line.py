"""One line of a JSONL dataset file -> its object, nested no deeper than a bound.

Python's json module parses by recursion and fails with a RecursionError somewhere past a few hundred levels,
depending on how deep the stack already is: a valid line 600 levels deep was "maximum recursion depth
exceeded". The depth is measured first, without recursion, and a line past the bound is refused in one line
naming it; what is within the bound parses, wherever the stack stands.
"""

from __future__ import annotations

import json
import re
from typing import Any

# A JSON string, escapes included: brackets inside strings are text.
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
_BRACKETS = re.compile(r"[\[\]{}]")


class BadLine(Exception):
    """A line that is not a JSON object; the message says why."""


def depth_of(line: str) -> int:
    """How deep the brackets of a JSON text nest, strings left out."""
    depth = most = 0
    for bracket in _BRACKETS.findall(_STRING.sub("", line)):
        if bracket in "[{":
            depth += 1
            most = max(most, depth)
        else:
            depth -= 1
    return most


def json_object(line: str, max_depth: int) -> dict[str, Any]:
    # Counting brackets is cheap; only a line with more opening brackets than the bound can be too deep.
    if line.count("[") + line.count("{") > max_depth and (depth := depth_of(line)) > max_depth:
        raise BadLine(f"nested {depth:,} levels deep; a JSON line is read to {max_depth} levels")
    try:
        fields = json.loads(line)
    except RecursionError:  # within the bound but the stack was deeper still: said as the bound
        raise BadLine(f"nested too deeply to read; a JSON line is read to {max_depth} levels") from None
    except json.JSONDecodeError as exc:
        raise BadLine(f"not a JSON line ({exc})") from None
    if not isinstance(fields, dict):
        raise BadLine("expected a JSON object")
    return fields
