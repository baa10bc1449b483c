"""The simulator's answer to a tool_call task: which calls the model makes, and where the server puts them.

What the model does is drawn first, the same whatever the server does with it:
- a task that expects calls, drawn right: each expected call, every argument one of its acceptable values (an
  argument whose values include "" is sometimes left out), parallel calls in either order;
- drawn wrong: one of a wrong value (one argument given a value none of its acceptable ones equals, of the
  schema's type), a call to another of the tools offered, or no call (a sentence instead);
- an irrelevance task (`expected_calls: []`): drawn right, no call; drawn wrong, a call to one of the tools with
  arguments made from its schema;
- a task whose calls are unknown (or a request with tools the simulator has no task for): a call to one of the tools.
The request's `tool_choice` then has its say: "none" leaves no call, "required" (or an object naming a function)
makes one when there was none.

Where the calls go is the simulated server's setting `tool_parser` (`SimulatedTools.parser`), not a draw, so two
lanes that differ only in it get the same calls: "structured" puts them in `message.tool_calls` (finish_reason
"tool_calls"); "none" writes them as text in the content (finish_reason "stop"), as a server without a tool parser
passes on what the model wrote; "reasoning" writes them as text at the end of the reasoning field, as a reasoning
parser that takes the call for thinking does (content null). A request that offers no tools gets its calls as text
in the content too: no server parses calls it was not given tools for. Text is written in the format `tool_format`
names, or, "mixed", in one drawn per answer (always drawn, so the setting moves nothing else): Hermes/Qwen
`<tool_call>{"name", "arguments"}</tool_call>` (one block a call), a bare JSON object (a list of them for parallel
calls), Mistral `[TOOL_CALLS][{...}]`, Llama `<|python_tag|>{"name", "parameters"}` (parallel calls joined by "; "),
or pythonic `[get_weather(city="Paris")]`.

Every random choice comes from the `random.Random` handed in.
"""

from __future__ import annotations

import random
from typing import Any

from ocllm.scoring.schema_values import schema_value
from ocllm.scoring.simulated import (
    TOOL_TEXT_FORMATS,
    Call,
    SimulatedAnswer,
    SimulatedRequest,
    SimulatedTools,
    delivered,
)  # fmt: skip
from ocllm.scoring.tool_call.fields import ToolCallTask

# Strings a wrong value may take: no acceptable value in a suite is likely to be one of them.
_WRONG_WORDS = ("Atlantis", "Springfield", "El Dorado", "Nowhere", "unknown")


def simulated_answer(request: SimulatedRequest) -> SimulatedAnswer | None:
    """The room's hook (`TaskType.simulated_answer`): an answer to a tool_call task, and to a prompt the simulator
    does not know whose request offers tools (a model given tools mostly calls one); no answer to an unknown prompt
    offered none."""
    task = request.task
    if task is not None and not isinstance(task, ToolCallTask):
        return None  # another room's task: its own room answers it
    if task is None and not request.tools.offered:
        return None
    return tool_answer(request.rng, task, request.tools, correct=request.correct, reasoning=request.reasoning)


def tool_answer(
    rng: random.Random, task: ToolCallTask | None, setting: SimulatedTools, *, correct: bool, reasoning: bool
) -> SimulatedAnswer:
    """The answer to a tool request: calls right when `correct`, where right is known, delivered as `setting` says."""
    tools = [t for t in (setting.offered or (task.tools if task is not None else None) or ()) if _name(t)]
    expected = task.expected_calls if task is not None else None
    calls, why = _intent(rng, tools, expected, correct=correct)
    calls, why = _as_chosen(rng, tools, expected, setting.choice, calls, why)
    fmt = rng.choice(TOOL_TEXT_FORMATS) if setting.fmt == "mixed" else setting.fmt  # drawn even when unused
    thinking = _thinking(rng, task, calls, why) if reasoning else None
    if not calls:
        return SimulatedAnswer(_no_call_text(rng, why), thinking, None)
    return delivered(calls, setting, fmt, thinking)


