"""Issue 29, sections 1 and 2 (the suite and schema side): a schema's patterns checked under a CPU-time limit, and
suites that would cost without bound or give wrong verdicts refused when read, in one line, exit code 2
(docs/lanes.md, "Bounds on suites"). Real files, the real command line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from helpers import CPU_HEAVY

from ocllm.cli import main

NO_SERVER = ["--base-url", "http://127.0.0.1:9/v1", "--model", "m"]


def refused(tmp_path: Path, capsys: pytest.CaptureFixture[str], *lines: dict[str, Any] | str) -> str:
    """`ocllm run` on a suite of these lines: refused before any request, with one line; that line."""
    path = tmp_path / "suite.jsonl"
    path.write_text("".join((x if isinstance(x, str) else json.dumps(x)) + "\n" for x in lines))
    assert main(["run", "--suite", str(path), *NO_SERVER, "--out", str(tmp_path / "r")]) == 2
    err = [x for x in capsys.readouterr().err.splitlines() if x.strip()]
    assert len(err) == 1 and err[0].startswith(f"ocllm: error: {path}:"), err
    assert not (tmp_path / "r").exists()
    return err[0]


def json_line(schema: object) -> dict[str, Any]:
    return {"id": "j", "type": "json", "question": "Give JSON.", "category": "c", "schema": schema}


# --- 1. a schema's patterns ------------------------------------------------------------------------------------

CATASTROPHIC = {"type": "object", "properties": {"a": {"type": "string", "pattern": "^(a+)+$"}}}


def old_harness(tmp_path: Path, records: list[tuple[str, dict[str, Any], str]]) -> Path:
    tasks = [
        {"task_id": task_id, "category": "c", "task_type": "json", "prompt": "Give JSON.", "schema": schema,
         "raw_content": content, "raw_reasoning": None, "finish_reason": "stop", "correct": True,
         "extracted_final_answer": None}
        for task_id, schema, content in records
    ]  # fmt: skip
    path = tmp_path / "old.json"
    path.write_text(json.dumps({"run_id": "r", "lane": "A", "summary": {}, "tasks": tasks}))
    return path


@pytest.mark.slow  # a check run to its CPU limit and killed
@CPU_HEAVY
def test_a_catastrophic_pattern_is_stopped_by_its_cpu_limit_killed_and_counted_apart(tmp_path: Path) -> None:
    # Python's re takes about 50 minutes on 34 a and a "!": the check is stopped, never correct.
    keys = {"type": "object", "patternProperties": {"^(a+)+$": {"type": "integer"}}}
    src = old_harness(tmp_path, [
        ("hostile", CATASTROPHIC, json.dumps({"a": "a" * 34 + "!"})),
        ("hostile-key", keys, json.dumps({"a" * 34 + "!": 1})),
        ("fine", CATASTROPHIC, '{"a": "aaaa"}'),
        ("broken", CATASTROPHIC, '{"a": "b"}'),
    ])  # fmt: skip
    out = tmp_path / "out.json"
    assert main(["rescore", str(src), "-o", str(out)]) == 0
    document = json.loads(out.read_text())
    done = {t["task_id"]: t for t in document["tasks"]}
    for task_id in ("hostile", "hostile-key"):
        assert done[task_id]["rule"] == "schema_check_killed" and done[task_id]["correct"] is False
        assert "reached its CPU-time limit of 2 s and was killed" in done[task_id]["reason"]
    assert done["fine"]["rule"] == "valid" and done["fine"]["correct"] is True
    assert done["broken"]["rule"] == "schema_violation"
    assert "does not match" in done["broken"]["violations"][0]["message"]
    details = document["summary"]["by_type"]["json"]["details"]
    assert details["schema_checks_killed"] == 2 and details["valid"] == 1


# --- 2. bounds on suites ---------------------------------------------------------------------------------------


def test_an_absurd_count_of_instructions_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    many = [{"id": "punctuation:no_comma", "kwargs": {}}] * 21
    line = {"id": "i", "type": "instructions", "question": "Write.", "category": "c", "instructions": many}
    err = refused(tmp_path, capsys, line)
    assert "field 'instructions': 21 instructions, more than the 20 a task may hold" in err


def test_twenty_instructions_are_read(tmp_path: Path) -> None:
    from ocllm.suites import load_suite

    path = tmp_path / "suite.jsonl"
    many = [{"id": "punctuation:no_comma", "kwargs": {}}] * 20
    path.write_text(json.dumps({"id": "i", "type": "instructions", "question": "W.", "category": "c",
                                "instructions": many}) + "\n")  # fmt: skip
    assert len(load_suite(str(path)).tasks[0].instructions or []) == 20


def test_a_schema_past_the_size_bound_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    schema = {"type": "object", "properties": {f"p{i}": {"type": "string"} for i in range(100_000)}}
    err = refused(tmp_path, capsys, json_line(schema))
    assert "field 'schema': the schema holds more than 10,000 JSON values" in err


def test_tools_past_the_size_bound_are_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    properties = {f"p{i}": {"type": "string"} for i in range(6_000)}
    tool = {"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": properties}}}
    line = {"id": "t", "type": "tool_call", "question": "Call f.", "category": "c", "tools": [tool],
            "expected_calls": []}  # fmt: skip
    err = refused(tmp_path, capsys, line)
    assert "field 'tools': the task's tools hold more than 10,000 JSON values" in err


def test_a_schema_or_tools_past_the_bound_on_characters_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Three values, one of them a pattern of 100,001 characters: within the count of values, it was compiled by
    # check_schema (about 1.2 us a character) and again in every guarded validation.
    long = {"type": "object", "properties": {"a": {"type": "string", "pattern": "a" * 100_001}}}
    err = refused(tmp_path, capsys, json_line(long))
    assert err.endswith(
        "field 'schema': the schema holds more than 100,000 characters in its strings and keys (a bound on suites' "
        "schemas: docs/lanes.md, 'Bounds on suites')"
    ), err
    # A tool's description, which would travel in every request; a key counts as its characters too.
    parameters = {"type": "object", "properties": {"k" * 60_000: {"type": "string", "description": "d" * 40_001}}}
    tool = {"type": "function", "function": {"name": "f", "parameters": parameters}}
    line = {"id": "t", "type": "tool_call", "question": "Call f.", "category": "c", "tools": [tool],
            "expected_calls": []}  # fmt: skip
    err = refused(tmp_path, capsys, line)
    assert "field 'tools': the task's tools hold more than 100,000 characters in its strings and keys" in err


def test_a_schema_at_the_bound_on_characters_is_read(tmp_path: Path) -> None:
    from ocllm.suites import load_suite

    at = {"type": "object", "properties": {"a": {"type": "string", "description": ""}}}
    room = 100_000 - sum(len(x) for x in ("type", "object", "properties", "a", "type", "string", "description"))
    at["properties"]["a"]["description"] = "d" * room  # type: ignore[index]
    path = tmp_path / "suite.jsonl"
    path.write_text(json.dumps(json_line(at)) + "\n")
    assert load_suite(str(path)).tasks[0].schema == at


@pytest.mark.parametrize(
    ("schema", "loop"),
    [
        ({"$ref": "#"}, "($ref '#' at /)"),
        (
            {"$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}}, "$ref": "#/$defs/a"},
            "($ref '#/$defs/b' at /$defs/a -> $ref '#/$defs/a' at /$defs/b)",
        ),
        ({"anyOf": [{"type": "string"}, {"$ref": "#"}]}, "(anyOf/1 at / -> $ref '#' at /anyOf/1)"),
    ],
)
def test_a_schema_that_refers_to_itself_in_place_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], schema: dict[str, Any], loop: str
) -> None:
    err = refused(tmp_path, capsys, json_line(schema))
    assert f"field 'schema': the schema refers to itself without going into the value {loop}" in err


def test_a_recursive_schema_that_goes_into_the_value_is_read_and_validates(tmp_path: Path) -> None:
    tree = {"type": "object", "properties": {"children": {"type": "array", "items": {"$ref": "#"}}},
            "additionalProperties": False}  # fmt: skip
    src = old_harness(tmp_path, [("ok", tree, '{"children": [{"children": []}]}'), ("bad", tree, '{"x": 1}')])
    out = tmp_path / "out.json"
    assert main(["rescore", str(src), "-o", str(out)]) == 0
    assert [t["rule"] for t in json.loads(out.read_text())["tasks"]] == ["valid", "schema_violation"]


@pytest.mark.parametrize(
    ("prop", "said"),
    [
        ({"type": "strng"}, "parameters: not a valid JSON Schema (draft 2020-12)"),
        ({"type": "integer", "minimum": "zero"}, "'zero' is not of type 'number' at /properties/n/minimum"),
        ({"$ref": "#/$defs/missing"}, "does not resolve inside the schema"),
    ],
)
def test_a_tools_property_schemas_are_checked_as_json_schema(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], prop: dict[str, Any], said: str
) -> None:
    tool = {"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {"n": prop}}}}
    line = {"id": "t", "type": "tool_call", "question": "Call f.", "category": "c", "tools": [tool],
            "expected_calls": [{"name": "f", "arguments": {"n": [0]}}]}  # fmt: skip
    err = refused(tmp_path, capsys, line)
    assert "field 'tools': tool 1 (f): parameters: " in err and said in err


def test_bfcls_dict_type_of_the_parameters_is_still_read(tmp_path: Path) -> None:
    from ocllm.suites import load_suite

    tool = {"type": "function", "function": {"name": "f", "parameters": {
        "type": "dict", "properties": {"n": {"type": "integer", "minimum": 0}}}}}  # fmt: skip
    path = tmp_path / "suite.jsonl"
    path.write_text(json.dumps({"id": "t", "type": "tool_call", "question": "Call f.", "category": "c",
                                "tools": [tool], "expected_calls": []}) + "\n")  # fmt: skip
    assert load_suite(str(path)).tasks[0].tools == [tool]


def test_an_integer_answer_past_pythons_digit_limit_is_refused_naming_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    line = '{"id": "m", "type": "math", "question": "How many?", "category": "c", "answer": ' + "7" * 5_000 + "}"
    err = refused(tmp_path, capsys, line)
    assert "a JSON integer of more than 4,300 digits, the most Python reads from text" in err


def test_a_math_gold_longer_than_an_answer_is_read_in_is_refused_naming_the_limit(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    line = {"id": "m", "type": "math", "question": "How many?", "category": "c", "answer": "7" * 4_001}
    err = refused(tmp_path, capsys, line)
    assert "field 'answer': a gold of 4,001 characters, longer than the 4,000 a math answer is read in" in err


# --- 2. one rule for an IFEval row, imported or rescored from lm-eval --------------------------------------------


NULLS = {"num_highlights": None, "relation": None, "num_words": None, "keywords": None, "language": None,
         "end_phrase": None, "section_spliter": None, "num_sections": None}  # fmt: skip


def ifeval_doc(**changes: Any) -> dict[str, Any]:
    doc = {"key": 1001, "prompt": "Describe a river without commas.", "instruction_id_list": ["punctuation:no_comma"],
           "kwargs": [dict(NULLS)]}  # fmt: skip
    doc.update(changes)
    return {k: v for k, v in doc.items() if v is not None}


@pytest.mark.parametrize(
    ("changes", "said"),
    [({"key": None}, "no 'key'"), ({"prompt": 5}, "'prompt' is not text"), ({"prompt": None}, "no 'prompt'")],
)
def test_an_ifeval_row_the_importer_refuses_is_not_scored_from_lm_eval(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], changes: dict[str, Any], said: str
) -> None:
    bad = ifeval_doc(**changes)
    # The importer refuses the row in one line.
    rows = tmp_path / "input_data.jsonl"
    rows.write_text(json.dumps(bad) + "\n")
    assert main(["import", "ifeval", str(rows), "-o", str(tmp_path / "s.jsonl")]) == 2
    err = [x for x in capsys.readouterr().err.splitlines() if x.strip()]
    assert len(err) == 1 and said in err[0], err
    # lm-eval's line with the same doc is left out with the same why; a good doc beside it is scored.
    def line(doc_id: int, doc: dict[str, Any]) -> dict[str, Any]:
        return {"doc_id": doc_id, "doc": doc, "target": 0, "resps": [["A calm river."]],
                "filtered_resps": ["A calm river."], "filter": "none", "prompt_level_strict_acc": True,
                "inst_level_strict_acc": [True], "prompt_level_loose_acc": True, "inst_level_loose_acc": [True]}
    folder = tmp_path / "lm"
    folder.mkdir()
    samples = folder / "samples_ifeval_2026-12-01T10-00-00.000000.jsonl"
    samples.write_text(json.dumps(line(0, ifeval_doc(key=1002))) + "\n" + json.dumps(line(1, bad)) + "\n")
    out = tmp_path / "out.json"
    assert main(["rescore", "--from", "lm-eval", str(samples), "-o", str(out)]) == 0
    document = json.loads(out.read_text())
    assert [t["task_id"] for t in document["tasks"]] == ["ifeval/1002"]
    (left_out,) = document["summary"]["unscorable_records"]
    assert said in left_out["reason"]


def test_a_suite_line_past_its_size_is_refused_before_it_is_parsed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A line of 8 MB and one byte, not JSON: refused by its size, read no further than the bound, never parsed
    # (it was "invalid JSON", after the whole file was read and the line parsed).
    line = {"id": "q0", "type": "mcq", "question": "Which?", "options": ["a", "b"], "answer": "A", "category": "c"}
    err = refused(tmp_path, capsys, line, "x" * (8 * 1024 * 1024 + 1), {**line, "id": "q2"})
    assert err.endswith(
        f"suite.jsonl:2: a line of more than {8 * 1024 * 1024:,} bytes; a suite line holds at most 8 MB "
        '(docs/lanes.md, "Bounds on suites")'
    ), err


def test_a_suite_line_at_its_size_is_read(tmp_path: Path) -> None:
    # The bound is on the line, not on the file: a question that fills the line to the byte is a task.
    from ocllm.suites import MAX_LINE_BYTES, load_suite

    line = {"id": "q0", "type": "mcq", "question": "", "options": ["a", "b"], "answer": "A", "category": "c"}
    room = MAX_LINE_BYTES - len(json.dumps(line))
    path = tmp_path / "suite.jsonl"
    path.write_text(json.dumps({**line, "question": "x" * room}) + "\n" + json.dumps({**line, "id": "q1"}) + "\n")
    tasks = load_suite(str(path)).tasks
    assert [len(t.question) for t in tasks] == [room, 0]


def test_an_absurd_count_of_required_substrings_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Each is searched for in the whole answer and each missing one listed in the decision: 100,000 cost 1.4 s of
    # CPU a decision on a 34,000-character answer, and a suite line of 8 MB holds 800,000.
    line = {"id": "s", "type": "required_substrings", "question": "Say.", "category": "c",
            "required_substrings": [f"w{i}" for i in range(101)]}  # fmt: skip
    err = refused(tmp_path, capsys, line)
    assert "field 'required_substrings': 101 substrings, more than the 100 a task may hold" in err
    path = tmp_path / "at.jsonl"
    path.write_text(json.dumps({**line, "required_substrings": line["required_substrings"][:100]}) + "\n")
    from ocllm.suites import load_suite

    assert len(load_suite(str(path)).tasks[0].required_substrings or []) == 100
