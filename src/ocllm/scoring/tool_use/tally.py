"""What a tool_use run's summary adds: episodes right, turns right of those checked (never an accuracy), the failed
turns by cause (the first of each episode, and every one), how the episodes ended, the calls by what came of them,
the requests an episode took, and calls written as text by format (the advice about the server is made from them:
`text_calls`)."""

from __future__ import annotations

from collections import Counter
from typing import Any

from ocllm.scoring.task_type import TextCalls, text_calls_of
from ocllm.scoring.tool_use.decision import ToolUseDecision


class ToolUseTally:
    def __init__(self) -> None:
        self.episodes = self.correct = self.turns_right = self.turns_checked = self.requests = 0
        self.first_causes: Counter[str] = Counter()
        self.causes: Counter[str] = Counter()
        self.ends: Counter[str] = Counter()
        self.calls: Counter[str] = Counter()
        self.as_text = 0
        self.by_format: Counter[str] = Counter()
        self.by_where: Counter[str] = Counter()

    def add(self, decision: ToolUseDecision) -> None:
        self.episodes += 1
        self.correct += decision.correct is True
        self.turns_right += decision.turns_right
        self.turns_checked += decision.turns_checked
        self.requests += decision.requests
        self.ends[decision.episode_end or "none"] += 1
        if decision.cause is not None:
            self.first_causes[decision.cause] += 1
        wrote_text = None
        for check in decision.turn_checks:
            if check.cause is not None:
                self.causes[check.cause] += 1
            for run in check.calls:
                self.calls[run.status] += 1
            if check.text_calls and wrote_text is None:
                wrote_text = check
        if wrote_text is not None:
            self.as_text += 1
            self.by_format[str(wrote_text.call_format)] += 1
            self.by_where[str(wrote_text.text_calls_in)] += 1

    def figures(self) -> dict[str, Any]:
        return {
            "episodes": self.episodes,
            "correct": self.correct,
            "turns_right": self.turns_right,
            "turns_checked": self.turns_checked,
            "requests": self.requests,
            "first_failed_turn_by_cause": dict(self.first_causes.most_common()),
            "failed_turns_by_cause": dict(self.causes.most_common()),
            "episode_ends": dict(self.ends.most_common()),
            "calls_by_status": dict(self.calls.most_common()),
            "episodes_with_calls_as_text": self.as_text,
            "as_text_by_format": dict(sorted(self.by_format.items())),
            "as_text_by_where": dict(sorted(self.by_where.items())),
        }

    def notices(self) -> list[str]:
        said = []
        bounds = self.first_causes["bound_reached"]
        if bounds:
            said.append(
                f"{bounds} of {self.episodes} tool_use episode(s) ended at a bound of episode_bounds before they were "
                "done (each ended episode counts as wrong): raise the bound that ended them (docs/lanes.md) if the "
                "model was still making progress"
            )
        refused = self.first_causes["context_exceeded"]
        if refused:
            said.append(
                f"{refused} of {self.episodes} tool_use episode(s) ended when the server refused a request: the "
                "conversation outgrew the server's context (a larger context, a smaller max_tokens, or fewer tools "
                "and a shorter system prompt would let them go on)"
            )
        return said

    def text_calls(self) -> TextCalls | None:
        if not self.as_text:
            return None
        of = f"{self.episodes} tool_use episode(s)"
        return text_calls_of(self.as_text, of, self.by_format, self.by_where, "they were never run")