# --- what the model means to call ---------------------------------------------------------------------------------


def _intent(
    rng: random.Random, tools: list[dict[str, Any]], expected: list[dict[str, Any]] | None, *, correct: bool
) -> tuple[list[Call], str]:
    if expected is None:  # nothing known to be right: call one of the tools, as a model given tools mostly does
        return ([_made_up_call(rng, rng.choice(tools))], "unknown") if tools else ([], "unknown")
    if not expected:  # irrelevance: no tool fits
        if correct or not tools:
            return [], "irrelevant"
        return [_made_up_call(rng, rng.choice(tools))], "irrelevant call"
    right = [_right_call(rng, call) for call in expected]
    if len(right) > 1:
        order = list(range(len(right)))
        rng.shuffle(order)  # parallel calls in any order: the scorer must match them either way
        right, expected = [right[i] for i in order], [expected[i] for i in order]
    if correct:
        return right, "right"
    names = {call.get("name") for call in expected}
    others = [tool for tool in tools if _name(tool) not in names]
    ways = ["wrong value"] if any(call.get("arguments") for call in expected) else []
    ways += ["another tool"] if others else []
    way = rng.choice([*ways, "no call"])
    if way == "no call":
        return [], way
    at = rng.randrange(len(right))
    if way == "another tool":
        right[at] = _made_up_call(rng, rng.choice(others))
        return right, way
    arguments = expected[at].get("arguments") or {}
    param = rng.choice(sorted(arguments))
    name, given = right[at]
    acceptable = arguments[param] if isinstance(arguments[param], list) else [arguments[param]]
    schema = _properties(_tool(tools, name)).get(param)
    right[at] = (name, {**given, param: _wrong_value(rng, acceptable, schema)})
    return right, way


def _as_chosen(
    rng: random.Random,
    tools: list[dict[str, Any]],
    expected: list[dict[str, Any]] | None,
    choice: str | dict[str, Any] | None,
    calls: list[Call],
    why: str,
) -> tuple[list[Call], str]:
    """The calls as the request's tool_choice allows them."""
    if choice == "none":
        return [], "forbidden"
    if calls or not tools or choice in (None, "auto"):
        return calls, why
    # "required", or an object naming a function: a call is made whatever the model would have done.
    function = choice.get("function") if isinstance(choice, dict) else None
    named = function.get("name") if isinstance(function, dict) else None
    wanted = named or (expected[0].get("name") if expected else None)
    tool = _tool(tools, wanted) if wanted else None
    return [_made_up_call(rng, tool if tool is not None else rng.choice(tools))], "forced"


def _right_call(rng: random.Random, expected: dict[str, Any]) -> Call:
    arguments: dict[str, Any] = {}
    for param, acceptable in (expected.get("arguments") or {}).items():
        values = acceptable if isinstance(acceptable, list) else [acceptable]
        given = [value for value in values if value != ""]
        if not given or ("" in values and rng.random() < 0.5):
            continue  # "" among the acceptable values: it may be left out
        arguments[param] = _drawn(rng, rng.choice(given))
    return str(expected.get("name")), arguments


def _drawn(rng: random.Random, acceptable: Any) -> Any:
    """A value that one acceptable value stands for: BFCL writes a dict argument's acceptable values as a dict of
    lists of acceptable values per key (and a list of such dicts likewise), so one option is drawn per key, down."""
    if isinstance(acceptable, dict):
        drawn = {}
        for key, options in acceptable.items():
            values = options if isinstance(options, list) else [options]
            given = [v for v in values if v != ""]
            if given and not ("" in values and rng.random() < 0.5):
                drawn[key] = rng.choice(given)
        return drawn
    if isinstance(acceptable, list) and acceptable and all(isinstance(item, dict) for item in acceptable):
        return [_drawn(rng, item) for item in acceptable]
    return acceptable


