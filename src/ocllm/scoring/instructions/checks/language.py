"""IFEval's `language` instructions (filled in by issue 22)."""

from __future__ import annotations

from ocllm.scoring.instructions.checks.registry import Check

CHECKS: list[Check] = []
