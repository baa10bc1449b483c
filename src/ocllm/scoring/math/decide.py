"""The math scorer: `decide_math(task, sample, policy) -> MathDecision`, pure but for the symbolic check's guarded
child process.

docs/scoring/math.md, "Math tasks: the order in which rules apply", states every rule (M1-M8) this package applies.
"""

from __future__ import annotations

import re
from typing import Literal, NamedTuple

from ocllm.models import Policy, Sample
from ocllm.scoring.evidence import bounded
from ocllm.scoring.math.decision import MathAmbiguity, MathCandidate, MathDecision, MathMethod, MathRule
from ocllm.scoring.math.equivalence import Verdict, compare, exact_number
from ocllm.scoring.math.fields import MathTask
from ocllm.scoring.math.normalise import dropped_unit, normalise
from ocllm.scoring.math.statements import (
    MAX_STATED_CHARS,
    MAX_STATEMENT_PLACES,
    TooManyStatements,
    find_statements,
    last_number,
    rank,
    statement_places,
)
from ocllm.scoring.regions import Field, Piece, split_regions

__all__ = ["MathCandidate", "MathDecision", "decide_math"]


_KIND_LABELS = {
    "boxed": "\\boxed{}",
    "final": "Final answer",
    "hashes": "####",
    "answer_is": "The answer is",
    "answer_label": "Answer:",
    "result_line": "result on the last line",
    "last_number": "last-number",
}


class _Pick(NamedTuple):
    statement: MathCandidate | None
    rule: MathRule
    ambiguity: MathAmbiguity
    reason: str
    credited: bool = True  # False: a statement decided, but the policy credits no answer (conflict_strict)


def decide_math(task: MathTask, sample: Sample, policy: Policy) -> MathDecision:
    """Score one sample of one math task under a policy."""
    gold_as_given = task.answer
    gold, gold_steps = (
        normalise(gold_as_given, dozens=counts_dozens(task.question)) if gold_as_given is not None else (None, [])
    )
    if not gold:
        gold = None  # an empty gold is no gold: nothing is compared with it
    if sample.error is not None:
        return _decision(task, sample, gold, gold_steps, source="none",
                         pick=_Pick(None, "request_error", "none", f"the request failed: {sample.error}"),
                         candidates=[], reasoning_statements=0, error=sample.error)  # fmt: skip

    regions = split_regions(sample.content, sample.reasoning, think_prefilled=policy.think_prefilled)
    # The bound on statements (rule M2): a region with more places where a statement may begin, or whose statements
    # span more characters, than any answer writes is not read further, so that a decision's cost is bounded.
    found = _read(regions.visible, "content", task.prompt, task.question)
    if isinstance(found, str):
        pick = _Pick(None, "too_many_statements", "too_many_statements",
                     f"the visible content was not read: {found}; not credited")  # fmt: skip
        return _decision(task, sample, gold, gold_steps, source="none", pick=pick, candidates=[],
                         reasoning_statements=0)  # fmt: skip
    in_reasoning = _read(regions.reasoning, "reasoning", task.prompt, task.question)
    reasoning_unread = in_reasoning if isinstance(in_reasoning, str) else None
    if isinstance(in_reasoning, str):
        in_reasoning = []
    truncated = sample.finish_reason == "length"
    if truncated:  # a statement running to where the output was cut may be cut itself: "The answer is 5" of 512
        _mark_cut(found + in_reasoning, {"content": sample.content or "", "reasoning": sample.reasoning or ""})
    visible = [c for c in found if not (c.withdrawn or c.example or "cut_off" in c.reading)]
    usable_reasoning = [c for c in in_reasoning if not (c.withdrawn or c.example or "cut_off" in c.reading)]

    source: Literal["content", "reasoning", "none"]
    salvage: MathCandidate | None = None
    if visible:
        source = "content"
        pick = _select(visible, policy, "visible content")
        if usable_reasoning:
            pick = pick._replace(reason=f"{pick.reason}; {len(usable_reasoning)} statement(s) in the reasoning ignored")
        elif reasoning_unread is not None:  # the visible answer decides whatever the reasoning holds (rule M1)
            pick = pick._replace(reason=f"{pick.reason}; the reasoning was not read: {reasoning_unread}")
    elif reasoning_unread is not None:
        # What the reasoning states would decide here (a fallback) or be named (an answer only in the reasoning).
        source = "none"
        pick = _Pick(None, "too_many_statements", "too_many_statements",
                     f"the reasoning was not read: {reasoning_unread}; not credited")  # fmt: skip
    elif usable_reasoning and policy.allow_reasoning_fallback:
        source = "reasoning"
        pick = _select(usable_reasoning, policy, "reasoning (fallback allowed)")
        if pick.rule == "final_statement":
            pick = pick._replace(rule="reasoning_fallback")
    elif not truncated and (salvage := last_number(regions.visible, "content", found)) is not None:
        source = "content"
        pick = _Pick(
            salvage,
            "last_number_salvage",
            "weak_salvage",
            f'visible content: no answer statement; the weak salvage takes the one number "{salvage.value}" '
            "of the last line",
        )
    elif usable_reasoning:
        source = "none"
        pick = _Pick(
            None,
            "answer_only_in_reasoning",
            "answer_only_in_reasoning",
            f"no statement in the visible content; the reasoning holds {len(usable_reasoning)} "
            "and reasoning fallback is off",
        )
    else:
        source = "none"
        if not regions.visible_text().strip():
            why = "the visible content is empty"
        elif found:
            why = f"no answer statement in the visible content ({len(found)} example(s) or taken back, ignored)"
        else:
            why = "no answer statement in the visible content"
        if truncated:
            why += "; the output was cut at the length limit, so no last number is salvaged"
        pick = _Pick(None, "no_statement", "no_extractable_answer", why)

    shown = bounded(found + ([salvage] if salvage is not None else []), pick.statement)
    candidates = shown + bounded(in_reasoning, pick.statement)
    left_out = len(found) + (salvage is not None) + len(in_reasoning) - len(candidates)
    return _decision(task, sample, gold, gold_steps, source=source, pick=pick, candidates=candidates,
                     reasoning_statements=len(usable_reasoning), left_out=left_out)  # fmt: skip


