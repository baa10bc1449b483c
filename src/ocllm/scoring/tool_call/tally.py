"""What a tool_call run's summary adds: answers whose calls came in `tool_calls`, calls the server's tool parser
dropped (written as text) by format and by where, and how many of those would have been correct. What to change on
the server is not said here: it depends on the server's kind and flags (`advice.py` says it, from
`text_calls`)."""

from __future__ import annotations

from collections import Counter
from typing import Any

from ocllm.scoring.task_type import TextCalls, text_calls_of
from ocllm.scoring.tool_call.decision import ToolCallDecision


class ToolCallTally:
    def __init__(self) -> None:
        self.answers = self.correct = self.structured = self.as_text = self.correct_if_parsed = 0
        self.calls_structured = self.calls_as_text = 0
        self.by_format: Counter[str] = Counter()
        self.by_where: Counter[str] = Counter()
        self.rules: Counter[str] = Counter()
        self.invalid_json = 0
        # Answers cut off at max_tokens with no call in tool_calls: under tool_choice "required", the server's
        # constraint did not take (advice.py, `constraint_did_not_take`).
        self.cut_without_call = 0

    def add(self, decision: ToolCallDecision) -> None:
        self.answers += 1
        self.correct += decision.correct is True
        self.rules[decision.rule] += 1
        source, calls = decision.call_source, decision.calls
        made = len(calls) + decision.calls_left_out
        self.cut_without_call += decision.truncated and source != "tool_calls"
        if source == "tool_calls":
            self.structured += 1
            self.calls_structured += made
            self.invalid_json += sum(c.problem == "invalid_arguments_json" for c in calls)
        elif source in ("content", "reasoning"):
            self.as_text += 1
            self.calls_as_text += made
            self.by_format[str(decision.call_format)] += 1
            self.by_where[source] += 1
            self.correct_if_parsed += decision.correct_if_parsed is True

    def figures(self) -> dict[str, Any]:
        return {
            "answers": self.answers,
            "correct": self.correct,
            "answers_with_structured_calls": self.structured,
            "calls_structured": self.calls_structured,
            "answers_with_calls_only_as_text": self.as_text,
            "calls_only_as_text": self.calls_as_text,
            "as_text_by_format": dict(sorted(self.by_format.items())),
            "as_text_by_where": dict(sorted(self.by_where.items())),
            "correct_if_parsed": self.correct_if_parsed,
            "no_call": self.rules["no_call"],
            "call_when_none_expected": self.rules["call_when_none_expected"],
            "invalid_arguments_json": self.invalid_json,
        }

    def notices(self) -> list[str]:
        return []  # the calls written as text are said with the advice about the server (`text_calls`)

    def text_calls(self) -> TextCalls | None:
        if not self.as_text:
            return None
        after = f"they count as no call ({self.correct_if_parsed} would have been correct)"
        return text_calls_of(self.as_text, f"{self.answers} tool_call answer(s)", self.by_format, self.by_where, after)
