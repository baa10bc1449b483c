"""The typed evidence of a json decision: the block that was read, the parse error and where it stands, or each
schema violation with its path. docs/scoring/json.md names every value of the closed sets."""

from __future__ import annotations

from typing import Literal

import msgspec

from ocllm.models import Decision

# How the JSON text was found in the visible answer (rule J3): the whole answer, or its one fenced block.
JsonMethod = Literal["bare", "fenced", "none"]
JsonRule = Literal[
    "valid", "parsed", "not_json", "schema_violation", "several_blocks", "not_a_json_block", "empty_answer",
    "schema_unresolvable", "too_deep_to_validate", "schema_check_killed", "request_error",
]  # fmt: skip
JsonAmbiguity = Literal["none", "empty_answer", "several_blocks"]
# Violations kept in a decision; the rest are counted (violations_left_out), so the evidence says it is a selection.
MAX_VIOLATIONS = 20


class JsonBlock(msgspec.Struct, kw_only=True):
    """Where the JSON text that was read stands: `start`/`end` index into the raw content field."""

    kind: Literal["bare", "fenced"]
    start: int
    end: int
    label: str | None = None  # a fenced block's info string ("json", "" when none); None for a bare answer
    closed: bool = True  # False: a fence opened and never closed (the block runs to the end of the answer)


class JsonParseError(msgspec.Struct, kw_only=True):
    """Why the text read is not JSON, as Python's json module says it, and where: `line` and `column` (from 1) and
    `offset` (from 0) in the JSON text read (the block's body, or the bare answer without its surrounding
    whitespace); `raw_offset` the same character in the raw content field."""

    message: str
    line: int
    column: int
    offset: int
    raw_offset: int


class SchemaViolation(msgspec.Struct, kw_only=True):
    """One way the value breaks the schema: where in the value (a JSON path, `$.items[2].price`), the validator's
    message, the keyword that failed and where that keyword stands in the schema."""

    path: str
    message: str
    keyword: str
    schema_path: str


class JsonDecision(Decision, kw_only=True):
    """A json task's verdict. `correct`: the visible answer holds one JSON value, valid against the task's schema
    when it has one. `extracted_final_answer` is that value in a canonical form (compact, keys sorted), so two
    writings of one value are one answer; None when no JSON value was read."""

    extraction_method: JsonMethod
    ambiguity: JsonAmbiguity
    rule: JsonRule
    block: JsonBlock | None = None  # the text read; None when none was (empty answer, several blocks)
    fenced_blocks: list[JsonBlock] = msgspec.field(default_factory=list)  # every fenced block found
    parsed: bool = False
    valid: bool | None = None  # against the schema; None when there is none or nothing parsed
    schema_draft: str | None = None  # the JSON Schema draft the value was checked by ("2020-12")
    parse_error: JsonParseError | None = None
    violations: list[SchemaViolation] = msgspec.field(default_factory=list)  # the first MAX_VIOLATIONS
    violations_left_out: int = 0
    prose_outside: int = 0  # characters other than whitespace outside the one fenced block read
    answer_characters: int = 0  # the length of the visible answer (<think> blocks removed)
