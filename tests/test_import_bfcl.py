"""`ocllm import bfcl` (issue 23): the Berkeley Function Calling Leaderboard's question files (`BFCL_v3_simple.json`
and the rest: JSON lines of `id`, `question` as turns of messages, `function` docs) and its possible answers
(`possible_answer/BFCL_v3_simple.json`: `id`, `ground_truth`) become a suite of tool_call tasks. The files are
written here in those layouts; every expected line is written by hand and read back from the output JSONL itself;
the CLI is the real entry point."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from helpers import one_error, write_jsonl

from ocllm.cli import main
from ocllm.scoring.task_types import TASK_TYPES
from ocllm.suites import load_suite

Row = dict[str, Any]


def user(text: str) -> list[list[Row]]:
    return [[{"role": "user", "content": text}]]


# A simple row as BFCL writes it: a dotted name, its own type names (dict, float, tuple, any), a nested dict.
SIMPLE = {
    "id": "simple_1",
    "question": user("Calculate the factorial of 5 using math functions."),
    "function": [{
        "name": "math.factorial",
        "description": "Calculate the factorial of a given number.",
        "parameters": {"type": "dict", "properties": {
            "number": {"type": "integer", "description": "The number."},
            "scale": {"type": "float", "description": "A factor. Default 1.0"},
            "span": {"type": "tuple", "items": {"type": "float"}, "description": "A range."},
            "options": {"type": "dict", "properties": {"exact": {"type": "boolean"}, "tag": {"type": "any"}},
                        "description": "Options."},
            "rows": {"type": "array", "items": {"type": "dict", "properties": {"k": {"type": "float"}}}},
        }, "required": ["number"]},
    }],
}  # fmt: skip
SIMPLE_ANSWER = {"id": "simple_1", "ground_truth": [{"math.factorial": {"number": [5], "scale": [1.0, ""],
                                                                        "span": [[0.0, 1.0]], "options": [""],
                                                                        "rows": [""]}}]}  # fmt: skip
WEATHER = {"name": "get_weather", "description": "The weather in a city.",
           "parameters": {"type": "dict", "properties": {"city": {"type": "string", "description": "The city."}},
                          "required": ["city"]}}  # fmt: skip
TIME = {"name": "world.time", "description": "The time in a city.",
        "parameters": {"type": "dict", "properties": {"city": {"type": "string"}}, "required": ["city"]}}  # fmt: skip
MULTIPLE = {"id": "multiple_0", "question": user("What time is it in Paris?"), "function": [WEATHER, TIME]}
MULTIPLE_ANSWER = {"id": "multiple_0", "ground_truth": [{"world.time": {"city": ["Paris", "Paris, France"]}}]}
PARALLEL = {"id": "parallel_3", "question": user("Weather in Paris and in Rome?"), "function": [WEATHER]}
PARALLEL_ANSWER = {"id": "parallel_3", "ground_truth": [{"get_weather": {"city": ["Paris"]}},
                                                        {"get_weather": {"city": ["Rome"]}}]}  # fmt: skip
PARALLEL_MULTIPLE = {"id": "parallel_multiple_7", "question": user("Weather and time in Oslo."),
                     "function": [WEATHER, TIME]}  # fmt: skip
OSLO = {"city": ["Oslo"]}
PARALLEL_MULTIPLE_ANSWER = {"id": "parallel_multiple_7", "ground_truth": [{"get_weather": OSLO}, {"world.time": OSLO}]}
IRRELEVANCE = {"id": "irrelevance_2", "question": user("Who wrote Hamlet?"), "function": [WEATHER]}

# The tools as sent: OpenAI function tools, JSON Schema's type names, dots as underscores.
WEATHER_TOOL = {"type": "function", "function": {
    "name": "get_weather", "description": "The weather in a city.",
    "parameters": {"type": "object", "properties": {"city": {"type": "string", "description": "The city."}},
                   "required": ["city"]}}}  # fmt: skip
TIME_TOOL = {"type": "function", "function": {
    "name": "world_time", "description": "The time in a city.",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}  # fmt: skip


def bfcl_files(folder: Path, questions: dict[str, list[Row]], answers: dict[str, list[Row]]) -> tuple[Path, Path]:
    """BFCL's layout: data/BFCL_v3_<category>.json and data/possible_answer/BFCL_v3_<category>.json."""
    for category, rows in questions.items():
        write_jsonl(folder / "data" / f"BFCL_v3_{category}.json", rows)
    for category, rows in answers.items():
        write_jsonl(folder / "data" / "possible_answer" / f"BFCL_v3_{category}.json", rows)
    return folder / "data", folder / "data" / "possible_answer"


