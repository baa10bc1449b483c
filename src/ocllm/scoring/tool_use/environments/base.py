"""What an environment is to the tool_use room: a deterministic class whose state a task gives, whose methods the
model's calls run, one instance per episode (and one for the gold calls beside it).

An environment never sees model text: the room hands it a call by name with arguments already decoded from JSON
and checked against the tool's schema (`calls.py`). What a call gives back is the text the model reads as the tool's
result; an error the environment reports (a file that does not exist) is a result like any other, which the model
may act on.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, ClassVar


class ToolError(Exception):
    """What an environment says when a call cannot be done as asked (no such file, a closed ticket): the model reads it
    as the call's result, `{"error": "..."}`."""


class Environment:
    """One environment kind. A subclass names itself (`kind`), offers its tools (`SCHEMAS`: OpenAI function tools, each
    a method of the same name; no other method is ever called), loads a task's state in `__init__` (checked:
    `state_problem`) and gives it back as JSON (`state`)."""

    kind: ClassVar[str]
    SCHEMAS: ClassVar[tuple[dict[str, Any], ...]]

    def tools(self) -> tuple[str, ...]:
        """The names of the methods calls may run: its SCHEMAS' (a kind whose tools depend on its state, BFCL's,
        says them per instance)."""
        return tuple(schema["function"]["name"] for schema in self.SCHEMAS)

    @classmethod
    def fresh_replay(cls) -> None:
        """Called at the start of every replay, before either side's instances are made: a kind whose code keeps
        state between instances (BFCL's module globals) starts it anew here."""

    @classmethod
    def missing(cls, state: Mapping[str, Any]) -> str | None:
        """What this machine lacks to run the state (BFCL's backends), in one line, or None."""
        return None

    def __init__(self, state: Mapping[str, Any]) -> None:
        raise NotImplementedError

    @classmethod
    def state_problem(cls, state: object) -> str | None:
        """What is wrong with a task's initial state for this environment, or None (the suite line is refused)."""
        raise NotImplementedError

    def state(self) -> dict[str, Any]:
        """The state as JSON values: what the end state is compared on, field by field, and what reports show."""
        raise NotImplementedError

    def differs(self, other: Environment) -> list[str]:
        """The fields of the state that differ from `other`'s (the gold's), in the state's order."""
        mine, theirs = self.state(), other.state()
        return [key for key in (*mine, *(k for k in theirs if k not in mine)) if mine.get(key) != theirs.get(key)]

    def call(self, name: str, arguments: Mapping[str, Any]) -> str:
        """Run one tool with its checked arguments; the result as the text the model reads."""
        if name not in self.tools():
            raise ValueError(f"{self.kind} has no tool {name!r}")  # the room dispatches only offered tools
        try:
            result = getattr(self, name)(**arguments)
        except ToolError as error:
            result = {"error": str(error)}
        return json.dumps(result, ensure_ascii=False)

    def failure(self, result: str) -> str | None:
        """What went wrong, when a call's result says it failed (`{"error": ...}`), else None."""
        if not result.startswith('{"error": '):
            return None
        try:
            said = json.loads(result)
        except ValueError:
            return None
        return str(said["error"]) if isinstance(said, dict) and "error" in said else None
