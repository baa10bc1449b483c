"""The typed evidence of an instructions decision: each instruction's verdict, what its check measured, and the
loose variant (IFEval's) that passed. docs/scoring/instructions.md names every value of the closed sets."""

from __future__ import annotations

from typing import Any, Literal

import msgspec

from ocllm.models import Decision

InstructionsRule = Literal["all_followed", "not_all_followed", "empty_answer", "check_killed", "request_error"]
InstructionsAmbiguity = Literal["none", "empty_answer"]
# IFEval's loose variants of an answer, in the order they are tried: the answer as it stands, without its first
# line, without its last line, without both; each also with every `*` removed.
LooseVariant = Literal[
    "as_is", "no_first_line", "no_last_line", "no_first_and_last_line",
    "as_is_no_asterisks", "no_first_line_no_asterisks", "no_last_line_no_asterisks",
    "no_first_and_last_line_no_asterisks",
]  # fmt: skip


class InstructionVerdict(msgspec.Struct, kw_only=True):
    """One instruction of the task, checked against the visible answer."""

    id: str  # IFEval's instruction id ("length_constraints:number_words")
    kwargs: dict[str, Any]  # its arguments, as the task gives them (nulls dropped)
    followed: bool  # strict: the visible answer as it stands
    measured: str  # what the strict check measured ("words: 312, needed at least 300")
    followed_loose: bool  # some loose variant follows it (IFEval's loose rule)
    loose_variant: LooseVariant | None = None  # the first variant that did (None: none did)
    loose_measured: str | None = None  # what was measured on that variant, when it is not the answer as it stands


class InstructionsDecision(Decision, kw_only=True):
    """An instructions task's verdict. `correct` is IFEval's strict prompt-level verdict (every instruction
    followed by the visible answer as it stands), `correct_loose` the loose one."""

    extraction_method: Literal["instructions", "none"]
    ambiguity: InstructionsAmbiguity
    rule: InstructionsRule
    correct_loose: bool | None = None
    instructions_followed: list[bool] = msgspec.field(default_factory=list)  # strict, in the task's order
    instructions_followed_loose: list[bool] = msgspec.field(default_factory=list)
    verdicts: list[InstructionVerdict] = msgspec.field(default_factory=list)
    answer_characters: int = 0  # the length of the visible answer checked (<think> blocks removed)
