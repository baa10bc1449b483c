"""What an instructions run's summary adds: IFEval's four figures (prompt and instruction level, strict and loose)
and, per instruction kind, how often it was followed."""

from __future__ import annotations

from typing import Any

from ocllm.scoring.instructions.decision import InstructionsDecision
from ocllm.scoring.instructions.guarded_checks import GUARDED_CHARS, LIMIT_S


class InstructionsTally:
    def __init__(self) -> None:
        self.prompts = self.prompts_strict = self.prompts_loose = 0
        self.instructions = self.instructions_strict = self.instructions_loose = 0
        self.empty = 0
        self.killed = 0  # answers whose checks reached their CPU-time limit: no instruction verdict, counted apart
        self.by_kind: dict[str, list[int]] = {}  # id -> [given, followed strictly, followed loosely]

    def add(self, decision: InstructionsDecision) -> None:
        self.prompts += 1
        self.prompts_strict += decision.correct is True
        self.prompts_loose += decision.correct_loose is True
        self.empty += decision.ambiguity == "empty_answer"
        self.killed += decision.rule == "check_killed"
        for verdict in decision.verdicts:
            self.instructions += 1
            self.instructions_strict += verdict.followed
            self.instructions_loose += verdict.followed_loose
            counts = self.by_kind.setdefault(verdict.id, [0, 0, 0])
            counts[0] += 1
            counts[1] += verdict.followed
            counts[2] += verdict.followed_loose

    def figures(self) -> dict[str, Any]:
        def share(part: int, whole: int) -> float | None:
            return round(part / whole, 6) if whole else None

        return {
            "prompt_level_strict": share(self.prompts_strict, self.prompts),
            "prompt_level_loose": share(self.prompts_loose, self.prompts),
            "instruction_level_strict": share(self.instructions_strict, self.instructions),
            "instruction_level_loose": share(self.instructions_loose, self.instructions),
            "prompts": self.prompts,
            "instructions": self.instructions,
            "empty_answers": self.empty,
            "instruction_checks_killed": self.killed,
            "by_instruction": {
                kind: {"given": given, "followed": strict, "followed_loose": loose,
                       "strict": share(strict, given), "loose": share(loose, given)}
                for kind, (given, strict, loose) in sorted(self.by_kind.items())
            },
        }  # fmt: skip

    def notices(self) -> list[str]:
        said: list[str] = []
        if self.empty:
            said.append(
                f"{self.empty} instructions answer(s) were empty (no visible text after <think> blocks were removed): "
                "they follow no instruction, and each decision says so (ambiguity empty_answer)"
            )
        if self.killed:
            said.append(
                f"{self.killed} instructions answer(s) could not be checked: their checks reached the "
                f"{LIMIT_S:g} s CPU-time limit of an answer longer than {GUARDED_CHARS:,} characters, or could not "
                "run (not decided, not credited; counted apart as instruction_checks_killed, and in no "
                "instruction-level figure)"
            )
        return said