def _decision(
    task: MathTask,
    sample: Sample,
    gold: str | None,
    gold_steps: list[str],
    *,
    source: Literal["content", "reasoning", "none"],
    pick: _Pick,
    candidates: list[MathCandidate],
    reasoning_statements: int,
    left_out: int = 0,
    error: str | None = None,
) -> MathDecision:
    statement = pick.statement if pick.credited else None
    dozens = counts_dozens(task.question)
    answer, steps = normalise(statement.value, dozens=dozens) if statement is not None else (None, [])
    rule, ambiguity, reason = pick.rule, pick.ambiguity, pick.reason
    verdict = Verdict("none", "not_compared", "no answer to compare")
    if answer is not None and gold is not None:
        verdict = compare(answer, gold, task.tolerance)
        units = (
            (dropped_unit(statement.value, dozens), dropped_unit(task.answer or "", dozens))
            if statement is not None
            else (None, None)
        )
        if verdict.outcome == "equal" and None not in units and units[0] != units[1]:
            # The values agree once their units are dropped, but the units differ: 5 cm is not 5 m.
            verdict = Verdict("structure", "different", f"the units differ: {units[0]} against the gold's {units[1]}")
        reason = f"{reason}; {_verdict_sentence(verdict, gold)}"
        if verdict.outcome == "killed":
            rule, ambiguity = "symbolic_check_killed", "symbolic_check_killed"
        elif verdict.outcome == "undecided":
            rule, ambiguity = "equivalence_undecided", "equivalence_undecided"
    elif answer is not None:
        verdict = Verdict("none", "not_compared", "the task has no gold answer")
    method: MathMethod = pick.statement.method if pick.statement is not None else "none"
    return MathDecision(
        task_id=task.id,
        task_type=task.type,
        category=task.category,
        expected_answer=task.answer,
        extracted_final_answer=statement.value if statement is not None else None,
        extraction_source=source,
        extraction_method=method,
        ambiguity=ambiguity,
        correct=None if error is not None else verdict.outcome == "equal",
        rule=rule,
        reason=reason,
        candidates=candidates,
        decided_by=next((i for i, c in enumerate(candidates) if c is pick.statement), None),
        reasoning_statements=reasoning_statements,
        truncated=sample.finish_reason == "length",
        error=error,
        candidates_left_out=left_out,
        normalised_answer=answer,
        normalisation=steps,
        gold_normalised=gold,
        gold_normalisation=gold_steps,
        comparator=verdict.comparator,
        comparison=verdict.outcome,
        comparison_detail=verdict.detail,
        verifier=verdict.verifier,
    )


