"""The simulator's answers to tool_call tasks (issue 23), over real HTTP on 127.0.0.1, read by ocllm's own client:
a structured call (`message.tool_calls`, or streamed fragments as vLLM streams them), a call written as text in the
content in each known format or inside the reasoning (the server setting `tool_parser`), right or wrong values, a
call to another tool, no call, and irrelevance.

Calls written as text are read back by the small readers in this file (JSON and `ast`), not by ocllm's tool_call
scorer; a call is judged right by `is_right` below, written from the issue's rules, not by the simulator's code.
"""

from __future__ import annotations

import ast
import asyncio
import json
import random
import re
import urllib.error
import urllib.request
from collections import Counter
from typing import Any

import pytest
from helpers import BACKSTOP_S

from ocllm.cli import main
from ocllm.errors import OcllmError
from ocllm.models import Sample, Task
from ocllm.run.client import ClientSettings, chat_completion, make_session
from ocllm.scoring.tool_call.fields import ToolCallTask
from ocllm.sim import SimConfig, SimServer

WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "The current weather in a city.",
        "parameters": {
            "type": "object",
            "properties": {
                "city": {"type": "string", "description": "The city's name."},
                "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
            },
            "required": ["city"],
        },
    },
}
TIME = {
    "type": "function",
    "function": {
        "name": "get_time",
        "description": "The local time in a time zone.",
        "parameters": {"type": "object", "properties": {"zone": {"type": "string"}}, "required": ["zone"]},
    },
}
AREA = {
    "type": "function",
    "function": {
        "name": "triangle_area",
        "description": "The area of a triangle.",
        "parameters": {
            "type": "object",
            "properties": {"base": {"type": "integer"}, "height": {"type": "number"}, "exact": {"type": "boolean"}},
            "required": ["base", "height"],
        },
    },
}


def tool_task(task_id: str, question: str, tools: list[dict[str, Any]], expected: list[dict[str, Any]]) -> Task:
    return ToolCallTask(id=task_id, question=question, category="tools", tools=tools, expected_calls=expected)


SIMPLE = tool_task(
    "simple",
    "What is the weather like in Paris right now?",
    [WEATHER, TIME],
    [{"name": "get_weather", "arguments": {"city": ["Paris", "Paris, France"], "unit": ["celsius", ""]}}],
)
PARALLEL = tool_task(
    "parallel",
    "What is the weather in Paris and in Rome?",
    [WEATHER, TIME],
    [
        {"name": "get_weather", "arguments": {"city": ["Paris"], "unit": [""]}},
        {"name": "get_weather", "arguments": {"city": ["Rome"], "unit": [""]}},
    ],
)
NUMBERS = tool_task(
    "numbers",
    "What is the area of a triangle with base 10 and height 5?",
    [AREA, TIME],
    [{"name": "triangle_area", "arguments": {"base": [10], "height": [5, 5.0], "exact": [True, ""]}}],
)
IRRELEVANT = tool_task("irrelevant", "Tell me a short joke about penguins.", [WEATHER, TIME], [])
TASKS = (SIMPLE, PARALLEL, NUMBERS, IRRELEVANT)
FORMATS = ("hermes", "json", "mistral", "llama", "pythonic")


# --- talking to the simulator ------------------------------------------------------------------------------------


def body(task: Task, model: str = "sim-baseline", **extra: Any) -> dict[str, Any]:
    return {
        "model": model,
        "messages": [{"role": "user", "content": task.question}],
        "tools": task.tools,
        "tool_choice": "auto",
        **extra,
    }


def ask(server: SimServer, request: dict[str, Any], *, stream: bool = False) -> Sample:
    settings = ClientSettings(base_url=server.base_url, stream=stream, timeout_s=10.0, max_attempts=1)

    async def go() -> Sample:
        async with make_session(2) as session:
            return await chat_completion(session, settings, "t", request, rng=random.Random(0))

    sample = asyncio.run(go())
    assert sample.error is None, sample.error
    return sample


