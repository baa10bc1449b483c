"""Json tasks: the visible answer must hold one JSON value, bare or in one fenced block, valid against the task's
schema when it has one (docs/scoring/json.md, rules J1-J7)."""

from __future__ import annotations

import json
from typing import Any

from ocllm.models import Policy, Sample
from ocllm.scoring.json_answer.decision import JsonBlock, JsonDecision, JsonParseError
from ocllm.scoring.json_answer.extract import JSON_LABELS, Fence, fenced_blocks, line_and_column, parse, raw_offset
from ocllm.scoring.json_answer.fields import JsonTask
from ocllm.scoring.json_answer.guarded_validation import validate_guarded
from ocllm.scoring.json_schemas import checks as schemas
from ocllm.scoring.regions import split_regions

_CUT = "; the answer was cut at max_tokens (finish_reason: length) and is checked as it stands"


def decide_json(task: JsonTask, sample: Sample, policy: Policy) -> JsonDecision:
    # J1: the visible answer only. <think> blocks are removed; the reasoning field is never read.
    pieces = split_regions(sample.content, None, think_prefilled=policy.think_prefilled).visible
    visible = "".join(piece.text for piece in pieces)
    truncated = sample.finish_reason == "length"
    cut = _CUT if truncated else ""  # J7: a cut answer is checked as it stands, and flagged
    base: dict[str, Any] = {
        "task_id": task.id,
        "task_type": task.type,
        "category": task.category,
        "expected_answer": None,
        "truncated": truncated,
        "answer_characters": len(visible),
    }
    if not visible.strip():
        # J2: no visible text holds no JSON value, and says so (the reasoning is not read for one).
        said = " (the reasoning is not read)" if sample.reasoning else ""
        return _none(base, "empty_answer", "empty_answer", f"the visible answer is empty{said}: no JSON value" + cut)
    fences = fenced_blocks(visible)
    blocks = [_block(pieces, fence) for fence in fences]
    if len(fences) > 1:
        # J3: several fenced blocks: which one is the answer is a guess, so none is credited.
        return _none(
            base, "several_blocks", "several_blocks",
            f"{len(fences)} fenced blocks in the visible answer: which one is the answer is not said" + cut,
            fenced_blocks=blocks,
        )  # fmt: skip
    if fences and fences[0].label.lower() not in JSON_LABELS:
        return _none(
            base, "not_a_json_block", "none",
            f"the one fenced block is labelled {fences[0].label!r}, not json: it is not read as the answer" + cut,
            fenced_blocks=blocks,
        )  # fmt: skip
    if fences:
        fence = fences[0]
        start, end = fence.body_start, fence.body_end
        outside = visible[: fence.start] + visible[fence.end :]
        prose = sum(not ch.isspace() for ch in outside)
    else:
        start = len(visible) - len(visible.lstrip())
        end = len(visible.rstrip())
        prose = 0
    text = visible[start:end]
    block = blocks[0] if blocks else JsonBlock(kind="bare", start=raw_offset(pieces, start),
                                               end=raw_offset(pieces, end - 1) + 1)  # fmt: skip
    where = "the fenced block" if fences else "the visible answer"
    extra = {"block": block, "fenced_blocks": blocks, "prose_outside": prose, "extraction_method": block.kind}
    parsed = parse(text)
    if not parsed.ok:
        # J4: not JSON: the parse error, and where it stands in the text read and in the raw content.
        line, column = line_and_column(text, parsed.offset)
        error = JsonParseError(
            message=parsed.message, line=line, column=column, offset=parsed.offset,
            raw_offset=raw_offset(pieces, start + parsed.offset) if text else block.start,
        )  # fmt: skip
        return _none(
            base, "not_json", "none",
            f"{where} is not JSON: {parsed.message} at line {line}, column {column} (char {parsed.offset})" + cut,
            parse_error=error, **extra,
        )  # fmt: skip
    answer = json.dumps(parsed.value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    decided: dict[str, Any] = {**base, **extra, "extracted_final_answer": answer, "extraction_source": "content",
                               "ambiguity": "none", "parsed": True}  # fmt: skip
    if task.schema is None:
        return JsonDecision(**decided, correct=True, rule="parsed",
                            reason=f"{where} is one JSON value (the task has no schema)" + cut)  # fmt: skip
    # J5, J6: validated against the schema by its own draft, offline, in the guarded child (every schema: one without
    # patterns costs without bound too, by uniqueItems, enum or anyOf on a long array, or raises on a huge integer).
    draft = schemas.draft_of(schemas.validator_class(task.schema) or schemas.DEFAULT)
    checked = validate_guarded(task.schema, text)
    if checked.outcome == "unresolvable":
        return JsonDecision(**decided, correct=False, rule="schema_unresolvable", schema_draft=draft,
                            reason=f"the schema's reference does not resolve offline ({checked.detail}): the value "
                                   "was not checked; the schema is at fault, not the answer" + cut)  # fmt: skip
    if checked.outcome == "too_deep":
        # A recursive schema ($ref: "#") and a value nested hundreds deep: the validator recurses once per level.
        return JsonDecision(**decided, correct=False, rule="too_deep_to_validate", schema_draft=draft,
                            reason=f"{where} is JSON nested too deeply to validate against the schema: not "
                                   "credited" + cut)  # fmt: skip
    if checked.outcome in ("killed", "failed"):
        # Never correct: what the check would have said is not known. Counted apart (schema_checks_killed).
        return JsonDecision(**decided, correct=False, rule="schema_check_killed", schema_draft=draft,
                            reason=f"{where} is JSON, but {checked.detail}: not decided, not credited" + cut)
    found, left_out = checked.violations, checked.left_out
    if not found:
        return JsonDecision(**decided, correct=True, rule="valid", valid=True, schema_draft=draft,
                            reason=f"{where} is one JSON value, valid against the schema (draft {draft})" + cut)
    count = len(found) + left_out
    first = f"{found[0].path}: {found[0].message}"
    return JsonDecision(
        **decided, correct=False, rule="schema_violation", valid=False, schema_draft=draft, violations=found,
        violations_left_out=left_out,
        reason=f"{where} is JSON but breaks the schema (draft {draft}) in {count} place(s); the first: {first}" + cut,
    )  # fmt: skip


def _block(pieces: list[Any], fence: Fence) -> JsonBlock:
    start = raw_offset(pieces, fence.body_start)
    end = raw_offset(pieces, fence.body_end - 1) + 1 if fence.body_end > fence.body_start else start
    return JsonBlock(kind="fenced", start=start, end=end, label=fence.label, closed=fence.closed)


def _none(base: dict[str, Any], rule: str, ambiguity: str, reason: str, **evidence: Any) -> JsonDecision:
    """A decision with no JSON value read: never correct, nothing extracted (what "no answer" is for this type)."""
    evidence.setdefault("extraction_method", "none")
    return JsonDecision(
        **base, extracted_final_answer=None, extraction_source="none" if rule != "not_json" else "content",
        ambiguity=ambiguity, correct=False, rule=rule, reason=reason, **evidence,  # type: ignore[arg-type]
    )  # fmt: skip
