"""How reports draw an instructions task: what it asked, how many instructions were followed, and each
instruction's verdict with what its check measured."""

from __future__ import annotations

from ocllm.scoring.task_type import Record


def expected_text(record: Record) -> str:
    instructions = record.get("instructions") or []
    return f"follow {len(instructions)} instruction(s)"


def extracted_text(record: Record) -> str:
    strict = record.get("instructions_followed") or []
    loose = record.get("instructions_followed_loose") or []
    if record.get("ambiguity") == "empty_answer":
        return "empty answer"
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
    if record.get("truncated"):
        lines.append(("truncated", "cut at max_tokens: checked as it stands"))
    return lines