def raw_chunks(server: SimServer, request: dict[str, Any]) -> list[dict[str, Any]]:
    data = json.dumps({**request, "stream": True}).encode()
    post = urllib.request.Request(
        server.base_url + "/chat/completions", data=data, headers={"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(post, timeout=BACKSTOP_S) as response:
        events = response.read().decode().split("\n\n")
    assert events[-2:] == ["data: [DONE]", ""]
    return [json.loads(event.removeprefix("data: ")) for event in events[:-2]]


def sim(*, accuracy: float = 0.85, seed: int = 0, **settings: Any) -> SimServer:
    models = {"sim-baseline": accuracy, "sim-reasoning": accuracy}
    return SimServer(SimConfig(models=models, tasks=TASKS, seed=seed, truncation_rate=0.0, **settings))


# --- reading calls back, and judging them (the rules, written here by hand) --------------------------------

Call = tuple[str, dict[str, Any]]


def structured(sample: Sample) -> list[Call]:
    calls = sample.tool_calls or []
    for call in calls:
        assert call["type"] == "function" and call["id"].startswith("chatcmpl-tool-")
    return [(call["function"]["name"], json.loads(call["function"]["arguments"])) for call in calls]


def _python_call(node: ast.expr) -> Call:
    assert isinstance(node, ast.Call) and not node.args
    return ast.unparse(node.func), {kw.arg: ast.literal_eval(kw.value) for kw in node.keywords if kw.arg}


def read_text(text: str, fmt: str) -> list[Call]:
    """The calls written as text in one of the known formats; fails the test when the text is not well formed."""
    text = text.strip()
    if fmt == "hermes":
        blocks = re.findall(r"<tool_call>\s*(.*?)\s*</tool_call>", text, flags=re.DOTALL)
        assert blocks and re.sub(r"<tool_call>.*?</tool_call>", "", text, flags=re.DOTALL).strip() == ""
        objects = [json.loads(block) for block in blocks]
        return [(o["name"], o["arguments"]) for o in objects]
    if fmt == "json":
        value = json.loads(text)
        objects = value if isinstance(value, list) else [value]
        return [(o["name"], o["arguments"]) for o in objects]
    if fmt == "mistral":
        assert text.startswith("[TOOL_CALLS]")
        return [(o["name"], o["arguments"]) for o in json.loads(text.removeprefix("[TOOL_CALLS]"))]
    if fmt == "llama":
        assert text.startswith("<|python_tag|>")
        objects = [json.loads(part) for part in text.removeprefix("<|python_tag|>").split("; ")]
        return [(o["name"], o["parameters"]) for o in objects]
    assert fmt == "pythonic"
    tree = ast.parse(text, mode="eval").body
    assert isinstance(tree, ast.List)
    return [_python_call(node) for node in tree.elts]


def which_format(text: str) -> str:
    text = text.strip()
    if text.startswith("<tool_call>"):
        return "hermes"
    if text.startswith("[TOOL_CALLS]"):
        return "mistral"
    if text.startswith("<|python_tag|>"):
        return "llama"
    if text.startswith("[") and "(" in text.split("{", 1)[0]:
        return "pythonic"
    return "json"


def _same(value: Any, acceptable: Any) -> bool:
    if isinstance(acceptable, str) and isinstance(value, str):
        return value.strip().casefold() == acceptable.strip().casefold()
    if isinstance(acceptable, bool) or isinstance(value, bool):
        return value is acceptable
    if isinstance(acceptable, int | float) and isinstance(value, int | float):
        return float(value) == float(acceptable)
    return bool(value == acceptable)


def is_right(call: Call, expected: dict[str, Any]) -> bool:
    name, arguments = call
    if name != expected["name"] or set(arguments) - set(expected["arguments"]):
        return False
    for param, acceptable in expected["arguments"].items():
        if param not in arguments:
            if "" not in acceptable:
                return False
        elif not any(_same(arguments[param], value) for value in acceptable if value != ""):
            return False
    return True


def all_right(calls: list[Call], task: Task) -> bool:
    expected = list(task.expected_calls or [])
    if len(calls) != len(expected):
        return False
    left = list(expected)
    for call in calls:
        match = next((e for e in left if is_right(call, e)), None)
        if match is None:
            return False
        left.remove(match)
    return True


# --- structured calls --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("task", [SIMPLE, PARALLEL, NUMBERS], ids=lambda t: t.id)
def test_a_right_answer_is_a_structured_call_with_acceptable_values(task: Task) -> None:
    with sim(accuracy=1.0) as server:
        for model in ("sim-baseline", "sim-reasoning"):
            sample = ask(server, body(task, model))
            assert sample.finish_reason == "tool_calls" and sample.content is None
            assert all_right(structured(sample), task), sample.tool_calls
            assert (sample.reasoning is not None) == (model == "sim-reasoning")
            assert sample.usage is not None and sample.usage["completion_tokens"] > 0


def test_parallel_calls_come_as_two_calls_in_either_order() -> None:
    orders = set()
    with sim(accuracy=1.0) as server:
        for seed in range(12):
            sample = ask(server, body(PARALLEL, seed=seed, temperature=0.7))
            calls = structured(sample)
            assert all_right(calls, PARALLEL)
            orders.add(tuple(arguments["city"] for _, arguments in calls))
            assert len({call["id"] for call in sample.tool_calls or []}) == 2
    assert orders == {("Paris", "Rome"), ("Rome", "Paris")}  # any order: the scorer must match them both ways


def test_an_optional_parameter_is_sometimes_left_out_when_its_values_allow_it() -> None:
    seen: Counter[str] = Counter()
    with sim(accuracy=1.0) as server:
        for seed in range(30):
            ((_, arguments),) = structured(ask(server, body(SIMPLE, seed=seed, temperature=0.7)))
            seen["unit given" if "unit" in arguments else "unit left out"] += 1
    assert seen["unit given"] > 0 and seen["unit left out"] > 0


@pytest.mark.parametrize("task", TASKS, ids=lambda t: t.id)
def test_streamed_calls_assemble_to_the_non_streamed_ones(task: Task) -> None:
    calls = 0
    for seed in range(6):  # a config seed draws each answer afresh (a request seed would keep the task's chance)
        with sim(accuracy=0.5, seed=seed) as server:
            for model in ("sim-baseline", "sim-reasoning"):
                request = body(task, model)
                whole, streamed = ask(server, request), ask(server, request, stream=True)
                assert streamed.tool_calls == whole.tool_calls
                assert streamed.finish_reason == whole.finish_reason
                assert streamed.reasoning == whole.reasoning
                assert (streamed.content or None) == whole.content  # a stream opens with an empty content delta
                calls += len(whole.tool_calls or [])
    assert calls > 0


def test_a_call_streams_as_vllm_streams_it() -> None:
    with sim(accuracy=1.0) as server:
        chunks = raw_chunks(server, body(PARALLEL))
    fragments = [f for c in chunks for choice in c["choices"] for f in choice["delta"].get("tool_calls") or []]
    by_index: dict[int, list[dict[str, Any]]] = {}
    for fragment in fragments:
        by_index.setdefault(fragment["index"], []).append(fragment)
    assert sorted(by_index) == [0, 1]
    for pieces in by_index.values():
        first, rest = pieces[0], pieces[1:]
        assert first["id"].startswith("chatcmpl-tool-") and first["type"] == "function"
        assert first["function"] == {"name": "get_weather"}  # the name first, no arguments yet
        assert rest and all(set(p) == {"index", "function"} and set(p["function"]) == {"arguments"} for p in rest)
        json.loads("".join(p["function"]["arguments"] for p in rest))
    assert len(by_index[0]) > 2  # the arguments come in pieces, not in one fragment
    assert [c["choices"][0]["finish_reason"] for c in chunks if c["choices"]][-1] == "tool_calls"


# --- calls written as text: in the content (no tool parser), inside the reasoning ---------------------------------


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("task", [SIMPLE, PARALLEL, NUMBERS], ids=lambda t: t.id)
def test_without_a_tool_parser_the_call_is_text_in_the_content_in_each_format(fmt: str, task: Task) -> None:
    with sim(accuracy=1.0, tool_parser="none", tool_format=fmt) as server:
        for model in ("sim-baseline", "sim-reasoning"):
            sample = ask(server, body(task, model))
            assert sample.tool_calls is None and sample.finish_reason == "stop"
            assert sample.content is not None and which_format(sample.content) == fmt
            assert all_right(read_text(sample.content, fmt), task), sample.content
            assert ask(server, body(task, model), stream=True).content == sample.content


def test_mixed_formats_draw_every_format() -> None:
    seen: Counter[str] = Counter()
    with sim(accuracy=1.0, tool_parser="none") as server:
        for seed in range(40):
            sample = ask(server, body(NUMBERS, seed=seed, temperature=0.7))
            assert sample.content is not None
            fmt = which_format(sample.content)
            assert all_right(read_text(sample.content, fmt), NUMBERS)
            seen[fmt] += 1
    assert set(seen) == set(FORMATS)


@pytest.mark.parametrize("model", ["sim-baseline", "sim-reasoning"])
def test_with_tool_parser_reasoning_the_call_is_text_inside_the_reasoning(model: str) -> None:
    # vLLM's reasoning parser taking the call for thinking, even with thinking off (vLLM issues #39056, #19017).
    with sim(accuracy=1.0, tool_parser="reasoning", tool_format="hermes") as server:
        sample = ask(server, body(SIMPLE, model))
        streamed = ask(server, body(SIMPLE, model), stream=True)
    assert sample.tool_calls is None and sample.content is None and sample.finish_reason == "stop"
    assert sample.reasoning is not None
    call_text = sample.reasoning[sample.reasoning.index("<tool_call>") :]
    assert all_right(read_text(call_text, "hermes"), SIMPLE)
    if model == "sim-reasoning":  # the thinking comes first, then the call
        assert not sample.reasoning.startswith("<tool_call>")
    else:
        assert sample.reasoning.startswith("<tool_call>")
    assert (streamed.reasoning, streamed.tool_calls) == (sample.reasoning, None)


def test_the_tool_parser_setting_moves_the_same_calls_between_fields() -> None:
    # A lane that changes only this server setting: every call the model makes is the same; it is structured in one,
    # text in the content in the other, text in the reasoning in the third.
    moved = 0
    for task in TASKS:
        for seed in range(10):
            answers = {}
            for parser in ("structured", "none", "reasoning"):
                with sim(accuracy=0.6, seed=seed, tool_parser=parser) as server:
                    answers[parser] = ask(server, body(task, "sim-reasoning"))
            calls = structured(answers["structured"])
            if not calls:  # no call made: all three say the same words
                texts = {(a.content, a.tool_calls) for a in answers.values()}
                assert len(texts) == 1 and answers["none"].tool_calls is None
                continue
            content = answers["none"].content or ""
            assert answers["none"].tool_calls is None
            assert read_text(content, which_format(content)) == calls
            reasoning = answers["reasoning"].reasoning or ""
            thinking = answers["structured"].reasoning or ""
            assert reasoning.startswith(thinking) and answers["reasoning"].tool_calls is None
            assert read_text(reasoning[len(thinking) :], which_format(content)) == calls
            moved += 1
    assert moved > 10


def test_a_request_without_tools_gets_its_call_as_text() -> None:
    # The lane sent no tools (they were in the prompt, say): no server parses a call it was not given tools for.
    request = body(SIMPLE)
    del request["tools"], request["tool_choice"]
    with sim(accuracy=1.0, tool_format="pythonic") as server:
        sample = ask(server, request)
    assert sample.tool_calls is None and sample.content is not None
    assert all_right(read_text(sample.content, "pythonic"), SIMPLE)


# --- wrong answers and irrelevance -------------------------------------------------------------------------------


def test_a_wrong_answer_is_a_wrong_value_another_tool_or_no_call() -> None:
    kinds: Counter[str] = Counter()
    with sim(accuracy=0.0) as server:
        for task in (SIMPLE, PARALLEL, NUMBERS):
            for seed in range(15):
                sample = ask(server, body(task, seed=seed, temperature=0.7))
                calls = structured(sample)
                assert not all_right(calls, task)
                expected_names = {e["name"] for e in task.expected_calls or []}
                if not calls:
                    assert sample.content and sample.finish_reason == "stop"
                    kinds["no call"] += 1
                elif any(name not in expected_names for name, _ in calls):
                    kinds["another tool"] += 1
                else:
                    kinds["wrong value"] += 1
    assert set(kinds) == {"no call", "another tool", "wrong value"}, kinds


def test_a_wrong_value_is_one_no_acceptable_value_matches() -> None:
    # Numbers beyond every acceptable one, booleans flipped, strings no acceptable one equals even case-folded.
    wrong: list[tuple[str, Any]] = []
    with sim(accuracy=0.0) as server:
        for seed in range(40):
            calls = structured(ask(server, body(NUMBERS, seed=seed, temperature=0.7)))
            if len(calls) == 1 and calls[0][0] == "triangle_area":
                (expected,) = NUMBERS.expected_calls or []
                for param, value in calls[0][1].items():
                    if not any(_same(value, v) for v in expected["arguments"][param] if v != ""):
                        wrong.append((param, value))
    assert wrong and all(param in {"base", "height", "exact"} for param, _ in wrong)
    assert {type(value) for _, value in wrong} <= {int, float, bool}  # wrong in value, of the schema's type


def test_irrelevance_is_mostly_no_call_and_sometimes_a_call() -> None:
    animals = ["penguins", "otters", "owls", "cats", "goats", "bees", "crows", "foxes", "moles", "seals"]
    jokes = [tool_task(f"joke-{a}-{n}", f"Tell me joke number {n} about {a}.", [WEATHER, TIME], []) for a in animals
             for n in range(6)]  # fmt: skip
    outcomes: Counter[str] = Counter()
    with SimServer(SimConfig(models={"sim-baseline": 0.85}, tasks=tuple(jokes), truncation_rate=0.0)) as server:
        for task in jokes:
            sample = ask(server, body(task))
            outcomes["call" if sample.tool_calls else "no call"] += 1
            if not sample.tool_calls:
                assert sample.content and sample.finish_reason == "stop"
            else:
                assert {call["function"]["name"] for call in sample.tool_calls} <= {"get_weather", "get_time"}
    assert outcomes["no call"] > 2 * outcomes["call"] > 0, outcomes
    with sim(accuracy=1.0) as server:
        assert ask(server, body(IRRELEVANT)).tool_calls is None
    with sim(accuracy=0.0) as server:
        (call,) = structured(ask(server, body(IRRELEVANT)))
        assert call[0] in {"get_weather", "get_time"}


def test_tool_choice_none_forbids_a_call_and_required_forces_one() -> None:
    with sim(accuracy=1.0) as server:
        refused = ask(server, body(SIMPLE, tool_choice="none"))
        assert refused.tool_calls is None and refused.content
        forced = ask(server, body(IRRELEVANT, tool_choice="required"))
        assert forced.tool_calls is not None and forced.finish_reason == "tool_calls"


# --- determinism and settings ------------------------------------------------------------------------------------


def test_the_same_request_gets_the_same_calls_and_another_seed_may_not() -> None:
    def answers(seed: int) -> list[Any]:
        with sim(accuracy=0.5, seed=seed, tool_parser="none") as server:
            return [ask(server, body(task)).content for task in TASKS]

    assert answers(3) == answers(3)
    assert any(answers(3) != answers(seed) for seed in range(4, 8))
    with sim(accuracy=0.5) as server:
        first = ask(server, body(PARALLEL))
        again = ask(server, body(PARALLEL))
    assert first.tool_calls == again.tool_calls and first.response_id == again.response_id


def test_a_bad_tool_setting_is_refused() -> None:
    with pytest.raises(OcllmError, match="tool_parser"):
        SimConfig(tool_parser="hermes")
    with pytest.raises(OcllmError, match="tool_format"):
        SimConfig(tool_format="xml")


def test_serve_sim_refuses_an_unknown_tool_parser(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["serve-sim", "--tool-parser", "hermes"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("ocllm: error:") and "--tool-parser" in err[0]
    assert "structured" in err[0]  # the choices are named


def test_a_request_with_malformed_tools_is_refused_as_vllm_refuses_it() -> None:
    data = json.dumps({**body(SIMPLE), "tools": {"not": "a list"}}).encode()
    with sim() as server:
        post = urllib.request.Request(
            server.base_url + "/chat/completions", data=data, headers={"Content-Type": "application/json"}
        )
        with pytest.raises(urllib.error.HTTPError) as caught:
            urllib.request.urlopen(post, timeout=BACKSTOP_S)
    assert caught.value.code == 400
    assert "tools" in json.loads(caught.value.read())["error"]["message"]


def test_an_answer_cut_off_while_thinking_makes_no_call() -> None:
    config = SimConfig(models={"sim-reasoning": 1.0}, tasks=TASKS, truncation_rate=1.0)
    with SimServer(config) as server:
        for stream in (False, True):
            sample = ask(server, body(SIMPLE, "sim-reasoning"), stream=stream)
            assert sample.finish_reason == "length" and sample.tool_calls is None and not sample.content


# --- the scorer reads what the simulator writes (the room of issue 23 and the simulator together) ------------------

ROOM_FORMAT = {"hermes": "hermes", "json": "json", "mistral": "mistral", "llama": "llama_python_tag",
               "pythonic": "pythonic"}  # fmt: skip


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("task", [SIMPLE, PARALLEL, NUMBERS], ids=lambda t: t.id)
def test_the_scorer_finds_each_format_the_simulator_writes_and_judges_it_as_the_structured_call(
    fmt: str, task: Task
) -> None:
    from ocllm.scoring import decide

    with sim(accuracy=1.0, tool_format=fmt) as structured_server, sim(
        accuracy=1.0, tool_format=fmt, tool_parser="none"
    ) as text_server:  # fmt: skip
        made = decide(task, ask(structured_server, body(task)))
        dropped = decide(task, ask(text_server, body(task)))
    assert made.call_source == "tool_calls" and made.correct is True, made.reason
    # The same calls as text: never credited, but found, in their format, and right had the server parsed them.
    assert dropped.call_source == "content" and dropped.correct is False, dropped.reason
    assert dropped.call_format == ROOM_FORMAT[fmt] and dropped.correct_if_parsed is True, dropped.reason


def test_calls_in_the_reasoning_are_found_there() -> None:
    from ocllm.scoring import decide

    with sim(accuracy=1.0, tool_parser="reasoning", tool_format="hermes") as server:
        d = decide(SIMPLE, ask(server, body(SIMPLE, model="sim-reasoning")))
    assert d.call_source == "reasoning" and d.correct is False and d.correct_if_parsed is True
