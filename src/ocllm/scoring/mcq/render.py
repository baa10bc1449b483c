"""How reports put an MCQ record in words: the gold letter and the letter stated."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def expected_text(record: Mapping[str, Any]) -> str:
    expected = record.get("expected_answer")
    return "—" if expected is None else str(expected)


def extracted_text(record: Mapping[str, Any]) -> str:
    extracted = record.get("extracted_final_answer")
    return "—" if extracted is None else str(extracted)
