"""IFEval's `combination` instructions: two different responses separated by `******`, and the prompt repeated
before the answer (docs/scoring/instructions.md, "Group B checks"). Both follow IFEval's semantics:
- two responses: the answer split on `******`; blank pieces are allowed only before the first separator or after
  the last; exactly two non-blank pieces must remain, and they must differ once stripped.
- repeat prompt: the answer, stripped, begins with the prompt to repeat, stripped, ignoring case.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ocllm.scoring.instructions.checks.registry import Check, Measured, Param

SEPARATOR = "******"


def _two_responses(text: str, _kwargs: Mapping[str, Any]) -> Measured:
    pieces = text.split(SEPARATOR)
    responses: list[str] = []
    for index, piece in enumerate(pieces):
        if piece.strip():
            responses.append(piece.strip())
        elif 0 < index < len(pieces) - 1:
            return Measured(False, f"response {index + 1} of {len(pieces)} between the {SEPARATOR} separators is empty")
    if len(responses) != 2:
        return Measured(False, f"responses: {len(responses)} (split on {SEPARATOR}), needed 2")
    if responses[0] == responses[1]:
        return Measured(False, f"responses: 2 (split on {SEPARATOR}), but they are the same")
    return Measured(True, f"responses: 2 (split on {SEPARATOR}), different")


def _repeat_prompt(text: str, kwargs: Mapping[str, Any]) -> Measured:
    prompt = kwargs["prompt_to_repeat"].strip()
    answer = text.strip()
    if not prompt:
        return Measured(False, "the prompt to repeat is blank: nothing to check it against")
    if answer.lower().startswith(prompt.lower()):
        return Measured(True, f"begins with the prompt ({len(prompt)} characters, case ignored)")
    # Where the answer leaves the prompt, so a reader sees the first difference without diffing by eye.
    at = next((i for i, (a, p) in enumerate(zip(answer.lower(), prompt.lower(), strict=False)) if a != p), None)
    if at is None:
        return Measured(False, f"the answer ({len(answer)} characters) ends inside the prompt ({len(prompt)})")
    theirs, ours = answer[at : at + 20], prompt[at : at + 20]
    return Measured(False, f"leaves the prompt at character {at}: {theirs!r} where the prompt has {ours!r}")


CHECKS = [
    Check("combination:two_responses", "two different responses separated by ******", (), _two_responses),
    Check("combination:repeat_prompt", "the prompt repeated before the answer",
          (Param("prompt_to_repeat", (str,)),), _repeat_prompt),
]  # fmt: skip
