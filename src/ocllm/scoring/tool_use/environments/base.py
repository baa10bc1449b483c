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
        """Where the state differs from `other`'s (the gold's): the path of each differing value, in the state's order
        (`files/notes/todo.md`, `tickets[id=2]/assignee`), at most MAX_DIFFERENCES of them."""
        return differences(self.state(), other.state(), "")[:MAX_DIFFERENCES]

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

MAX_DIFFERENCES = 20
_MISSING = object()


def differences(mine: object, theirs: object, path: str) -> list[str]:
    """The paths at which two JSON values differ: into objects by key, into lists of objects with an `id` by id, into
    other lists by position; a value of another kind, or a list of another length, differs as a whole."""
    if mine == theirs:
        return []
    if isinstance(mine, dict) and isinstance(theirs, dict):
        keys = [*mine, *(key for key in theirs if key not in mine)]
        return [
            p for key in keys for p in differences(mine.get(key, _MISSING), theirs.get(key, _MISSING), _at(path, key))
        ]  # fmt: skip
    if isinstance(mine, list) and isinstance(theirs, list):
        if _by_id(mine) and _by_id(theirs):
            ours, gold = {item["id"]: item for item in mine}, {item["id"]: item for item in theirs}
            ids = [*ours, *(key for key in gold if key not in ours)]
            pairs = [(ours.get(key, _MISSING), gold.get(key, _MISSING), f"{path}[id={key}]") for key in ids]
            return [p for a, b, where in pairs for p in differences(a, b, where)]
        if len(mine) == len(theirs):
            pairs = [(a, b, f"{path}[{n}]") for n, (a, b) in enumerate(zip(mine, theirs, strict=True))]
            return [p for a, b, where in pairs for p in differences(a, b, where)]
    return [path or "(the whole state)"]


def _at(path: str, key: str) -> str:
    return f"{path}/{key}" if path else key


def _by_id(items: list[object]) -> bool:
    return all(isinstance(item, dict) and "id" in item for item in items)
