"""Instructions tasks: each of IFEval's verifiable instructions checked against the visible answer, strictly and
by IFEval's loose rule (docs/scoring/instructions.md, rules I1-I6)."""

from __future__ import annotations

from typing import Any

from ocllm.models import Policy, Sample
from ocllm.scoring.instructions.decision import InstructionsDecision, InstructionVerdict
from ocllm.scoring.instructions.fields import InstructionsTask
from ocllm.scoring.instructions.guarded_checks import GUARDED_CHARS, verdicts_guarded
from ocllm.scoring.instructions.verdict import loose_variants, unchecked, verdict
from ocllm.scoring.regions import split_regions

__all__ = ["decide_instructions", "loose_variants", "verdict"]


def decide_instructions(task: InstructionsTask, sample: Sample, policy: Policy) -> InstructionsDecision:
    # I1: the visible answer only. <think> blocks are removed; the reasoning field is never checked.
    visible = split_regions(sample.content, None, think_prefilled=policy.think_prefilled).visible_text()
    instructions = task.instructions or []
    truncated = sample.finish_reason == "length"
    base: dict[str, Any] = {
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
        verdicts: list[InstructionVerdict] = [unchecked(item) for item in instructions]
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
        verdicts = checked.value  # done: the child's list of InstructionVerdicts
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