def _made_up_call(rng: random.Random, tool: dict[str, Any]) -> Call:
    """A call to `tool` with its required arguments (all of them, when none is required) made from its schema."""
    properties = _properties(tool)
    parameters = tool.get("function", {}).get("parameters")
    required = parameters.get("required") if isinstance(parameters, dict) else None
    names = [p for p in required if p in properties] if isinstance(required, list) else list(properties)
    return _name(tool), {param: schema_value(rng, properties[param]) for param in names}


def _wrong_value(rng: random.Random, acceptable: list[Any], schema: Any) -> Any:
    """A value of the parameter's kind that none of its acceptable values equals (strings case-folded)."""
    values = [value for value in acceptable if value != ""]
    schema = schema if isinstance(schema, dict) else {}
    kind = schema.get("type")
    like = values[0] if values else schema_value(rng, schema)
    candidates: list[Any]
    if isinstance(like, bool) or kind == "boolean":
        candidates = [True, False]
    elif isinstance(like, int | float) or kind in ("integer", "number"):
        numbers = [v for v in values if isinstance(v, int | float) and not isinstance(v, bool)]
        top = int(max(numbers, default=0)) + rng.randint(1, 9)  # beyond every acceptable number
        candidates = [top if kind == "integer" or isinstance(like, int) else float(top) + 0.5]
    elif isinstance(like, list):
        candidates = [[], [rng.choice(_WRONG_WORDS)]]
    elif isinstance(like, dict):
        candidates = [{}, {"value": rng.choice(_WRONG_WORDS)}]
    else:
        enum = schema.get("enum") if isinstance(schema.get("enum"), list) else []
        candidates = [value for value in enum if isinstance(value, str)] + list(_WRONG_WORDS)
    wrong = [value for value in candidates if not any(_equal(value, v) for v in values)]
    return rng.choice(wrong) if wrong else "ocllm-simulator wrong value"


def _equal(value: Any, acceptable: Any) -> bool:
    if isinstance(value, str) and isinstance(acceptable, str):
        return value.strip().casefold() == acceptable.strip().casefold()
    if isinstance(value, bool) or isinstance(acceptable, bool):
        return value is acceptable
    return bool(value == acceptable)


# --- words --------------------------------------------------------------------------------------------------------


def _thinking(rng: random.Random, task: ToolCallTask | None, calls: list[Call], why: str) -> str:
    # Prose only: the function is named, but nothing here reads as a call in any of the formats.
    asked = " ".join((task.question if task is not None else "").split()[:20])
    opening = f'The user asks: "{asked}".' if asked else "The user wants something done."
    if calls:
        names = " and ".join(dict.fromkeys(name for name, _ in calls))
        middle = rng.choice([f"The tool {names} fits this.", f"I can do this with {names}."])
        return f"{opening} {middle} I will call it with the values the question gives."
    if why in ("irrelevant", "forbidden"):
        return f"{opening} None of the tools I was given does this, so I will answer without calling one."
    return f"{opening} I am not sure which tool would do this; I will answer in words instead."


def _no_call_text(rng: random.Random, why: str) -> str:
    if why in ("irrelevant", "forbidden", "unknown"):
        return rng.choice(
            [
                "None of the available tools can help with that, so I will answer directly.",
                "I do not need a tool for this one. Here is my answer in plain words.",
            ]
        )
    return rng.choice(
        [
            "I do not have a way to look that up right now.",
            "I am not able to answer that without more information.",
        ]
    )


def _name(tool: Any) -> str:
    function = tool.get("function") if isinstance(tool, dict) else None
    name = function.get("name") if isinstance(function, dict) else None
    return name if isinstance(name, str) else ""


def _tool(tools: list[dict[str, Any]], name: str) -> dict[str, Any] | None:
    return next((tool for tool in tools if _name(tool) == name), None)


def _properties(tool: dict[str, Any] | None) -> dict[str, Any]:
    parameters = tool.get("function", {}).get("parameters") if tool is not None else None
    properties = parameters.get("properties") if isinstance(parameters, dict) else None
    return properties if isinstance(properties, dict) else {}
