"""The MCQ final-answer policy: statements found in the regions -> one Decision."""

from __future__ import annotations

import re
from typing import Literal, NamedTuple

from ocllm.models import Candidate, Decision, Policy, Sample, Task
from ocllm.scoring.candidates import rank
from ocllm.scoring.option_lines import find_bare_letter, find_option_claims, find_option_lines
from ocllm.scoring.regions import split_regions
from ocllm.scoring.statements import find_statements, task_context
from ocllm.scoring.withdrawal import withdraw


class _Pick(NamedTuple):
    letter: str | None
    ambiguity: str
    rule: str
    reason: str
    method: str
    hedged: bool = False
    statement: Candidate | None = None  # the statement that decided


def decide_mcq(task: Task, sample: Sample, policy: Policy) -> Decision:
    ctx = task_context(task.options or [], task.prompt)
    gold = (task.answer or "").upper() or None
    regions = split_regions(sample.content, sample.reasoning, think_prefilled=policy.think_prefilled)

    found = (
        find_statements(regions.visible, "content", ctx)
        + find_option_claims(regions.visible, "content", ctx)
        + find_option_lines(regions.visible, ctx)
    )
    found.sort(key=lambda c: c.start)  # visible pieces all come from `content`: reading order
    if not found:
        bare = find_bare_letter(regions.visible, ctx)
        found = [bare] if bare is not None else []
    in_reasoning = [c for c in find_statements(regions.reasoning, "reasoning", ctx) if not c.placeholder]
    withdraw(found, sample.content or "")
    _drop_invented_questions(found, sample.content or "")
    # Echoes of the prompt's placeholder ("The answer is (X)") and statements the model took back are
    # kept as evidence, and never decide.
    visible = [c for c in found if not _ignored(c)]
    echoes = [c for c in found if _ignored(c)]

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

    candidates = sorted(visible + echoes, key=lambda c: c.start) + in_reasoning
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
        candidates=candidates,
        decided_by=next((i for i, c in enumerate(candidates) if c is pick.statement), None),
        reasoning_statements=len(in_reasoning),
        truncated=sample.finish_reason == "length",
        hedged=source != "none" and pick.hedged,
    )


# A base model run without a stop sequence answers, then writes a new question of its own, with options,
# and answers that too. Statements after the first such invented question are not about this task.
_INVENTED_QUESTION = re.compile(
    r"\n[ \t]*(?:#+[ \t]*)?(?:\*\*)?(?:Question[ \t]*\d*[ \t]*(?:\*\*)?[:.]|Q\d*[ \t]*(?:\*\*)?:)", re.IGNORECASE
)
_ITS_OPTIONS = re.compile(r"\n[ \t]*(?:Options?[ \t]*:|\(?[A-J][.)][ \t]+\S)|\bOptions?[ \t]*:")


def _drop_invented_questions(found: list[Candidate], content: str) -> None:
    # Counted from the first statement that could decide: an echoed format instruction or a hedge is not
    # yet an answer, and a question restated before the answer is not an invention.
    starts = [c.start for c in found if c.field == "content" and not c.hedged and not c.placeholder]
    if not starts or ("uestion" not in content and "Q" not in content):
        return
    for m in _INVENTED_QUESTION.finditer(content, min(starts)):
        if _ITS_OPTIONS.search(content, m.end(), m.end() + 800):
            for c in found:
                if c.field == "content" and c.start >= m.start():
                    c.reading.append("after_invented_question")
            return


def _ignored(candidate: Candidate) -> bool:
    """Kept as evidence, never deciding: placeholder echoes, statements taken back, and statements
    about a question the model invented after answering."""
    return candidate.placeholder or candidate.withdrawn or "after_invented_question" in candidate.reading


def _select(candidates: list[Candidate], policy: Policy, where: str) -> _Pick:
    """Strongest kind present; within it the last statement; then the ambiguity classes."""
    strongest = min(rank(c) for c in candidates)
    group = [c for c in candidates if rank(c) == strongest]
    last = group[-1]
    said = f'{where}: the last {_kind_label(last)} statement "{_short(last.text)}"'
    if last.value is not None:
        said += f" (its value matches the text of option {'/'.join(last.letters)})"
    if last.reading:
        said += f" [read by: {', '.join(last.reading)}]"

    def pick(letter: str | None, ambiguity: str, rule: str, reason: str) -> _Pick:
        return _Pick(letter, ambiguity, rule, reason, last.method, last.hedged, last)

    if len(last.letters) > 1:
        return pick(None, "ambiguous_final_answer", "several_letters", f"{said} names several letters")
    if last.out_of_range:
        return pick(None, "out_of_range", "out_of_range", f"{said} names {last.letters[0]}, not an option")
    named = {tuple(c.letters) for c in group}
    if len(named) > 1:
        sequence = " then ".join("/".join(c.letters) for c in group)
        disagree = f"{where}: {_kind_label(last)} statements disagree ({sequence})"
        if policy.conflict_policy == "strict":
            return pick(None, "conflicting_final_answers", "conflict_strict", f"{disagree}; policy strict fails them")
        return pick(
            last.letter,
            "conflicting_final_answers",
            "conflict_last",
            f"{disagree}; policy last takes {last.letter}",
        )
    count = f"{len(group)} statements of this kind agree" if len(group) > 1 else "the only one of its kind"
    return pick(last.letter, "none", "final_statement", f"{said} names {last.letter} ({count})")


_KIND_LABELS = {
    "final_colon": "FINAL:",
    "final_answer": "Final answer",
    "answer": "Answer",
    "boxed": "\\boxed{}",
    "option_line": "option-line",
    "option_claim": "option-is-correct",
    "bare": "bare-letter",
}


def _kind_label(candidate: Candidate) -> str:
    label = _KIND_LABELS.get(candidate.kind, candidate.kind)
    return f"hedged {label}" if candidate.hedged else label


def _short(text: str, limit: int = 60) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"
