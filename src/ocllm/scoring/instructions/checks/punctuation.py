"""IFEval's `punctuation` instruction: no comma anywhere in the answer."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ocllm.scoring.instructions.checks.registry import Check, Measured


def _no_comma(text: str, _kwargs: Mapping[str, Any]) -> Measured:
    # Only the ASCII comma, as IFEval checks it: a fullwidth or Arabic comma is another character.
    at = text.find(",")
    if at < 0:
        return Measured(True, "no comma")
    return Measured(False, f"{text.count(',')} comma(s), the first at {at}")


CHECKS = [Check("punctuation:no_comma", "no commas", (), _no_comma)]
