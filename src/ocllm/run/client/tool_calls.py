"""A streamed answer's tool-call fragments joined into whole calls."""

from __future__ import annotations

import json
from typing import Any


class ToolCallFragments:
    """A streamed answer's `delta.tool_calls`, joined into calls as OpenAI's clients join them: the fragments of
    one call share its `index`; the first carries its id, type and function name, the next ones pieces of
    `function.arguments`, which are concatenated in order. Servers that stray from this are read too:
    - a fragment without an index continues the call opened last, unless it brings a new id, or a new name once
      that call's arguments have begun: then it opens the next call (Gemini-compatible servers send no index);
    - a fragment whose id differs from the one its index holds opens a new call (some gateways send index 0 for
      every call);
    - a name sent whole on every fragment is kept once; a name sent in pieces is joined;
    - arguments sent as an object rather than a string are kept as its JSON text."""

    def __init__(self) -> None:
        self._calls: list[dict[str, Any]] = []
        self._by_index: dict[int, int] = {}  # the stream's index -> position in _calls

    def add(self, fragments: list[Any]) -> str:
        """Take one delta's fragments; return the text they added (for the time to the first token)."""
        added = []
        for fragment in fragments:
            if not isinstance(fragment, dict):
                continue
            call = self._call_for(fragment)
            if isinstance(fragment.get("id"), str) and fragment["id"]:
                call["id"] = fragment["id"]
            if isinstance(fragment.get("type"), str):
                call["type"] = fragment["type"]
            function = fragment.get("function")
            if not isinstance(function, dict):
                continue
            name = function.get("name")
            if isinstance(name, str) and name != call["function"].get("name"):
                call["function"]["name"] = call["function"].get("name", "") + name
                added.append(name)
            arguments = function.get("arguments")
            if isinstance(arguments, dict):
                arguments = json.dumps(arguments)
            if isinstance(arguments, str):
                call["function"]["arguments"] = call["function"].get("arguments", "") + arguments
                added.append(arguments)
        return "".join(added)

    def _call_for(self, fragment: dict[str, Any]) -> dict[str, Any]:
        index = fragment.get("index")
        fresh_id = fragment.get("id") if isinstance(fragment.get("id"), str) and fragment["id"] else None
        given = fragment.get("function")
        function: dict[str, Any] = given if isinstance(given, dict) else {}
        if isinstance(index, int) and not isinstance(index, bool):
            held = self._by_index.get(index)
            if held is not None and not (fresh_id and self._calls[held]["id"] not in (None, fresh_id)):
                return self._calls[held]
            self._by_index[index] = len(self._calls)
            return self._open()
        # No index: the last call goes on, unless this fragment starts another one: it brings another id, or a name
        # once the last call's arguments have begun (a call's name comes before its arguments; a piece of a name
        # sent before them is joined to it).
        last = self._calls[-1] if self._calls else None
        if last is None or (fresh_id and last["id"] not in (None, fresh_id)):
            return self._open()
        name = function.get("name")
        current = last["function"]
        if isinstance(name, str) and name and name != current.get("name") and current.get("arguments"):
            return self._open()
        return last

    def _open(self) -> dict[str, Any]:
        call: dict[str, Any] = {"id": None, "type": "function", "function": {}}
        self._calls.append(call)
        return call

    def calls(self) -> list[dict[str, Any]] | None:
        return list(self._calls) or None
