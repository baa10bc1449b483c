"""OpenAI function tools as ocllm is given them: each `{"type": "function", "function": {"name", "description",
"parameters"}}` with a unique name and a JSON-Schema object of parameters, all of them together within the bound on
suites' schemas (docs/lanes.md, "Bounds on suites"). One check for every holder of tools: a task's own (the tool_call
room) and an agent's that a lane adds to every request (`extra_tools_file`, run/agent_context.py), so that a tool
refused in one is refused in the other. It is no room's own: the run side reads an agent's tools and never imports a
room."""

from __future__ import annotations

import functools
import json

from ocllm.scoring.json_schemas.bounds import size_problem
from ocllm.scoring.json_schemas.checks import schema_problem


def tools_problem(tools: list[object], holder: str = "the tools hold") -> str | None:
    """Why a list of tools cannot be sent and checked, if it cannot (None when every tool is an OpenAI function tool
    with its own name and parameters a JSON-Schema object). `holder` is the subject and verb of the size bound's
    sentence ("the task's tools hold")."""
    if (too_large := size_problem(tools, holder)) is not None:
        return too_large  # before each schema's check_schema, whose cost grows with it
    seen: set[str] = set()
    for number, tool in enumerate(tools, start=1):
        if not isinstance(tool, dict) or tool.get("type") != "function" or not isinstance(tool.get("function"), dict):
            return f'tool {number} is not {{"type": "function", "function": {{...}}}} (an OpenAI function tool)'
        function = tool["function"]
        name = function.get("name")
        if not isinstance(name, str) or not name:
            return f"tool {number} has no function name"
        if name in seen:
            return f"tool {number}: the name {name!r} is used twice"
        seen.add(name)
        parameters = function.get("parameters", {"type": "object", "properties": {}})
        if not isinstance(parameters, dict) or parameters.get("type", "object") not in ("object", "dict"):
            return f"tool {number} ({name}): parameters is not a JSON Schema object"
        properties = parameters.get("properties", {})
        if not isinstance(properties, dict) or not all(isinstance(v, dict) for v in properties.values()):
            return f"tool {number} ({name}): parameters.properties is not an object of schemas"
        required = parameters.get("required", [])
        if not isinstance(required, list) or not all(isinstance(r, str) for r in required):
            return f"tool {number} ({name}): parameters.required is not a list of names"
        unknown = [r for r in required if r not in properties]
        if unknown:
            return f"tool {number} ({name}): required parameter {unknown[0]!r} is not among its properties"
        # BFCL spells the parameters' own type "dict"; every schema inside must be JSON Schema ("strng" is not).
        problem = _parameters_problem(json.dumps({**parameters, "type": "object"}, sort_keys=True))
        if problem is not None:
            return f"tool {number} ({name}): parameters: {problem}"
    return None


@functools.lru_cache(maxsize=4096)
def _parameters_problem(parameters: str) -> str | None:
    """A tool's parameters checked once a process for each text: an imported suite's tasks (BFCL's 800) repeat the
    same few hundred tools, and a check against the meta-schema costs milliseconds."""
    return schema_problem(json.loads(parameters))


def tool_names(tools: list[dict[str, object]]) -> list[str]:
    """The names of checked tools, in their order."""
    names = []
    for tool in tools:
        function = tool.get("function")
        if isinstance(function, dict) and isinstance(function.get("name"), str):
            names.append(function["name"])
    return names
