"""The MCQ final-answer policy: statements found in the regions -> one Decision."""

from __future__ import annotations

from typing import Literal, NamedTuple

from ocllm.models import Candidate, Decision, Policy, Sample, Task
from ocllm.scoring.regions import split_regions
from ocllm.scoring.statements import find_bare_letter, find_statements, letters_in_range, rank


class _Pick(NamedTuple):
    letter: str | None
    ambiguity: str
    rule: str
    reason: str
    method: str


def decide_mcq(task: Task, sample: Sample, policy: Policy) -> Decision:
    options = task.options or []
    valid = letters_in_range(len(options))
    gold = (task.answer or "").upper() or None
    regions = split_regions(sample.content, sample.reasoning, think_prefilled=policy.think_prefilled)

    visible = find_statements(regions.visible, "content", valid)
    if not visible:
        bare = find_bare_letter(regions.visible, valid)
        if bare is not None:
            visible = [bare]
    in_reasoning = find_statements(regions.reasoning, "reasoning", valid)

    source: Literal["content", "reasoning", "none"]
    if visible:
        source = "content"
        pick = _select(visible, policy, "visible content")
        if in_reasoning:
            pick = pick._replace(reason=f"{pick.reason}; {len(in_reasoning)} statement(s) in the reasoning ignored")
    elif in_reasoning and policy.allow_reasoning_fallback:
        source = "reasoning"
        pick = _select(in_reasoning, policy, "reasoning (fallback allowed)")
        if pick.rule == "final_statement":
            pick = pick._replace(rule="reasoning_fallback")
    elif in_reasoning:
        source = "none"
        pick = _Pick(
            None,
            "answer_only_in_reasoning",
            "answer_only_in_reasoning",
            f"no statement in the visible content; the reasoning holds {len(in_reasoning)} "
            "and reasoning fallback is off",
            "none",
        )
    else:
        source = "none"
        empty = not regions.visible_text().strip()
        pick = _Pick(
            None,
            "no_extractable_answer",
            "no_statement",
            "the visible content is empty" if empty else "no final-answer statement in the visible content",
            "none",
        )

    return Decision(
        task_id=task.id,
        task_type=task.type,
        category=task.category,
        expected_answer=gold,
        extracted_final_answer=pick.letter,
        extraction_source=source,
        extraction_method=pick.method,
        ambiguity=pick.ambiguity,
        correct=pick.letter is not None and pick.letter == gold,
        rule=pick.rule,
        reason=pick.reason,
        candidates=visible + in_reasoning,
        reasoning_statements=len(in_reasoning),
        truncated=sample.finish_reason == "length",
    )


def _select(candidates: list[Candidate], policy: Policy, where: str) -> _Pick:
    """Strongest kind present; within it the last statement; then the ambiguity classes."""
    strongest = min(rank(c) for c in candidates)
    group = [c for c in candidates if rank(c) == strongest]
    last = group[-1]
    said = f'{where}: the last {_kind_label(last)} statement "{_short(last.text)}"'
    if len(last.letters) > 1:
        return _Pick(
            None,
            "ambiguous_final_answer",
            "several_letters",
            f"{said} names several letters ({', '.join(last.letters)})",
            last.method,
        )
    if last.out_of_range:
        return _Pick(
            None, "out_of_range", "out_of_range", f"{said} names {last.letters[0]}, not an option", last.method
        )
    named = {tuple(c.letters) for c in group}
    if len(named) > 1:
        sequence = " then ".join("/".join(c.letters) for c in group)
        if policy.conflict_policy == "strict":
            return _Pick(
                None,
                "conflicting_final_answers",
                "conflict_strict",
                f"{where}: statements of the strongest kind disagree ({sequence}); policy strict fails them",
                last.method,
            )
        return _Pick(
            last.letter,
            "conflicting_final_answers",
            "conflict_last",
            f"{where}: statements of the strongest kind disagree ({sequence}); policy last takes {last.letter}",
            last.method,
        )
    count = f"{len(group)} statements of this kind agree" if len(group) > 1 else "the only one of its kind"
    return _Pick(last.letter, "none", "final_statement", f"{said} names {last.letter} ({count})", last.method)


_KIND_LABELS = {
    "final_colon_letter": "FINAL:",
    "final_answer_letter": "Final answer",
    "answer_letter": "Answer",
    "boxed_letter": "\\boxed{}",
    "bare_letter": "bare-letter",
}


def _kind_label(candidate: Candidate) -> str:
    label = _KIND_LABELS.get(candidate.method, candidate.method)
    return f"hedged {label}" if candidate.hedged else label


def _short(text: str, limit: int = 60) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"
