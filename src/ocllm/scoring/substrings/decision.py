"""The typed evidence of a required-substrings decision: which substrings the visible answer lacked."""

from __future__ import annotations

from typing import Literal

from ocllm.models import Decision


class SubstringsDecision(Decision, kw_only=True):
    """A required-substrings task's verdict: correct when the visible content holds every substring. No answer is
    extracted (`extracted_final_answer` None); the evidence is the list of substrings it lacked."""

    extraction_method: Literal["required_substrings"]
    ambiguity: Literal["none"]
    rule: Literal["required_substrings"]
    missing_substrings: list[str] | None = None
