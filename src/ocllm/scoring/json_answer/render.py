"""How reports draw a json task: what it asked (a JSON value, against which schema), the value read, and the
evidence (the block read, the parse error, each schema violation)."""

from __future__ import annotations

import json
from typing import Any

from ocllm.scoring.task_type import Record

_SHORT = 80


def _short(text: str, limit: int = _SHORT) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def expected_text(record: Record) -> str:
    schema = record.get("schema")
    if not isinstance(schema, dict):
        return "one JSON value"
    return "one JSON value valid against " + _short(json.dumps(schema, ensure_ascii=False, separators=(",", ":")))


def extracted_text(record: Record) -> str:
    rule = record.get("rule")
    if rule == "empty_answer":
        return "empty answer"
    if rule == "several_blocks":
        return f"{len(record.get('fenced_blocks') or [])} fenced blocks"
    if rule == "not_a_json_block":
        return "a fenced block not labelled json"
    if rule == "not_json":
        return "not JSON"
    answer = record.get("extracted_final_answer")
    return "—" if answer is None else _short(str(answer))


def _block_text(block: dict[str, Any]) -> str:
    if block.get("kind") == "bare":
        return f"the whole visible answer, content chars {block.get('start')}-{block.get('end')}"
    label = block.get("label") or "no label"
    text = f"fenced ({label}), content chars {block.get('start')}-{block.get('end')}"
    return text if block.get("closed", True) else text + ", never closed"


def evidence_lines(record: Record) -> list[tuple[str, str]]:
    lines: list[tuple[str, str]] = []
    block = record.get("block")
    if isinstance(block, dict):
        text = _block_text(block)
        if record.get("prose_outside"):
            text += f"; {record['prose_outside']} characters of prose around it (not read)"
        lines.append(("block", text))
    elif record.get("fenced_blocks"):
        blocks = [b for b in record["fenced_blocks"] if isinstance(b, dict)]
        lines.append(("blocks", "; ".join(_block_text(b) for b in blocks)))
    error = record.get("parse_error")
    if isinstance(error, dict):
        lines.append(("parse error", f"{error.get('message')} at line {error.get('line')}, column "
                                     f"{error.get('column')} (char {error.get('offset')}; content char "
                                     f"{error.get('raw_offset')})"))  # fmt: skip
    for violation in record.get("violations") or []:
        if isinstance(violation, dict):
            lines.append(("schema", f"{violation.get('path')}: {violation.get('message')}"))
    if record.get("violations_left_out"):
        lines.append(("schema", f"{record['violations_left_out']} more violation(s) not listed"))
    if record.get("truncated"):
        lines.append(("truncated", "cut at max_tokens: checked as it stands"))
    return lines
