"""How reports draw an instructions task: what it asked, how many instructions were followed, and each
instruction's verdict with what its check measured."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ocllm.scoring.task_type import DetailTable, Record


def _pct(value: object) -> str:
    return f"{100 * value:.1f}%" if isinstance(value, int | float) and not isinstance(value, bool) else "—"


def detail_words(details: Mapping[str, Any]) -> str:
    """IFEval's four figures in one line, as its papers report them."""
    said = (
        f"prompt level: strict {_pct(details.get('prompt_level_strict'))}, loose "
        f"{_pct(details.get('prompt_level_loose'))}; instruction level: strict "
        f"{_pct(details.get('instruction_level_strict'))}, loose {_pct(details.get('instruction_level_loose'))} "
        f"({details.get('instructions', 0)} instructions in {details.get('prompts', 0)} prompts)"
    )
    if details.get("empty_answers"):
        said += f"; {details['empty_answers']} empty answer(s), which follow nothing"
    if details.get("instruction_checks_killed"):
        said += f"; {details['instruction_checks_killed']} answer(s) whose checks were killed at their CPU-time limit"
    return said


def detail_tables(details: Mapping[str, Any]) -> list[DetailTable]:
    """Each instruction kind: how often it was given and followed, strictly and loosely."""
    kinds = details.get("by_instruction") or {}
    if not kinds:
        return []
    rows = [
        [kind, str(f.get("given", 0)), f"{f.get('followed', 0)} ({_pct(f.get('strict'))})",
         f"{f.get('followed_loose', 0)} ({_pct(f.get('loose'))})"]
        for kind, f in sorted(kinds.items())
        if isinstance(f, Mapping)
    ]  # fmt: skip
    header = ["instruction", "given", "followed (strict)", "followed (loose)"]
    return [DetailTable("Instructions by kind", header, rows)]


def expected_text(record: Record) -> str:
    instructions = record.get("instructions") or []
    return f"follow {len(instructions)} instruction(s)"


def extracted_text(record: Record) -> str:
    strict = record.get("instructions_followed") or []
    loose = record.get("instructions_followed_loose") or []
    if record.get("ambiguity") == "empty_answer":
        return "empty answer"
    if record.get("rule") == "check_killed":
        return "not checked: the checks reached their CPU-time limit"
    if not strict:
        return "—"
    return f"{sum(map(bool, strict))} of {len(strict)} followed (loose: {sum(map(bool, loose))})"


def evidence_lines(record: Record) -> list[tuple[str, str]]:
    lines: list[tuple[str, str]] = []
    for verdict in record.get("verdicts") or []:
        if not isinstance(verdict, dict):
            continue
        said = "followed" if verdict.get("followed") else "not followed"
        text = f"{said}: {verdict.get('measured')}"
        if not verdict.get("followed"):
            variant = verdict.get("loose_variant")
            if variant:
                text += f"; loose: followed with {str(variant).replace('_', ' ')} ({verdict.get('loose_measured')})"
            else:
                text += "; loose: not followed either"
        kwargs = verdict.get("kwargs") or {}
        args = ", ".join(f"{k}={v!r}" for k, v in kwargs.items())
        lines.append((f"{verdict.get('id')}" + (f" ({args})" if args else ""), text))
    if record.get("rule") == "check_killed":
        lines.append(("checks killed", str(record.get("reason"))))
    if record.get("truncated"):
        lines.append(("truncated", "cut at max_tokens: checked as it stands"))
    return lines
