"""How reports draw an instructions task: what it asked, how many instructions were followed, and each
instruction's verdict with what its check measured."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import msgspec

from ocllm.scoring.instructions.decision import InstructionsDecision
from ocllm.scoring.instructions.fields import InstructionsTask
from ocllm.scoring.scored import Scored
from ocllm.scoring.task_type import DetailTable

Instructions = Scored[InstructionsTask, InstructionsDecision]


def _pct(value: object) -> str:
    return f"{100 * value:.1f}%" if isinstance(value, int | float) and not isinstance(value, bool) else "—"


def detail_words(details: Mapping[str, Any]) -> str:
    """IFEval's four figures in one line, as its papers report them."""
    said = (
        f"prompt level: strict {_pct(details.get('prompt_level_strict'))}, loose "
        f"{_pct(details.get('prompt_level_loose'))}; instruction level: strict "
        f"{_pct(details.get('instruction_level_strict'))}, loose {_pct(details.get('instruction_level_loose'))} "
        f"({details.get('instructions', 0)} instructions in {details.get('prompts', 0)} prompts)"
    )
    if details.get("empty_answers"):
        said += f"; {details['empty_answers']} empty answer(s), which follow nothing"
    if details.get("instruction_checks_killed"):
        said += f"; {details['instruction_checks_killed']} answer(s) whose checks were killed at their CPU-time limit"
    return said


def detail_tables(details: Mapping[str, Any]) -> list[DetailTable]:
    """Each instruction kind: how often it was given and followed, strictly and loosely."""
    kinds = details.get("by_instruction") or {}
    if not kinds:
        return []
    rows = [
        [kind, str(f.get("given", 0)), f"{f.get('followed', 0)} ({_pct(f.get('strict'))})",
         f"{f.get('followed_loose', 0)} ({_pct(f.get('loose'))})"]
        for kind, f in sorted(kinds.items())
        if isinstance(f, Mapping)
    ]  # fmt: skip
    header = ["instruction", "given", "followed (strict)", "followed (loose)"]
    return [DetailTable("Instructions by kind", header, rows)]


def expected_text(scored: Instructions) -> str:
    instructions = (scored.task.instructions if scored.task is not None else None) or []
    return f"follow {len(instructions)} instruction(s)"


class Followed(msgspec.Struct, kw_only=True):
    """What a record of the type that is no decision of this room may say of each instruction: another tool's
    verdicts in the room's words (lm-eval's IFEval metrics in an input's `previous`: instructions/lm_eval.py), a
    verdict it did not give as null."""

    instructions_followed: list[bool | None] | None = None
    instructions_followed_loose: list[bool | None] | None = None


def extracted_text(scored: Instructions) -> str:
    # The rule and the ambiguity as every record gives them: an input's `previous` says an empty answer too.
    if scored.record.get("ambiguity") == "empty_answer":
        return "empty answer"
    if scored.record.get("rule") == "check_killed":
        return "not checked: the checks reached their CPU-time limit"
    said = scored.decision if scored.decision is not None else scored.recorded(Followed)
    strict = (said.instructions_followed if said is not None else None) or []
    if not strict:
        return "—"
    loose = (said.instructions_followed_loose if said is not None else None) or []
    return f"{sum(map(bool, strict))} of {len(strict)} followed (loose: {sum(map(bool, loose))})"


def evidence_lines(scored: Instructions) -> list[tuple[str, str]]:
    decision = scored.decision
    if decision is None:
        return []
    lines: list[tuple[str, str]] = []
    for verdict in decision.verdicts:
        said = "followed" if verdict.followed else "not followed"
        text = f"{said}: {verdict.measured}"
        if not verdict.followed:
            variant = verdict.loose_variant
            if variant:
                text += f"; loose: followed with {variant.replace('_', ' ')} ({verdict.loose_measured})"
            else:
                text += "; loose: not followed either"
        args = ", ".join(f"{k}={v!r}" for k, v in verdict.kwargs.items())
        lines.append((verdict.id + (f" ({args})" if args else ""), text))
    if decision.rule == "check_killed":
        lines.append(("checks killed", decision.reason))
    if decision.truncated:
        lines.append(("truncated", "cut at max_tokens: checked as it stands"))
    return lines
