"""A tool_use decision: the episode judged turn by turn, each failed turn with one cause (docs/scoring/tool_use.md)."""

from __future__ import annotations

from typing import Literal

import msgspec

from ocllm.models import Decision
from ocllm.scoring.text_calls import CallFormat
from ocllm.scoring.tool_use.episode import CallRun

# Why a turn failed, one cause a turn, the first that holds in this order (U5 in the docs).
TurnCause = Literal[
    "context_exceeded", "environment_limit", "bound_reached", "cut_off", "call_as_text", "answer_in_reasoning",
    "arguments_not_json", "schema_violation", "unknown_tool", "no_call", "wrong_call", "content_missing",
    "not_reached",
]  # fmt: skip
CAUSES: tuple[str, ...] = TurnCause.__args__  # type: ignore[attr-defined]
# What decided the episode (U6): right, the cause of its first failed turn, its end state, or an end before its turns
# were done; so that a comparison pairs episodes by what went wrong (run/compare's transitions).
ToolUseRule = Literal[
    "episode_right", "end_state_differs", "not_finished", "request_error",
    "context_exceeded", "environment_limit", "bound_reached", "cut_off", "call_as_text", "answer_in_reasoning",
    "arguments_not_json", "schema_violation", "unknown_tool", "no_call", "wrong_call", "content_missing",
    "not_reached",
]  # fmt: skip


class EpisodeBounds(msgspec.Struct, kw_only=True, frozen=True):
    """The lane's bounds on one episode (`episode_bounds`); completion_tokens 0: no bound on tokens."""

    requests: int = 30
    steps_per_turn: int = 10
    calls_per_request: int = 10
    completion_tokens: int = 0


class TurnCheck(msgspec.Struct, kw_only=True):
    """One user turn of the episode: its requests, the calls made (with what came of each), whether it passed (None:
    not checked: it expects nothing, or nothing of it is known), and, failed, its cause and what differed."""

    turn: int  # from 1
    requests: int = 0  # requests sent in this turn (0: the episode ended before it)
    calls: list[CallRun] = msgspec.field(default_factory=list)
    passed: bool | None = None
    cause: TurnCause | None = None
    differs: dict[str, list[str]] = msgspec.field(default_factory=dict)  # environment -> fields unlike the gold's
    missing_results: list[str] = msgspec.field(default_factory=list)  # gold results no call of the model gave
    missing_content: list[str] = msgspec.field(default_factory=list)  # texts the turn's answer did not contain
    text_calls: int = 0  # calls written as text in the turn's replies (never run)
    call_format: CallFormat | None = None  # the format of the first of them
    text_calls_in: Literal["content", "reasoning"] | None = None


class ToolUseDecision(Decision, kw_only=True):
    extraction_source: Literal["content", "reasoning", "none"]
    extraction_method: Literal["tool_calls", "none"]
    ambiguity: Literal["none"]
    rule: ToolUseRule
    turn_checks: list[TurnCheck] = msgspec.field(default_factory=list)
    turns_right: int = 0  # checked turns that passed: reported apart, never as accuracy
    turns_checked: int = 0
    episode_end: str | None = None  # why the episode ended (the room's word, run/conversation.py's "refused")
    end_state_differs: dict[str, list[str]] = msgspec.field(default_factory=dict)
    failed_turn: int | None = None  # the first failed turn (from 1)
    cause: TurnCause | None = None  # its cause
    calls_made: int = 0  # structured calls over the episode
    requests: int = 0
