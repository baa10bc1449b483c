"""What a json run's summary adds: how many answers held one JSON value, how many were valid against their
schema, and why the others were not (not JSON, schema violations, several blocks, empty)."""

from __future__ import annotations

from collections import Counter
from typing import Any

from ocllm.scoring.json_answer.decision import JsonDecision
from ocllm.scoring.json_answer.guarded_validation import VALIDATION_LIMIT_S


class JsonTally:
    def __init__(self) -> None:
        self.answers = self.parsed = self.with_schema = self.valid = 0
        self.rules: Counter[str] = Counter()
        self.fenced = self.prose_around = 0

    def add(self, decision: JsonDecision) -> None:
        self.answers += 1
        self.rules[decision.rule] += 1
        self.parsed += decision.parsed
        self.with_schema += decision.valid is not None
        self.valid += decision.valid is True
        self.fenced += decision.extraction_method == "fenced"
        self.prose_around += bool(decision.prose_outside)

    def figures(self) -> dict[str, Any]:
        return {
            "answers": self.answers,
            "parsed": self.parsed,
            "checked_against_schema": self.with_schema,
            "valid": self.valid,
            "parse_errors": self.rules["not_json"],
            "schema_failures": self.rules["schema_violation"],
            "several_blocks": self.rules["several_blocks"],
            "not_a_json_block": self.rules["not_a_json_block"],
            "empty_answers": self.rules["empty_answer"],
            "schema_unresolvable": self.rules["schema_unresolvable"],
            "schema_checks_killed": self.rules["schema_check_killed"],
            "fenced": self.fenced,
            "prose_around_block": self.prose_around,
        }

    def notices(self) -> list[str]:
        said: list[str] = []
        if self.rules["empty_answer"]:
            said.append(
                f"{self.rules['empty_answer']} json answer(s) were empty (no visible text after <think> blocks were "
                "removed): they hold no JSON value, and each decision says so (ambiguity empty_answer)"
            )
        if self.rules["several_blocks"]:
            said.append(
                f"{self.rules['several_blocks']} json answer(s) held several fenced blocks: none of them is "
                "credited (ambiguity several_blocks)"
            )
        if self.rules["schema_check_killed"]:
            said.append(
                f"{self.rules['schema_check_killed']} json answer(s) could not be checked: the schema check "
                f"reached its {VALIDATION_LIMIT_S:g} s CPU-time limit or could not run (not decided, not credited; "
                "counted apart as schema_checks_killed)"
            )
        return said