def run_import(paths: list[Path], out: Path, *flags: str) -> int:
    return main(["import", "bfcl", *map(str, paths), "-o", str(out), *flags])


def lines(path: Path) -> list[Row]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def five_categories(tmp_path: Path) -> tuple[list[Path], Path]:
    data, answers = bfcl_files(
        tmp_path,
        {"simple": [SIMPLE], "multiple": [MULTIPLE], "parallel": [PARALLEL],
         "parallel_multiple": [PARALLEL_MULTIPLE], "irrelevance": [IRRELEVANCE]},
        {"simple": [SIMPLE_ANSWER], "multiple": [MULTIPLE_ANSWER], "parallel": [PARALLEL_ANSWER],
         "parallel_multiple": [PARALLEL_MULTIPLE_ANSWER]},
    )  # fmt: skip
    names = ("simple", "multiple", "parallel", "parallel_multiple", "irrelevance")
    return [data / f"BFCL_v3_{name}.json" for name in names], answers


def test_a_simple_row_becomes_a_tool_call_line_field_by_field(tmp_path: Path) -> None:
    data, answers = bfcl_files(tmp_path, {"simple": [SIMPLE]}, {"simple": [SIMPLE_ANSWER]})
    out = tmp_path / "bfcl.jsonl"
    assert run_import([data / "BFCL_v3_simple.json"], out, "--answers", str(answers)) == 0
    (line,) = lines(out)
    assert sorted(line) == ["category", "expected_calls", "id", "question", "tools", "type"]
    assert line["id"] == "bfcl/simple_1"
    assert line["type"] == "tool_call"
    assert line["category"] == "simple"
    assert line["question"] == "Calculate the factorial of 5 using math functions."
    assert line["tools"] == [{"type": "function", "function": {
        "name": "math_factorial",
        "description": "Calculate the factorial of a given number.",
        "parameters": {"type": "object", "properties": {
            "number": {"type": "integer", "description": "The number."},
            "scale": {"type": "number", "description": "A factor. Default 1.0"},
            "span": {"type": "array", "items": {"type": "number"}, "description": "A range."},
            "options": {"type": "object", "properties": {"exact": {"type": "boolean"}, "tag": {}},
                        "description": "Options."},
            "rows": {"type": "array", "items": {"type": "object", "properties": {"k": {"type": "number"}}}},
        }, "required": ["number"]},
    }}]  # fmt: skip
    # The expected call speaks the sent name; the acceptable values are BFCL's, "" (may be omitted) included.
    assert line["expected_calls"] == [{"name": "math_factorial", "arguments": {
        "number": [5], "scale": [1.0, ""], "span": [[0.0, 1.0]], "options": [""], "rows": [""]}}]  # fmt: skip


