"""How reports draw a json task: what it asked (a JSON value, against which schema), the value read, and the
evidence (the block read, the parse error, each schema violation)."""

from __future__ import annotations

import json

from ocllm.scoring.json_answer.decision import JsonBlock, JsonDecision
from ocllm.scoring.json_answer.fields import JsonTask
from ocllm.scoring.scored import Scored

_SHORT = 80

Json = Scored[JsonTask, JsonDecision]


def _short(text: str, limit: int = _SHORT) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def expected_text(scored: Json) -> str:
    schema = scored.task.schema if scored.task is not None else None
    if schema is None:
        return "one JSON value"
    return "one JSON value valid against " + _short(json.dumps(schema, ensure_ascii=False, separators=(",", ":")))


def extracted_text(scored: Json) -> str:
    # The rule and the answer as every record gives them (an input's `previous` too); the blocks are the decision's.
    rule = scored.record.get("rule")
    if rule == "empty_answer":
        return "empty answer"
    if rule == "several_blocks":
        return f"{len(scored.decision.fenced_blocks) if scored.decision is not None else 0} fenced blocks"
    if rule == "not_a_json_block":
        return "a fenced block not labelled json"
    if rule == "not_json":
        return "not JSON"
    answer = scored.record.get("extracted_final_answer")
    return "—" if answer is None else _short(str(answer))


def _block_text(block: JsonBlock) -> str:
    if block.kind == "bare":
        return f"the whole visible answer, content chars {block.start}-{block.end}"
    label = block.label or "no label"
    text = f"fenced ({label}), content chars {block.start}-{block.end}"
    return text if block.closed else text + ", never closed"


def evidence_lines(scored: Json) -> list[tuple[str, str]]:
    decision = scored.decision
    if decision is None:
        return []
    lines: list[tuple[str, str]] = []
    if decision.block is not None:
        text = _block_text(decision.block)
        if decision.prose_outside:
            text += f"; {decision.prose_outside} characters of prose around it (not read)"
        lines.append(("block", text))
    elif decision.fenced_blocks:
        lines.append(("blocks", "; ".join(_block_text(b) for b in decision.fenced_blocks)))
    error = decision.parse_error
    if error is not None:
        lines.append(("parse error", f"{error.message} at line {error.line}, column {error.column} (char "
                                     f"{error.offset}; content char {error.raw_offset})"))  # fmt: skip
    for violation in decision.violations:
        lines.append(("schema", f"{violation.path}: {violation.message}"))
    if decision.violations_left_out:
        lines.append(("schema", f"{decision.violations_left_out} more violation(s) not listed"))
    if decision.truncated:
        lines.append(("truncated", "cut at max_tokens: checked as it stands"))
    return lines
