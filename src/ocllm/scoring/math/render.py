"""How reports put a math record in words: the gold and the answer as stated, each one's normal form with the
steps that made it, and the comparator that decided."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def expected_text(record: Mapping[str, Any]) -> str:
    expected = record.get("expected_answer")
    return "—" if expected is None else str(expected)


def extracted_text(record: Mapping[str, Any]) -> str:
    extracted = record.get("extracted_final_answer")
    return "—" if extracted is None else str(extracted)


def _normal_form(value: object, steps: object) -> str:
    chain = " → ".join(str(s) for s in steps) if isinstance(steps, list) and steps else "as written"
    return f"{value} ({chain})"


def evidence_lines(record: Mapping[str, Any]) -> list[tuple[str, str]]:
    if record.get("error") is not None:
        return []
    lines = []
    if record.get("normalised_answer") is not None:
        lines.append(("answer, normalised", _normal_form(record["normalised_answer"], record.get("normalisation"))))
    if record.get("gold_normalised") is not None:
        lines.append(("gold, normalised", _normal_form(record["gold_normalised"], record.get("gold_normalisation"))))
    comparator, comparison = record.get("comparator"), record.get("comparison")
    if comparator and comparator != "none":
        detail = record.get("comparison_detail")
        lines.append(("compared", f"{comparator}: {comparison}" + (f" ({detail})" if detail else "")))
    if record.get("verifier"):
        lines.append(("verifier", str(record["verifier"])))
    return lines