def test_the_five_categories_import_with_their_expected_calls(tmp_path: Path) -> None:
    questions, answers = five_categories(tmp_path)
    out = tmp_path / "bfcl.jsonl"
    assert run_import(questions, out, "--answers", str(answers)) == 0
    by_id = {line["id"]: line for line in lines(out)}
    assert list(by_id) == ["bfcl/simple_1", "bfcl/multiple_0", "bfcl/parallel_3", "bfcl/parallel_multiple_7",
                           "bfcl/irrelevance_2"]  # fmt: skip
    assert [line["category"] for line in by_id.values()] == [
        "simple", "multiple", "parallel", "parallel_multiple", "irrelevance"]  # fmt: skip
    assert by_id["bfcl/multiple_0"]["tools"] == [WEATHER_TOOL, TIME_TOOL]
    assert by_id["bfcl/multiple_0"]["expected_calls"] == [{"name": "world_time",
                                                           "arguments": {"city": ["Paris", "Paris, France"]}}]
    assert by_id["bfcl/parallel_3"]["expected_calls"] == [{"name": "get_weather", "arguments": {"city": ["Paris"]}},
                                                          {"name": "get_weather", "arguments": {"city": ["Rome"]}}]
    assert by_id["bfcl/parallel_multiple_7"]["expected_calls"] == [
        {"name": "get_weather", "arguments": {"city": ["Oslo"]}},
        {"name": "world_time", "arguments": {"city": ["Oslo"]}}]  # fmt: skip
    # Irrelevance: no call is the right answer, and it needs no possible answer.
    assert by_id["bfcl/irrelevance_2"]["expected_calls"] == []
    assert by_id["bfcl/irrelevance_2"]["tools"] == [WEATHER_TOOL]
    assert by_id["bfcl/irrelevance_2"]["question"] == "Who wrote Hamlet?"


def test_irrelevance_needs_no_answers_file(tmp_path: Path) -> None:
    data, _ = bfcl_files(tmp_path, {"irrelevance": [IRRELEVANCE]}, {})
    out = tmp_path / "s.jsonl"
    assert run_import([data / "BFCL_v3_irrelevance.json"], out) == 0
    assert [(line["id"], line["expected_calls"]) for line in lines(out)] == [("bfcl/irrelevance_2", [])]


def test_v4_simple_python_rows_import_under_their_own_category(tmp_path: Path) -> None:
    row = {**SIMPLE, "id": "simple_python_1"}
    answer = {**SIMPLE_ANSWER, "id": "simple_python_1"}
    data, answers = bfcl_files(tmp_path, {"simple_python": [row]}, {"simple_python": [answer]})
    out = tmp_path / "s.jsonl"
    assert run_import([data / "BFCL_v3_simple_python.json"], out, "--answers", str(answers)) == 0
    assert [(line["id"], line["category"]) for line in lines(out)] == [("bfcl/simple_python_1", "simple_python")]


def test_several_user_messages_of_the_first_turn_are_joined(tmp_path: Path) -> None:
    row = {**IRRELEVANCE, "question": [[{"role": "user", "content": "Hello."},
                                        {"role": "user", "content": "Who wrote Hamlet?"}]]}  # fmt: skip
    data, _ = bfcl_files(tmp_path, {"irrelevance": [row]}, {})
    out = tmp_path / "s.jsonl"
    assert run_import([data / "BFCL_v3_irrelevance.json"], out) == 0
    assert lines(out)[0]["question"] == "Hello.\n\nWho wrote Hamlet?"


@pytest.mark.skipif("tool_call" not in TASK_TYPES, reason="the tool_call room is not registered in this tree yet")
def test_the_imported_suite_loads_as_ocllm_run_reads_it(tmp_path: Path) -> None:
    questions, answers = five_categories(tmp_path)
    out = tmp_path / "bfcl.jsonl"
    assert run_import(questions, out, "--answers", str(answers)) == 0
    loaded = load_suite(str(out))
    assert [t.id for t in loaded.tasks] == ["bfcl/simple_1", "bfcl/multiple_0", "bfcl/parallel_3",
                                            "bfcl/parallel_multiple_7", "bfcl/irrelevance_2"]  # fmt: skip
    assert loaded.tasks[4].expected_calls == []
    assert loaded.tasks[1].tools == [WEATHER_TOOL, TIME_TOOL]


MULTI_TURN = {"id": "multi_turn_base_0", "question": [user("a")[0], user("b")[0]], "function": [WEATHER]}


