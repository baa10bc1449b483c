"""IFEval's `detectable_content` instructions: placeholders in square brackets, and a postscript."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ocllm.scoring.instructions.checks.registry import Check, Measured, Param

# IFEval's placeholder: "[" then the fewest characters up to "]" on the same line ("[name]", also "[]" and "[1]").
_SHOWN = 3  # placeholders named in the evidence


def placeholders(text: str) -> list[str]:
    """What IFEval's `\\[.*?\\]` finds (from a `[` to the next `]` on its line), found in one pass: on a line with a
    `[` and no `]` after it the pattern tried every `[` to the line's end, quadratic on a line of brackets."""
    found: list[str] = []
    for line in text.split("\n"):
        at = line.find("[")
        while at >= 0:
            end = line.find("]", at + 1)
            if end < 0:
                break  # no `]` after this `[`, so none after a later one either
            found.append(line[at : end + 1])
            at = line.find("[", end + 1)
    return found


def _number_placeholders(text: str, kwargs: Mapping[str, Any]) -> Measured:
    found = placeholders(text)
    wanted = kwargs["num_placeholders"]
    named = ", ".join(found[:_SHOWN]) + (", ..." if len(found) > _SHOWN else "")
    shown = f" ({named})" if found else ""
    return Measured(len(found) >= wanted, f"placeholders: {len(found)}{shown}, needed at least {wanted}")


def _marker_pattern(marker: str) -> re.Pattern[str]:
    """IFEval's two markers allow one space after each dot ("P. S.", "P. P. S"); any other marker is its literal
    text (IFEval reads it as a regular expression). Matched ignoring case."""
    if marker == "P.P.S":
        return re.compile(r"p\.\s?p\.\s?s", re.IGNORECASE)
    if marker == "P.S.":
        return re.compile(r"p\.\s?s\.", re.IGNORECASE)
    return re.compile(re.escape(marker), re.IGNORECASE)


def _postscript(text: str, kwargs: Mapping[str, Any]) -> Measured:
    """The marker anywhere in the answer, as IFEval finds it: IFEval's pattern is not anchored to a line's start,
    so "P.S." in the middle of a line counts. The evidence says where the marker is and whether a line opens with
    it, so a reader sees a postscript that is only a mention."""
    marker = kwargs["postscript_marker"].strip()
    match = _marker_pattern(marker).search(text)
    if match is None:
        return Measured(False, f'no postscript marker "{marker}"')
    line_start = text.rfind("\n", 0, match.start()) + 1
    where = "opening a line" if not text[line_start : match.start()].strip() else "inside a line"
    return Measured(True, f'postscript marker "{marker}" at {match.start()} ({where})')


def _marker_given(kwargs: Mapping[str, Any]) -> str | None:
    return None if kwargs["postscript_marker"].strip() else "argument 'postscript_marker' is empty"


CHECKS = [
    Check(
        "detectable_content:number_placeholders",
        "placeholders in square brackets",
        (Param("num_placeholders", (int,), minimum=0),),
        _number_placeholders,
    ),
    Check(
        "detectable_content:postscript",
        "a postscript",
        (Param("postscript_marker", (str,)),),
        _postscript,
        validate=_marker_given,
    ),
]
