"""IFEval's `startend` instructions: the answer ends with a phrase, and the answer is wrapped in double quotation
marks (docs/scoring/instructions.md, "Group B checks"). Both follow IFEval's semantics:
- end phrase: the answer stripped of surrounding whitespace, then of double quotation marks at either end, ends
  with the phrase (stripped), ignoring case. Nothing may follow it, not even a space inside the closing quote.
- quotation: the answer stripped of surrounding whitespace is at least two characters, the first and the last
  an ASCII double quotation mark (`"`); typographic quotes (“ ”) are other characters, as in IFEval.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ocllm.scoring.instructions.checks.registry import Check, Measured, Param


def _end_checker(text: str, kwargs: Mapping[str, Any]) -> Measured:
    phrase = kwargs["end_phrase"].strip()
    if not phrase:
        return Measured(False, "the end phrase is blank: nothing to check the ending against")
    ending = text.strip().strip('"')
    tail = ending[-len(phrase) :]
    if ending.lower().endswith(phrase.lower()):
        return Measured(True, f'ends with "{tail}" (case ignored)')
    return Measured(False, f'the last {len(tail)} characters are "{tail}", needed "{phrase}"')


def _quotation(text: str, _kwargs: Mapping[str, Any]) -> Measured:
    body = text.strip()
    if len(body) > 1 and body[0] == '"' and body[-1] == '"':
        return Measured(True, "wrapped in double quotation marks")
    if len(body) < 2:
        return Measured(False, f"the answer is {len(body)} character(s): too short to be wrapped in quotation marks")
    return Measured(False, f"first character {body[0]!r}, last {body[-1]!r}: needed '\"' at both ends")


CHECKS = [
    Check("startend:end_checker", "ends with an exact phrase", (Param("end_phrase", (str,)),), _end_checker),
    Check("startend:quotation", "the whole answer in double quotation marks", (), _quotation),
]