@pytest.mark.parametrize(
    ("row", "problem"),
    [
        ({**IRRELEVANCE, "id": "irrelevance_5", "question": [user("a")[0], user("b")[0]]},
         "'question' has 2 turns; multi-turn tool use is not imported"),
        ({**IRRELEVANCE, "id": "java_0"}, "category 'java' is not one ocllm imports"),
        ({**IRRELEVANCE, "id": "irrelevance-5"}, "id 'irrelevance-5' is not BFCL's <category>_<number>"),
        ({**IRRELEVANCE, "id": "irrelevance_5", "question": [[{"role": "system", "content": "Be brief."},
                                                              {"role": "user", "content": "Hi"}]]},
         "'question' message 1 is a 'system' message"),
        ({**IRRELEVANCE, "id": "irrelevance_5", "function": []}, "'function' is not a list of function docs"),
        ({**IRRELEVANCE, "id": "irrelevance_5", "function": [{**WEATHER, "parameters": {
            "type": "dict", "properties": {"city": {"type": "str"}}}}]},
         "get_weather.city: type 'str' is not one of BFCL's"),
        ({**IRRELEVANCE, "id": "irrelevance_5", "function": [{**WEATHER, "parameters": {
            "type": "dict", "properties": {"city": {"type": "string"}}, "required": ["town"]}}]},
         "function 'get_weather': 'required' names a parameter it does not have"),
        ({**IRRELEVANCE, "id": "irrelevance_5", "function": [WEATHER, {**WEATHER, "name": "get.weather"}]},
         "two functions are sent as 'get_weather'"),
        ({k: v for k, v in IRRELEVANCE.items() if k != "question"}, "no 'question'"),
    ],
)  # fmt: skip
def test_a_bad_question_row_is_refused_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], row: Row, problem: str
) -> None:
    data, _ = bfcl_files(tmp_path, {"irrelevance": [IRRELEVANCE, row]}, {})
    source = data / "BFCL_v3_irrelevance.json"
    out = tmp_path / "s.jsonl"
    assert run_import([source], out) == 2
    said = one_error(capsys)
    assert f"{source}: row 2: " in said and problem in said, said
    assert not out.exists()


@pytest.mark.parametrize(
    ("answer", "problem"),
    [
        ({"id": "multiple_0", "ground_truth": [{"world.clock": {"city": ["Paris"]}}]},
         "call 1 names 'world.clock', which is not among the functions"),
        ({"id": "multiple_0", "ground_truth": [{"world.time": {"town": ["Paris"]}}]},
         "call 1: 'world.time' has no parameter 'town'"),
        ({"id": "multiple_0", "ground_truth": [{"world.time": {"city": "Paris"}}]},
         "call 1: 'city' is not a list of acceptable values"),
        ({"id": "multiple_0", "ground_truth": []}, "'ground_truth' is not a non-empty list of calls"),
        ({"id": "multiple_9", "ground_truth": [{"world.time": {"city": ["Paris"]}}]},
         "no possible answer for 'multiple_0' in the --answers files"),
    ],
)  # fmt: skip
def test_a_question_whose_possible_answer_does_not_fit_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], answer: Row, problem: str
) -> None:
    data, answers = bfcl_files(tmp_path, {"multiple": [MULTIPLE]}, {"multiple": [answer]})
    source = data / "BFCL_v3_multiple.json"
    assert run_import([source], tmp_path / "s.jsonl", "--answers", str(answers)) == 2
    said = one_error(capsys)
    assert f"{source}: row 1: " in said and problem in said, said


def test_skip_bad_leaves_multi_turn_and_other_bad_rows_out_and_counts_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data, _ = bfcl_files(tmp_path, {"irrelevance": [MULTI_TURN, IRRELEVANCE, {**IRRELEVANCE, "id": "java_1"}]}, {})
    out = tmp_path / "s.jsonl"
    assert run_import([data / "BFCL_v3_irrelevance.json"], out, "--skip-bad") == 0
    assert [line["id"] for line in lines(out)] == ["bfcl/irrelevance_2"]
    said = " ".join(capsys.readouterr().out.split())
    assert "2 tasks" not in said and "1 tasks of 3 rows" in said
    assert "skipped 2 bad rows, the first: " in said
    assert "row 1: category 'multi_turn_base': multi-turn tool use (results fed back) is not imported" in said


