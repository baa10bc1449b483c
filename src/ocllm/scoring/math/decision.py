"""The typed evidence of a math decision: the statements found, and the verdict with its normalisation chain
and the comparator that decided. docs/scoring/math.md names every value of the closed sets."""

from __future__ import annotations

from typing import Literal

import msgspec

from ocllm.models import Decision

# What a statement is, strongest first (docs/scoring/math.md, rule M2): the kind is what is ranked;
# last_number is the weak salvage of rule M7.
MathKind = Literal["boxed", "final", "hashes", "answer_is", "answer_label", "result_line", "last_number"]
# The extraction_method a decision records: the kind that decided, or the weak salvage, or none.
MathMethod = Literal[
    "boxed", "final", "hashes", "answer_is", "answer_label", "result_line", "last_number", "none"
]  # fmt: skip
MathRule = Literal[
    "final_statement", "conflict_last", "conflict_strict", "reasoning_fallback", "answer_only_in_reasoning",
    "no_statement", "last_number_salvage", "symbolic_check_killed", "equivalence_undecided", "request_error",
    "too_many_statements",
]  # fmt: skip
MathAmbiguity = Literal[
    "none", "conflicting_final_answers", "no_extractable_answer", "answer_only_in_reasoning", "weak_salvage",
    "symbolic_check_killed", "equivalence_undecided", "too_many_statements",
]  # fmt: skip
# Which comparison decided (math rule M5): in the order they are tried; "none" when nothing was compared.
# "screen": a value too large to evaluate, not sent to the symbolic check (M6); its outcome is "undecided".
Comparator = Literal["string", "number", "tolerance", "structure", "screen", "symbolic", "none"]
# "killed": the symbolic check reached its CPU-time (or memory) limit and was stopped; never correct.
Comparison = Literal["equal", "different", "undecided", "killed", "not_compared"]


class MathCandidate(msgspec.Struct, kw_only=True):
    """One answer statement found in a region, with where it stands in the raw field."""

    kind: MathKind
    method: MathMethod  # the extraction_method this statement gives when it decides
    region: Literal["content", "reasoning"]  # the visible answer region, or the reasoning region
    field: Literal["content", "reasoning"]  # the raw field that start/end index into
    start: int
    end: int
    text: str  # the statement as written: raw[start:end]
    value: str  # the answer it states, after the statement stripping of rule M3 (`\boxed{x = 5}`: "5")
    normalised: str  # `value` through the normalisation chain (rule M4): what conflicts are judged on
    withdrawn: bool = False  # taken back by the model ("\boxed{12}, but that is wrong"): never decides
    example: bool = False  # a format example or the prompt's placeholder echoed ("\boxed{answer}"): never decides
    # The reading rules that shaped this statement: delimiters, bold, punctuation, assignment, box_after_marker,
    # placeholder, format_example, prompt_echo, withdrawn.
    reading: list[str] = msgspec.field(default_factory=list)


class MathDecision(Decision, kw_only=True):
    """A math task's verdict. The base fields keep their meaning: `expected_answer` is the gold as given,
    `extracted_final_answer` the answer as stated (after rule M3's stripping), `decided_by` the index of the
    deciding statement in `candidates`."""

    extraction_method: MathMethod
    ambiguity: MathAmbiguity
    rule: MathRule
    candidates: list[MathCandidate] = msgspec.field(default_factory=list)
    normalised_answer: str | None = None
    normalisation: list[str] = msgspec.field(default_factory=list)  # the named steps applied, in order
    gold_normalised: str | None = None
    gold_normalisation: list[str] = msgspec.field(default_factory=list)
    comparator: Comparator = "none"
    comparison: Comparison = "not_compared"
    comparison_detail: str = ""
    verifier: str | None = None  # "math-verify 0.9.0" when the symbolic step ran, else None
