"""What a tool_call run's summary adds: answers whose calls came in `tool_calls`, calls the server's tool parser
dropped (written as text) by format and by where, how many of those would have been correct, and a notice naming
the server flag that would take them."""

from __future__ import annotations

from collections import Counter
from typing import Any

from ocllm.models import Decision

# The format found -> vLLM's --tool-call-parser that reads it.
VLLM_PARSERS = {"hermes": "hermes", "mistral": "mistral", "llama_python_tag": "llama3_json", "json": "llama3_json",
                "pythonic": "pythonic"}  # fmt: skip


class ToolCallTally:
    def __init__(self) -> None:
        self.answers = self.correct = self.structured = self.as_text = self.correct_if_parsed = 0
        self.calls_structured = self.calls_as_text = 0
        self.by_format: Counter[str] = Counter()
        self.by_where: Counter[str] = Counter()
        self.rules: Counter[str] = Counter()
        self.invalid_json = 0

    def add(self, decision: Decision) -> None:
        if decision.correct is None:
            return  # a failed request: nothing was answered
        self.answers += 1
        self.correct += decision.correct is True
        self.rules[decision.rule] += 1
        source = getattr(decision, "call_source", "none")
        calls = getattr(decision, "calls", [])
        made = len(calls) + getattr(decision, "calls_left_out", 0)
        if source == "tool_calls":
            self.structured += 1
            self.calls_structured += made
            self.invalid_json += sum(c.problem == "invalid_arguments_json" for c in calls)
        elif source in ("content", "reasoning"):
            self.as_text += 1
            self.calls_as_text += made
            self.by_format[str(getattr(decision, "call_format", None))] += 1
            self.by_where[source] += 1
            self.correct_if_parsed += getattr(decision, "correct_if_parsed", None) is True

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
        if not self.as_text:
            return []
        formats = ", ".join(f"{fmt} ({n})" for fmt, n in sorted(self.by_format.items()))
        where = " and ".join(f"{n} in the {w}" for w, n in sorted(self.by_where.items()))
        parsers = sorted({VLLM_PARSERS.get(fmt, "hermes") for fmt in self.by_format})
        said = (
            f"{self.as_text} of {self.answers} tool_call answer(s) wrote their calls as text, not in tool_calls "
            f"({where}; format {formats}): the server's tool parser dropped them, so they count as no call "
            f"({self.correct_if_parsed} would have been correct). To have the server parse them: vLLM, start it with "
            f"--enable-auto-tool-choice --tool-call-parser {' or '.join(parsers)}"
        )
        if self.by_where["reasoning"]:
            said += (" and a reasoning parser that lets calls made while thinking through (or turn thinking off: a "
                     "call inside the reasoning never reaches the tool parser)")  # fmt: skip
        return [said + "; llama.cpp, start llama-server with --jinja (its chat template's tool parser)"]
