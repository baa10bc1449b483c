"""The instruction checks of a long answer run in the guarded child (`scoring/guarded.py`), limited by the CPU time
they used (docs/scoring/instructions.md, rule I6).

Every check reads the whole answer, and IFEval's loose rule reads it up to eight times (`loose_variants`), so a
decision costs by the answer's length times its instructions: 13 instructions on a 5 MB answer took 14 s of CPU,
20 of the costliest (`change_case:english_capital`) about 90 s. An answer of at most GUARDED_CHARS characters is
checked in the worker (at most about a second, every instruction at the bound on a task's count); a longer one in
the child, stopped once it has used LIMIT_S of CPU time: the decision is then rule `check_killed`, never correct,
counted apart (`instruction_checks_killed`).
"""

from __future__ import annotations

from typing import Any

from ocllm.scoring.guarded import Limits, Result, Service

# Longer than any answer IFEval's prompts ask for (the longest asks for about 1,200 words, some 8,000 characters)
# and than a 12,000-token answer; at this length 20 instructions cost at most about a second in the worker.
GUARDED_CHARS = 50_000
# The CPU time the checks of one long answer may use: a 1 MB answer with 20 instructions is checked in about 8 s.
LIMIT_S = 10.0
STARTUP_LIMIT_S = 30.0

_service = Service(
    "instructions", startup=f"{__name__}:_start", startup_limits=Limits(cpu_s=STARTUP_LIMIT_S, stall_s=STARTUP_LIMIT_S)
)


def verdicts_guarded(instructions: list[dict[str, Any]], text: str, limit_s: float = LIMIT_S) -> Result:
    """`decide.verdict` of every instruction on `text`, run in the guarded child: a Result whose value, when
    `done`, is the list of InstructionVerdicts."""
    return _service.call(f"{__name__}:_verdicts_in_child", (instructions, text), Limits(cpu_s=limit_s))


# ---- in the child --------------------------------------------------------------------------------------------


def _start() -> str:
    """Import the checks (langdetect and its profiles among them) once, outside any call's limit."""
    from ocllm.scoring.instructions.checks.language import detect

    detect("warm up the language profiles")
    return "instructions"


def _verdicts_in_child(instructions: list[dict[str, Any]], text: str) -> list[Any]:
    from ocllm.scoring.instructions.verdict import verdict

    return [verdict(item, text) for item in instructions]
