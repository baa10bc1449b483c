"""Tool call tasks (issue 23): every shape of a call (structured, as text in each format, in the reasoning) and
every reason (arguments not JSON, unknown function, missing required, unexpected, wrong type, wrong value, a call
when none was expected, no call) on Samples written here; BFCL's AST checker's documented verdicts; suites refused;
and `ocllm run` end to end against a scripted server, streamed and not."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from faultserver import FaultServer, Reply, Stream, sse

from ocllm.cli import main
from ocllm.models import Sample, Task
from ocllm.scoring import decide, task_types
from ocllm.scoring.tool_call.fields import ToolCallTask

WEATHER = {"type": "function", "function": {"name": "get_weather", "description": "Weather of a city.", "parameters": {
    "type": "object", "required": ["city"],
    "properties": {"city": {"type": "string"}, "days": {"type": "integer"}, "unit": {"type": "string"},
                   "scale": {"type": "number"}, "tags": {"type": "array", "items": {"type": "string"}},
                   "opts": {"type": "object"}, "exact": {"type": "boolean"}}}}}  # fmt: skip
TIME = {"type": "function", "function": {"name": "get_time", "parameters": {
    "type": "object", "properties": {"zone": {"type": "string"}}, "required": ["zone"]}}}  # fmt: skip
PARIS = [{"name": "get_weather", "arguments": {"city": ["Paris", "Paris, France"], "unit": ["", "celsius"]}}]


def task(expected: list[dict[str, Any]] | None = None, tools: list[dict[str, Any]] | None = None) -> Task:
    return ToolCallTask(id="t", question="Weather?", category="c", tools=tools or [WEATHER, TIME],
                expected_calls=PARIS if expected is None else expected)  # fmt: skip


def call(name: str, arguments: Any, ident: str = "c1") -> dict[str, Any]:
    text = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return {"id": ident, "type": "function", "function": {"name": name, "arguments": text}}


def structured(*calls: dict[str, Any], expected: list[dict[str, Any]] | None = None, **sample: Any) -> Any:
    return decide(task(expected), Sample(task_id="t", tool_calls=list(calls), **sample))


def as_text(content: str | None = None, expected: list[dict[str, Any]] | None = None, **sample: Any) -> Any:
    return decide(task(expected), Sample(task_id="t", content=content, **sample))


def problems(d: Any) -> list[str | None]:
    arguments = [a.problem for c in d.calls for a in c.argument_checks if not a.ok]
    return arguments + [c.problem for c in d.calls if c.problem]


# --- structured calls: what an agent executes ---------------------------------------------------------------------


def test_a_structured_call_with_acceptable_values_is_correct_and_says_each_argument() -> None:
    d = structured(call("get_weather", {"city": "  PARIS "}))
    assert d.correct is True and d.rule == "calls_match" and d.call_source == "tool_calls"
    assert d.extraction_method == "tool_calls" and d.call_format is None and d.correct_if_parsed is None
    (made,) = d.calls
    assert made.matched and made.expected_index == 0 and made.arguments == {"city": "  PARIS "}
    checks = {a.name: (a.given, a.ok) for a in made.argument_checks}
    assert checks == {"city": (True, True), "unit": (False, True)}  # unit: "" among its values, so it may be left out
    assert d.extracted_final_answer == 'get_weather(city="  PARIS ")'
    assert d.expected_answer == 'get_weather(city="Paris"|"Paris, France", unit=""|"celsius")'


@pytest.mark.parametrize(
    ("arguments", "problem"),
    [
        ({"unit": "celsius"}, "missing_required"),
        ({"city": "Paris", "country": "FR"}, "unknown_parameter"),
        ({"city": "Paris", "days": 3}, "unexpected_parameter"),  # in the schema, but the expected call does not give it
        ({"city": 7}, "wrong_type"),
        ({"city": "Lyon"}, "wrong_value"),
        ({"city": "Paris", "unit": "kelvin"}, "wrong_value"),
    ],
)
def test_each_argument_reason_is_named_in_the_evidence(arguments: dict[str, Any], problem: str) -> None:
    d = structured(call("get_weather", arguments))
    assert d.correct is False and d.rule == "calls_do_not_match"
    assert problem in problems(d)
    assert any(problem in reason for reason in d.reasons)


def test_a_required_value_not_optional_left_out_is_missing() -> None:
    d = structured(call("get_weather", {"city": "Paris"}),
                   expected=[{"name": "get_weather", "arguments": {"city": ["Paris"], "days": [3]}}])  # fmt: skip
    assert d.correct is False and problems(d) == ["missing"]


def test_arguments_that_are_not_json_give_the_parse_error_and_its_position() -> None:
    text = '{"city": "Paris",}'
    with pytest.raises(json.JSONDecodeError) as caught:
        json.loads(text)
    d = structured(call("get_weather", text))
    (made,) = d.calls
    assert d.correct is False and made.problem == "invalid_arguments_json" and made.arguments is None
    assert made.parse_error is not None and made.parse_error.offset == caught.value.pos
    assert (made.parse_error.line, made.parse_error.column) == (caught.value.lineno, caught.value.colno)
    assert f"char {caught.value.pos}" in d.reasons[0] and made.arguments_text == text


def test_arguments_that_are_json_but_no_object_are_refused() -> None:
    d = structured(call("get_weather", "[1]"))
    assert d.correct is False and d.calls[0].problem == "arguments_not_an_object"


def test_an_unknown_function_and_a_wrong_function_are_told_apart() -> None:
    unknown = structured(call("get_wether", {"city": "Paris"}))
    assert unknown.correct is False and unknown.calls[0].problem == "unknown_function"
    wrong = structured(call("get_time", {"zone": "CET"}))
    assert wrong.correct is False and wrong.calls[0].problem == "wrong_function"


def test_parallel_calls_match_in_any_order_one_to_one() -> None:
    expected = [{"name": "get_weather", "arguments": {"city": ["Paris"]}},
                {"name": "get_weather", "arguments": {"city": ["Lyon", "Paris"]}}]  # fmt: skip
    d = structured(call("get_weather", {"city": "Lyon"}), call("get_weather", {"city": "Paris"}, "c2"),
                   expected=expected)  # fmt: skip
    assert d.correct is True and [c.expected_index for c in d.calls] == [1, 0]
    reversed_ = structured(call("get_weather", {"city": "Paris"}), call("get_weather", {"city": "Lyon"}, "c2"),
                           expected=expected)  # fmt: skip
    assert reversed_.correct is True and [c.expected_index for c in reversed_.calls] == [0, 1]
    twice = structured(call("get_weather", {"city": "Paris"}), call("get_weather", {"city": "Paris"}, "c2"),
                       expected=[expected[0], {"name": "get_weather", "arguments": {"city": ["Lyon"]}}])  # fmt: skip
    assert twice.correct is False and twice.rule == "calls_do_not_match"  # one Paris call cannot stand for Lyon


def test_parallel_matching_finds_a_one_to_one_match_where_bfcls_first_fit_does_not() -> None:
    # A deliberate difference (docs/scoring/tool_call.md): BFCL gives expected call 1 (Lyon or Paris) the first
    # call that fits (Paris) and then finds none for expected call 2 (Paris); the calls do match one to one, and
    # are credited.
    expected = [{"name": "get_weather", "arguments": {"city": ["Lyon", "Paris"]}},
                {"name": "get_weather", "arguments": {"city": ["Paris"]}}]  # fmt: skip
    d = structured(call("get_weather", {"city": "Paris"}), call("get_weather", {"city": "Lyon"}, "c2"),
                   expected=expected)  # fmt: skip
    assert d.correct is True and [c.expected_index for c in d.calls] == [1, 0]


def test_a_wrong_number_of_calls_is_wrong() -> None:
    d = structured(call("get_weather", {"city": "Paris"}), call("get_time", {"zone": "CET"}, "c2"))
    assert d.correct is False and d.rule == "wrong_call_count" and d.reasons[0] == "2 call(s) made, 1 expected"
    assert d.calls[0].matched and not d.calls[1].matched


def test_irrelevance_no_call_is_right_and_any_call_is_wrong() -> None:
    none = as_text("I cannot help with that: no tool fits.", expected=[])
    assert none.correct is True and none.rule == "no_call_expected" and none.call_source == "none"
    made = structured(call("get_weather", {"city": "Paris"}), expected=[])
    assert made.correct is False and made.rule == "call_when_none_expected"
    assert "where none was expected" in made.reasons[0]


def test_no_call_when_one_was_expected() -> None:
    d = as_text("It is sunny in Paris.")
    assert d.correct is False and d.rule == "no_call" and d.call_source == "none" and d.calls == []


# --- calls written as text: dropped by the server's parser --------------------------------------------------------

TEXT_CALLS = {
    "hermes": 'Sure.\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>',
    "mistral": '[TOOL_CALLS][{"name": "get_weather", "arguments": {"city": "Paris"}}]',
    "mistral_named": '[TOOL_CALLS]get_weather[ARGS]{"city": "Paris"}',
    "llama_json": '<|python_tag|>{"name": "get_weather", "parameters": {"city": "Paris"}}<|eom_id|>',
    "llama_call": '<|python_tag|>get_weather(city="Paris")',
    "json": 'I will call {"name": "get_weather", "parameters": {"city": "Paris"}} now.',
    "json_list": '[{"name": "get_weather", "arguments": {"city": "Paris"}}]',
    "pythonic": 'Calling [get_weather(city="Paris")] for you.',
}
FORMATS = {"hermes": "hermes", "mistral": "mistral", "mistral_named": "mistral", "llama_json": "llama_python_tag",
           "llama_call": "llama_python_tag", "json": "json", "json_list": "json", "pythonic": "pythonic"}  # fmt: skip


@pytest.mark.parametrize("shape", sorted(TEXT_CALLS))
def test_a_call_written_as_text_in_the_content_is_found_named_and_never_credited(shape: str) -> None:
    content = TEXT_CALLS[shape]
    d = as_text(content)
    assert d.correct is False and d.rule == "call_only_as_text" and d.ambiguity == "call_only_as_text"
    assert d.call_source == "content" and d.call_format == FORMATS[shape] and d.correct_if_parsed is True
    (made,) = d.calls
    assert made.name == "get_weather" and made.arguments == {"city": "Paris"} and made.field == "content"
    assert made.start is not None and made.end is not None and "get_weather" in content[made.start : made.end]


def test_a_call_in_the_reasoning_is_found_there_and_its_wrong_value_said() -> None:
    d = as_text("Let me check.", reasoning='I should call {"name": "get_weather", "arguments": {"city": "Lyon"}}')
    assert d.call_source == "reasoning" and d.call_format == "json" and d.correct is False
    assert d.correct_if_parsed is False and "wrong_value" in problems(d) and d.calls[0].field == "reasoning"


def test_a_call_inside_think_tags_is_in_the_reasoning_the_visible_content_first() -> None:
    content = '<think><tool_call>{"name": "get_weather", "arguments": {"city": "Lyon"}}</tool_call></think>' \
              '<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>'
    d = as_text(content)
    assert d.call_source == "content" and d.correct_if_parsed is True
    only_thinking = as_text(content.split("</think>")[0] + "</think>Done.")
    assert only_thinking.call_source == "reasoning" and only_thinking.calls[0].field == "content"


def test_python_syntax_is_read_as_literals_never_evaluated() -> None:
    d = as_text('[get_weather(city=__import__("os").getcwd())]')
    assert d.rule == "no_call"  # a value that is no literal: not a call
    positional = as_text('[get_weather("Paris")]')
    assert positional.rule == "no_call"  # a positional argument names no parameter


def test_text_beside_structured_calls_is_counted_not_decided_on() -> None:
    d = structured(call("get_weather", {"city": "Paris"}), content=TEXT_CALLS["hermes"].replace("Paris", "Lyon"))
    assert d.correct is True and d.text_calls_beside == 1 and d.call_source == "tool_calls"


def test_a_malformed_hermes_block_is_no_call() -> None:
    assert as_text('<tool_call>{"name": "get_weather", "arguments": {"city": </tool_call>').rule == "no_call"


# --- agreement with BFCL's AST checker (its documented cases) ----------------------------------------------------


def test_bfcl_an_int_is_accepted_for_a_float() -> None:
    expected = [{"name": "get_weather", "arguments": {"city": ["Paris"], "scale": [2.0]}}]
    assert structured(call("get_weather", {"city": "Paris", "scale": 2}), expected=expected).correct is True
    # ... but not the other way round, and a bool is no number (Python's True == 1 is not followed)
    as_int = [{"name": "get_weather", "arguments": {"city": ["Paris"], "days": [2]}}]
    assert "wrong_type" in problems(structured(call("get_weather", {"city": "Paris", "days": 2.0}), expected=as_int))
    assert "wrong_type" in problems(structured(call("get_weather", {"city": "Paris", "days": True}), expected=as_int))


def test_bfcl_strings_are_standardised_case_spaces_and_punctuation() -> None:
    expected = [{"name": "get_weather", "arguments": {"city": ["New York, NY"]}}]
    for said in ("new york ny", "NEW-YORK,NY", "New York, NY."):
        assert structured(call("get_weather", {"city": said}), expected=expected).correct is True, said
    assert structured(call("get_weather", {"city": "New Jersey"}), expected=expected).correct is False


def test_bfcl_an_optional_parameter_with_empty_string_may_be_left_out_but_if_given_is_checked() -> None:
    assert structured(call("get_weather", {"city": "Paris"})).correct is True
    assert structured(call("get_weather", {"city": "Paris", "unit": "Celsius"})).correct is True
    assert structured(call("get_weather", {"city": "Paris", "unit": "fahrenheit"})).correct is False


def test_bfcl_lists_and_dicts_compare_item_by_item_with_nested_acceptable_values() -> None:
    expected = [{"name": "get_weather", "arguments": {
        "city": ["Paris"], "tags": [["Rain", "wind"]], "opts": [{"lang": ["fr", "en"], "hourly": ["", True]}]}}]
    good = call("get_weather", {"city": "Paris", "tags": ["rain", "Wind"], "opts": {"lang": "EN"}})
    assert structured(good, expected=expected).correct is True
    order = call("get_weather", {"city": "Paris", "tags": ["wind", "rain"], "opts": {"lang": "fr"}})
    assert structured(order, expected=expected).correct is False  # a list's order is part of its value
    extra = call("get_weather", {"city": "Paris", "tags": ["rain", "wind"], "opts": {"lang": "fr", "x": 1}})
    assert structured(extra, expected=expected).correct is False
    items = call("get_weather", {"city": "Paris", "tags": ["rain", 3], "opts": {"lang": "fr"}})
    assert "wrong_type" in problems(structured(items, expected=expected))


# --- suites: refused when read ---------------------------------------------------------------------------------


def suite_line(**changes: Any) -> dict[str, Any]:
    line = {"id": "w1", "type": "tool_call", "question": "What is the weather in Paris?", "tools": [WEATHER],
            "expected_calls": [{"name": "get_weather", "arguments": {"city": ["Paris"]}}], "category": "simple"}
    return {**line, **changes}


@pytest.mark.parametrize(
    ("changes", "said"),
    [
        ({"tools": []}, "field 'tools': a tool_call task needs a non-empty list"),
        ({"tools": [{"type": "function", "function": {"description": "x"}}]}, "tool 1 has no function name"),
        ({"tools": [WEATHER, WEATHER]}, "is used twice"),
        ({"expected_calls": [{"name": "get_time", "arguments": {}}]}, "which is none of the task's tools"),
        ({"expected_calls": [{"name": "get_weather", "arguments": {"town": ["Paris"]}}]}, "not a parameter of its"),
        ({"expected_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}}]}, "non-empty list of acceptable"),
        ({"expected_calls": None}, "expected_calls must be a list"),
    ],
)
def test_a_bad_tool_call_line_is_refused_with_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], changes: dict[str, Any], said: str
) -> None:
    suite = tmp_path / "tools.jsonl"
    suite.write_text(json.dumps(suite_line(**changes)) + "\n")
    code = main(["run", "--suite", str(suite), "--base-url", "http://127.0.0.1:9/v1", "--model", "m",
                 "--out", str(tmp_path / "run")])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and err.startswith("ocllm: error: ") and said in err, err


# --- end to end: `ocllm run` against a scripted server ---------------------------------------------------------


def completion(message: dict[str, Any], finish: str = "stop") -> Reply:
    return Reply(json={"id": "r", "object": "chat.completion", "model": "m",
                       "choices": [{"index": 0, "message": {"role": "assistant", **message}, "finish_reason": finish}]})


def streamed(*deltas: dict[str, Any]) -> Stream:
    events = [{"id": "r", "model": "m", "choices": [{"index": 0, "delta": d, "finish_reason": None}]} for d in deltas]
    events.append({"id": "r", "model": "m", "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]})
    return Stream(parts=[sse(*events)])


def run_one(tmp_path: Path, behaviour: Reply | Stream, *flags: str) -> tuple[dict[str, Any], dict[str, Any], Any]:
    suite = tmp_path / "tools.jsonl"
    suite.write_text(json.dumps(suite_line()) + "\n")
    out = tmp_path / "run"
    with FaultServer() as server:
        server.script(then=behaviour)
        code = main(["run", "--suite", str(suite), "--base-url", server.base_url, "--model", "m", "--out", str(out),
                     "--concurrency", "1", *flags])  # fmt: skip
        sent = [r.json() for r in server.requests if r.path.endswith("/chat/completions")]
    assert code == 0
    (record,) = json.loads((out / "metrics.json").read_text())["tasks"]
    return record, sent[-1], json.loads((out / "metrics.json").read_text())


def test_run_sends_tools_and_tool_choice_and_credits_a_structured_call(tmp_path: Path) -> None:
    reply = completion({"content": None, "tool_calls": [call("get_weather", {"city": "paris"})]}, "tool_calls")
    record, sent, metrics = run_one(tmp_path, reply)
    assert sent["tools"] == [WEATHER] and sent["tool_choice"] == "auto"
    assert sent["messages"][-1]["content"] == "What is the weather in Paris?"
    assert record["correct"] is True and record["call_source"] == "tool_calls" and record["tool_calls"]
    details = metrics["summary"]["by_type"]["tool_call"]["details"]
    assert details["answers_with_structured_calls"] == 1 and details["answers_with_calls_only_as_text"] == 0


def test_run_streamed_fragments_are_joined_and_decided(tmp_path: Path) -> None:
    behaviour = streamed(
        {"tool_calls": [{"index": 0, "id": "c", "type": "function", "function": {"name": "get_weather",
                                                                                  "arguments": ""}}]},
        {"tool_calls": [{"index": 0, "function": {"arguments": '{"city": '}}]},
        {"tool_calls": [{"index": 0, "function": {"arguments": '"Paris"}'}}]},
    )  # fmt: skip
    record, sent, _ = run_one(tmp_path, behaviour, "--stream")
    assert sent["stream"] is True and sent["tools"] == [WEATHER]
    assert record["correct"] is True and record["calls"][0]["arguments_text"] == '{"city": "Paris"}'


def test_run_a_call_in_the_content_is_counted_dropped_with_what_each_kind_of_server_needs(tmp_path: Path) -> None:
    record, _, metrics = run_one(tmp_path, completion({"content": TEXT_CALLS["hermes"]}))
    assert record["correct"] is False and record["call_source"] == "content" and record["call_format"] == "hermes"
    assert record["correct_if_parsed"] is True
    details = metrics["summary"]["by_type"]["tool_call"]["details"]
    assert details["as_text_by_format"] == {"hermes": 1} and details["as_text_by_where"] == {"content": 1}
    (notice,) = [n for n in metrics["notices"] if "tool_calls" in n]
    # The fault server shows no kind's mark: each kind's way is said, and no flag is said to be off.
    assert "kind is not known" in notice and "--enable-auto-tool-choice --tool-call-parser hermes" in notice
    assert "--tool-call-parser qwen25" in notice and "--jinja" not in notice


def test_run_a_call_in_the_reasoning_says_no_tool_parser_reads_it(tmp_path: Path) -> None:
    reply = completion({"content": "Here.", "reasoning_content": '[get_weather(city="Paris")]'})
    record, _, metrics = run_one(tmp_path, reply)
    assert record["call_source"] == "reasoning" and record["call_format"] == "pythonic"
    (notice,) = [n for n in metrics["notices"] if "tool_calls" in n]
    assert "inside the reasoning, which no server's tool parser reads" in notice and 'reasoning = "off"' in notice
    assert "--tool-call-parser" not in notice  # no parser of the content would have found it


def test_a_rescored_record_keeps_its_calls_and_its_verdict(tmp_path: Path) -> None:
    reply = completion({"content": None, "tool_calls": [call("get_weather", {"city": "Lyon"})]}, "tool_calls")
    record, _, _ = run_one(tmp_path, reply)
    saved = tmp_path / "old.json"
    saved.write_text(json.dumps({"tasks": [record]}))
    assert main(["rescore", str(saved), "-o", str(tmp_path / "again.json")]) == 0
    (again,) = json.loads((tmp_path / "again.json").read_text())["tasks"]
    assert again["tool_calls"] == record["tool_calls"] and again["correct"] is False
    assert again["calls"][0]["argument_checks"][0]["problem"] == "wrong_value"
    assert task_types.of("tool_call").evidence_lines(task_types.scored(again))  # a report draws its evidence
    assert main(["report", str(tmp_path / "again.json"), "-o", str(tmp_path / "rep")]) == 0


# --- review of issue 23: hostile and odd text -------------------------------------------------------------------


def test_hostile_text_is_read_once_and_never_crashes_a_decision() -> None:
    from ocllm.scoring.text_calls import find_text_calls

    # An integer past Python's limit of digits inside the arguments: no call, not an exception that ends the run.
    huge = '{"name": "get_weather", "arguments": "{\\"city\\": ' + "9" * 5000 + '}"}'
    assert find_text_calls(huge) == []
    # Degenerate answers of a megabyte: each search reads them once (these took minutes; no time is asserted).
    assert find_text_calls("<tool_call>" * 90_000) == []
    assert find_text_calls("[TOOL_CALLS]" * 83_000) == []
    assert find_text_calls("[f(" * 200 + "a" * 1_000_000 + "]" * 200) == []


def test_a_tag_named_in_the_prose_does_not_hide_the_block_after_it() -> None:
    from ocllm.scoring.text_calls import find_text_calls

    block = '<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>'
    text = "I will use a <tool_call> tag.\n" + block
    calls = find_text_calls(text)
    assert [(c.name, c.arguments, c.format) for c in calls] == [("get_weather", {"city": "Paris"}, "hermes")]
    cut = 'Calling now.\n<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}'  # cut before the tag
    assert [c.format for c in find_text_calls(cut)] == ["hermes"]
    typed = '{"type": "function", "name": "get_weather", "parameters": {"city": "Paris"}}'
    assert [(c.name, c.format) for c in find_text_calls(typed)] == [("get_weather", "json")]