def test_a_question_needing_an_answer_without_answers_fails_even_with_skip_bad(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data, _ = bfcl_files(tmp_path, {"simple": [SIMPLE]}, {})
    assert run_import([data / "BFCL_v3_simple.json"], tmp_path / "s.jsonl", "--skip-bad") == 2
    assert "'simple_1' (simple) needs its possible answer: give --answers" in one_error(capsys)


def test_a_possible_answer_file_given_as_questions_is_named_for_what_it_is(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, answers = bfcl_files(tmp_path, {}, {"simple": [SIMPLE_ANSWER]})
    assert run_import([answers / "BFCL_v3_simple.json"], tmp_path / "s.jsonl", "--skip-bad") == 2
    assert "row 1: a possible-answer row; give possible-answer files with --answers" in one_error(capsys)


@pytest.mark.parametrize(
    ("rows", "problem"),
    [
        ([SIMPLE_ANSWER, SIMPLE_ANSWER], "row 2: id 'simple_1' answered twice (first at"),
        ([{"id": "simple_1", "answer": [5]}], "row 1: not a BFCL possible answer"),
    ],
)
def test_a_bad_answers_file_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], rows: list[Row], problem: str
) -> None:
    data, answers = bfcl_files(tmp_path, {"simple": [SIMPLE]}, {"simple": rows})
    assert run_import([data / "BFCL_v3_simple.json"], tmp_path / "s.jsonl", "--answers", str(answers)) == 2
    said = one_error(capsys)
    assert str(answers / "BFCL_v3_simple.json") in said and problem in said, said


def test_answers_are_refused_for_a_format_that_holds_its_own_golds(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = write_jsonl(tmp_path / "input_data.jsonl", [{"key": 1, "prompt": "Hi", "instruction_id_list": [],
                                                           "kwargs": []}])  # fmt: skip
    answers = write_jsonl(tmp_path / "answers.json", [SIMPLE_ANSWER])
    code = main(["import", "ifeval", str(source), "-o", str(tmp_path / "s.jsonl"), "--answers", str(answers)])
    assert code == 2
    assert "--answers is for bfcl; ifeval files hold their own golds" in one_error(capsys)


def test_output_never_replaces_an_answers_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data, answers = bfcl_files(tmp_path, {"simple": [SIMPLE]}, {"simple": [SIMPLE_ANSWER]})
    target = answers / "BFCL_v3_simple.json"
    before = target.read_bytes()
    code = run_import([data / "BFCL_v3_simple.json"], target, "--answers", str(answers), "--force")
    assert code == 2
    assert "refusing to write the output over its own input" in one_error(capsys)
    assert target.read_bytes() == before


def test_per_category_limit_and_seed_sample_by_bfcl_category(tmp_path: Path) -> None:
    rows = {"irrelevance": [{**IRRELEVANCE, "id": f"irrelevance_{n}"} for n in range(20)],
            "parallel": [{**PARALLEL, "id": f"parallel_{n}"} for n in range(10)]}  # fmt: skip
    answers = {"parallel": [{**PARALLEL_ANSWER, "id": f"parallel_{n}"} for n in range(10)]}
    data, answer_folder = bfcl_files(tmp_path, rows, answers)
    questions = [data / "BFCL_v3_irrelevance.json", data / "BFCL_v3_parallel.json"]

    def picked(*flags: str) -> list[Row]:
        out = tmp_path / f"s{'_'.join(flags)}.jsonl"
        assert run_import(questions, out, "--answers", str(answer_folder), *flags) == 0
        return lines(out)

    three = picked("--per-category", "3")
    assert sorted(line["category"] for line in three) == ["irrelevance"] * 3 + ["parallel"] * 3
    five = picked("--per-category", "5")
    assert {line["id"] for line in three} <= {line["id"] for line in five}
    assert picked("--per-category", "3") == three
    assert picked("--per-category", "3", "--seed", "1") != three
    # --limit: in proportion to the categories' sizes (20 and 10).
    six = picked("--limit", "6")
    assert sorted(line["category"] for line in six) == ["irrelevance"] * 4 + ["parallel"] * 2
