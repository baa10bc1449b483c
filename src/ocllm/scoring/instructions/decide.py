"""Instructions tasks: each of IFEval's verifiable instructions checked against the visible answer, strictly and
by IFEval's loose rule (docs/scoring.md, "Instructions tasks", rules I1-I6)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ocllm.models import Policy, Sample, Task
from ocllm.scoring.instructions.checks import CHECKS, checked_kwargs
from ocllm.scoring.instructions.checks.registry import Measured, present
from ocllm.scoring.instructions.decision import InstructionsDecision, InstructionVerdict, LooseVariant
from ocllm.scoring.instructions.guarded_checks import GUARDED_CHARS, verdicts_guarded
from ocllm.scoring.regions import split_regions


def decide_instructions(task: Task, sample: Sample, policy: Policy) -> InstructionsDecision:
    # I1: the visible answer only. <think> blocks are removed; the reasoning field is never checked.
    visible = split_regions(sample.content, None, think_prefilled=policy.think_prefilled).visible_text()
    instructions = task.instructions or []
    truncated = sample.finish_reason == "length"
    base = {
        "task_id": task.id,
        "task_type": task.type,
        "category": task.category,
        "expected_answer": None,
        "extracted_final_answer": None,
        "truncated": truncated,
        "answer_characters": len(visible),
    }
    if not visible.strip():
        # I2: an empty answer follows nothing, and says so (not "failed every instruction" with no reason).
        verdicts = [_unchecked(item) for item in instructions]
        return InstructionsDecision(
            **base,
            extraction_source="none",
            extraction_method="none",
            ambiguity="empty_answer",
            correct=False,
            correct_loose=False,
            rule="empty_answer",
            reason="the visible answer is empty"
            + (" (the reasoning is not checked)" if sample.reasoning else "")
            + f": none of the {len(instructions)} instruction(s) is followed"
            + ("; the answer was cut at max_tokens (finish_reason: length)" if truncated else ""),
            instructions_followed=[False] * len(instructions),
            instructions_followed_loose=[False] * len(instructions),
            verdicts=verdicts,
        )
    if len(visible) > GUARDED_CHARS:
        # I6: a long answer is checked in the guarded child, under a CPU-time limit.
        checked = verdicts_guarded(instructions, visible)
        if checked.status != "done":
            killed = checked.status == "limit"
            said = f"{checked.detail} and were killed" if killed else f"could not run: {checked.detail}"
            return InstructionsDecision(
                **base, extraction_source="content", extraction_method="instructions", ambiguity="none",
                correct=False, correct_loose=False, rule="check_killed",
                reason=f"the instruction checks of this {len(visible):,}-character answer {said}: not decided, not "
                       "credited" + ("; the answer was cut at max_tokens (finish_reason: length)" if truncated else ""),
                instructions_followed=[False] * len(instructions),
                instructions_followed_loose=[False] * len(instructions),
            )  # fmt: skip
        verdicts: list[InstructionVerdict] = checked.value
    else:
        verdicts = [verdict(item, visible) for item in instructions]
    strict = [v.followed for v in verdicts]
    loose = [v.followed_loose for v in verdicts]
    correct = all(strict)
    reason = f"{sum(strict)} of {len(strict)} instruction(s) followed by the visible answer as it stands"
    if not correct:
        missed = [v.id for v in verdicts if not v.followed]
        more = f" and {len(missed) - 5} more" if len(missed) > 5 else ""
        reason += f"; not followed: {', '.join(missed[:5])}{more}"
    if truncated:
        # I4: checked as it stands, and flagged: a cut answer may have met a length or an ending it never reached.
        reason += "; the answer was cut at max_tokens (finish_reason: length) and is checked as it stands"
    return InstructionsDecision(
        **base,
        extraction_source="content",
        extraction_method="instructions",
        ambiguity="none",
        correct=correct,
        correct_loose=all(loose),
        rule="all_followed" if correct else "not_all_followed",
        reason=reason,
        instructions_followed=strict,
        instructions_followed_loose=loose,
        verdicts=verdicts,
    )


def _unchecked(item: dict[str, Any]) -> InstructionVerdict:
    """An instruction of an empty answer: not followed, and the verdict says why."""
    return InstructionVerdict(
        id=item["id"], kwargs=_kwargs(item), followed=False, measured="empty answer: nothing to check",
        followed_loose=False,
    )  # fmt: skip


def _kwargs(item: dict[str, Any]) -> dict[str, Any]:
    check = CHECKS.get(item["id"])
    kwargs = item.get("kwargs") or {}
    return present(check, kwargs) if check is not None else {k: v for k, v in kwargs.items() if v is not None}


def verdict(item: dict[str, Any], text: str) -> InstructionVerdict:
    """One instruction checked on the answer's text, strictly and by the loose rule."""
    check = CHECKS[item["id"]]  # known: suites and readers refuse an unknown id (I5)
    kwargs = checked_kwargs(check, item.get("kwargs") or {})
    strict = check.run(text, kwargs)
    variant, measured = _loose(check.run, text, kwargs, strict)
    return InstructionVerdict(
        id=check.id,
        kwargs=_kwargs(item),
        followed=strict.followed,
        measured=strict.measured,
        followed_loose=variant is not None,
        loose_variant=variant,
        loose_measured=None if variant in (None, "as_is") or measured is None else measured.measured,
    )


def loose_variants(text: str) -> list[tuple[LooseVariant, str]]:
    """I3, IFEval's loose rule, in IFEval's order: the answer as it stands and with every `*` removed (markdown
    emphasis a check may trip on), then without its first line, without its last line, without both, and those
    three with every `*` removed."""
    lines = text.split("\n")
    cut: list[tuple[LooseVariant, str]] = [
        ("no_first_line", "\n".join(lines[1:]).strip()),
        ("no_last_line", "\n".join(lines[:-1]).strip()),
        ("no_first_and_last_line", "\n".join(lines[1:-1]).strip()),
    ]
    starless: list[tuple[LooseVariant, str]] = [
        ("no_first_line_no_asterisks", cut[0][1].replace("*", "")),
        ("no_last_line_no_asterisks", cut[1][1].replace("*", "")),
        ("no_first_and_last_line_no_asterisks", cut[2][1].replace("*", "")),
    ]
    return [("as_is", text), ("as_is_no_asterisks", text.replace("*", "")), *cut, *starless]


def _loose(
    run: Callable[[str, Mapping[str, Any]], Measured], text: str, kwargs: dict[str, Any], strict: Measured
) -> tuple[LooseVariant | None, Measured | None]:
    """The first loose variant that follows the instruction, and what was measured on it."""
    if strict.followed:
        return "as_is", strict
    for name, variant in loose_variants(text)[1:]:
        if not variant.strip():
            continue  # an empty variant follows nothing (IFEval skips it)
        measured = run(variant, kwargs)
        if measured.followed:
            return name, measured
    return None, None