_DOZENS_ASKED = re.compile(r"\bhow[ \t]+many[ \t]+dozens?\b", re.IGNORECASE)


def counts_dozens(question: str | None) -> bool:
    """Whether the question asks how many dozens, so that an answer's "dozen(s)" is its unit (rule M4)."""
    return bool(question) and _DOZENS_ASKED.search(question or "") is not None


def _select(candidates: list[MathCandidate], policy: Policy, where: str) -> _Pick:
    """The strongest kind present; within it the last statement; conflicting values follow the policy."""
    strongest = min(rank(c) for c in candidates)
    group = [c for c in candidates if rank(c) == strongest]
    last = group[-1]
    said = f'{where}: the last {_KIND_LABELS[last.kind]} statement "{_short(last.text)}" states "{_short(last.value)}"'
    # Two statements state the same value when their normalised texts are equal or they are the same exact
    # number (0.5 and 1/2): one set of keys, so a megabyte of boxes stays linear.
    values = {_value_key(c.normalised) for c in group}
    if len(values) > 1:
        sequence = " then ".join(_short(c.value, 20) for c in group[-6:])
        disagree = f"{where}: {_KIND_LABELS[last.kind]} statements disagree ({sequence})"
        if policy.conflict_policy == "strict":
            return _Pick(last, "conflict_strict", "conflicting_final_answers",
                         f"{disagree}; policy strict credits none of them", credited=False)  # fmt: skip
        return _Pick(last, "conflict_last", "conflicting_final_answers", f"{disagree}; policy last takes the last")
    count = f"{len(group)} statements of this kind agree" if len(group) > 1 else "the only one of its kind"
    return _Pick(last, "final_statement", "none", f"{said} ({count})")


def _read(pieces: list[Piece], region: Field, prompt: str | None, question: str | None) -> list[MathCandidate] | str:
    """The region's statements, or why it was not read: past one of rule M2's bounds on statements."""
    if not pieces:
        return []  # no region (most answers have no reasoning): nothing to find, and the search's set-up skipped
    places = statement_places(pieces)
    if places > MAX_STATEMENT_PLACES:
        return (
            f"it holds {places:,} places where a statement may begin (\\boxed, \\fbox, final, answer, ####), more "
            f"than the bound of {MAX_STATEMENT_PLACES:,}"
        )
    try:
        return find_statements(pieces, region, prompt, question)
    except TooManyStatements as stopped:
        return (
            f"its markers and boxes span more than the bound of {MAX_STATED_CHARS:,} characters (reading stopped "
            f"at {stopped.read:,})"
        )


def _mark_cut(statements: list[MathCandidate], raw: dict[str, str]) -> None:
    """Rule M2d: in an output cut at the length limit, a statement other than a closed box whose value runs to
    the end of its field is read `cut_off` and never decides (a box's closing brace says its value is whole); so is
    every result line (M2e), since a cut output has no last line: the line read was only where the cut fell."""
    for c in statements:
        runs_to_the_cut = raw[c.field][c.end :].strip() in ("", ".")  # "12." may be 12.5 cut
        if c.kind == "result_line" or (c.kind != "boxed" and runs_to_the_cut):
            c.reading.append("cut_off")


def _value_key(normalised: str) -> object:
    number = exact_number(normalised)
    return normalised if number is None else number


def _verdict_sentence(verdict: Verdict, gold: str) -> str:
    outcome = {
        "equal": f"equal to the gold {_short(gold)!r}",
        "different": f"not the gold {_short(gold)!r}",
        "undecided": f"undecided against the gold {_short(gold)!r}, so not credited",
        "killed": f"the check against the gold {_short(gold)!r} was stopped at its limit, so not credited",
        "not_compared": "not compared",
    }[verdict.outcome]
    return f"{outcome} ({verdict.comparator}: {verdict.detail})"



def _short(text: str, limit: int = 60) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"
