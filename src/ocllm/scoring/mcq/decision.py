"""The typed evidence of an MCQ decision: the letter statements found, and the closed sets its rule, method and
ambiguity come from (docs/scoring/mcq.md, rule 7). Typed here so that a misspelt class fails where it is made, not in a
report that counts it under a new name."""

from __future__ import annotations

from typing import Literal

import msgspec

from ocllm.models import Decision

Ambiguity = Literal[
    "none", "conflicting_final_answers", "ambiguous_final_answer", "out_of_range", "no_extractable_answer",
    "answer_only_in_reasoning", "too_many_statements",
]  # fmt: skip
Rule = Literal[
    "final_statement", "conflict_last", "conflict_strict", "conflict_many", "several_letters", "out_of_range",
    "value_not_an_option", "letter_value_mismatch", "answers_other_questions", "no_statement",
    "answer_only_in_reasoning", "reasoning_fallback", "too_many_statements",
]  # fmt: skip
Method = Literal[
    "final_colon_letter", "final_answer_letter", "answer_letter", "boxed_letter", "option_claim", "option_line",
    "option_text", "stated_value", "bare_letter", "none",
]  # fmt: skip
Kind = Literal["final_colon", "final_answer", "answer", "boxed", "option_claim", "option_line", "bare"]


class Candidate(msgspec.Struct, kw_only=True):
    """One final-answer statement found in a region, with where it stands in the raw field."""

    letter: str | None  # the one letter named, or None when the statement names several
    letters: list[str]
    kind: Kind  # what is ranked (docs/scoring/mcq.md, rule 2)
    method: Method  # the extraction_method this statement gives when it decides
    region: Literal["content", "reasoning"]  # visible answer region, or reasoning region
    field: Literal["content", "reasoning"]  # the raw field that start/end index into
    start: int
    end: int
    text: str
    hedged: bool = False  # "the answer would be (A)": counts only where nothing firmer exists
    out_of_range: bool = False
    placeholder: bool = False  # an echo of the prompt's own placeholder ("The answer is (X)"): ignored
    withdrawn: bool = False  # taken back by the model ("..., but it is not the correct answer"): ignored
    value: str | None = None  # the stated value, when the letter came from matching an option's text
    # What the statement restates after its letter when that is not the letter's own option: "C. 533"
    # where C is 492 ("533, which is no option"). Such a statement names no single answer.
    contradiction: str | None = None
    # The reading rules of docs/scoring/mcq.md that shaped this statement: latex, box_after_marker,
    # option_text, stated_value, letter_value_mismatch, restates_letter, letter_follows, list_label,
    # several_option_lines, hedged, placeholder_echo, withdrawn, in_code_block, after_invented_question,
    # for_another_question.
    reading: list[str] = msgspec.field(default_factory=list)



class McqDecision(Decision, kw_only=True):
    """An MCQ task's verdict: `expected_answer` is the gold letter, `extracted_final_answer` the letter stated,
    `decided_by` the index of the deciding statement in `candidates`."""

    extraction_method: Method
    ambiguity: Ambiguity
    rule: Rule
    candidates: list[Candidate] = msgspec.field(default_factory=list)
    hedged: bool = False  # the deciding statement was hedged ("the answer is likely C")
    # The reading steps (decide.STEPS, docs/scoring/mcq.md "Reading steps") that marked any of its statements, in
    # the order they ran: why a statement that does not decide was set aside.
    reading_steps: list[str] = msgspec.field(default_factory=list)
