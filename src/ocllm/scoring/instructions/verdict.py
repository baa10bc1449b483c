"""One instruction checked on an answer's text, strictly and by IFEval's loose rule
(docs/scoring/instructions.md, I2-I3): what `decide.py` runs in the worker for a short answer and
`guarded_checks.py` in the guarded child for a long one."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ocllm.scoring.instructions.checks import CHECKS, checked_kwargs
from ocllm.scoring.instructions.checks.registry import Measured, present
from ocllm.scoring.instructions.decision import InstructionVerdict, LooseVariant


def unchecked(item: dict[str, Any]) -> InstructionVerdict:
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
