"""Every instruction IFEval defines (25 kinds), by id: each module holds the checks of one group of ids."""

from __future__ import annotations

from ocllm.scoring.instructions.checks import (
    case,
    combination,
    content,
    keywords,
    language,
    layout,
    length,
    punctuation,
    startend,
)
from ocllm.scoring.instructions.checks.registry import Check, Measured, checked_kwargs

__all__ = ["CHECKS", "Check", "Measured", "checked_kwargs"]

CHECKS: dict[str, Check] = {
    check.id: check
    for module in (keywords, language, length, content, layout, combination, startend, case, punctuation)
    for check in module.CHECKS
}
