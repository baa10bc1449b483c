"""Json tasks (issue 22): the room's rules J1-J7 (visible answer only, empty answers, bare or one fenced block,
parse errors with their position, schema violations with their paths, offline schemas, truncation), on answers
written here; a bad schema refused through `ocllm run`, an old-harness file rescored through the CLI, and a run
against the simulator."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ocllm.cli import main
from ocllm.models import Sample, Task
from ocllm.scoring import decide, task_types
from ocllm.scoring.json_answer.fields import JsonTask
from ocllm.scoring.task_type import PromptSettings
from ocllm.sim import SimConfig, SimServer

PRICES = {
    "type": "object",
    "required": ["items"],
    "properties": {
        "items": {"type": "array", "items": {"type": "object", "properties": {"price": {"minimum": 0}}}},
        "name": {"type": "string"},
    },
}


def task(schema: dict[str, Any] | None = None) -> Task:
    return JsonTask(id="t", question="Give JSON.", schema=schema, category="c")


def answer(content: str, schema: dict[str, Any] | None = None, **sample: Any) -> Any:
    return decide(task(schema), Sample(task_id="t", content=content, **sample))


def json_error(text: str) -> json.JSONDecodeError:
    """What Python's own json.loads says of the text: the position a decision must report."""
    with pytest.raises(json.JSONDecodeError) as caught:
        json.loads(text)
    return caught.value


def test_a_bare_answer_is_the_whole_visible_answer_surrounding_whitespace_allowed() -> None:
    content = '\n  {"b": 1, "a": [true, null]}  \n'
    d = answer(content)
    assert d.correct is True and d.rule == "parsed" and d.extraction_method == "bare" and d.parsed is True
    assert d.valid is None and d.block is not None and d.block.kind == "bare"
    assert content[d.block.start : d.block.end] == '{"b": 1, "a": [true, null]}'
    assert d.extracted_final_answer == '{"a":[true,null],"b":1}'  # canonical: keys sorted, compact


@pytest.mark.parametrize("label", ["json", "", "JSON"])
def test_one_fenced_block_with_or_without_json_is_read(label: str) -> None:
    content = f"```{label}\n[1, 2,\n 3]\n```"
    d = answer(content)
    assert d.correct is True and d.extraction_method == "fenced" and d.block is not None
    assert d.block.label == label and d.block.closed is True and d.prose_outside == 0
    assert content[d.block.start : d.block.end] == "[1, 2,\n 3]\n"
    assert d.extracted_final_answer == "[1,2,3]"


def test_prose_around_one_fenced_block_is_accepted_and_counted() -> None:
    content = 'Here is the object:\n```json\n{"name": "x", "items": []}\n```\nHope it helps!'
    d = answer(content, PRICES)
    assert d.correct is True and d.rule == "valid" and d.valid is True and d.schema_draft == "2020-12"
    assert d.prose_outside == len("Hereistheobject:Hopeithelps!")
    assert d.block is not None and content[d.block.start : d.block.end] == '{"name": "x", "items": []}\n'


def test_json_inside_prose_without_a_fence_is_not_hunted_for() -> None:
    d = answer('Sure: {"a": 1}')
    assert d.correct is False and d.rule == "not_json" and d.extracted_final_answer is None
    assert d.parse_error is not None and d.parse_error.offset == json_error('Sure: {"a": 1}').pos == 0


def test_two_fenced_blocks_are_their_own_ambiguity_and_not_credited() -> None:
    content = '```json\n{"a": 1}\n```\nor\n```json\n{"a": 2}\n```'
    d = answer(content)
    assert d.correct is False and d.ambiguity == "several_blocks" and d.rule == "several_blocks"
    assert d.extracted_final_answer is None and d.block is None
    assert [content[b.start : b.end] for b in d.fenced_blocks] == ['{"a": 1}\n', '{"a": 2}\n']


def test_one_block_labelled_another_language_is_not_read() -> None:
    d = answer('```python\n{"a": 1}\n```')
    assert d.correct is False and d.rule == "not_a_json_block" and d.extracted_final_answer is None
    assert d.fenced_blocks[0].label == "python"


@pytest.mark.parametrize(
    "text",
    ['{"a": 1,\n "b": 2,,\n "c": 3}', '{"a": [1, 2}', "[1, 2, 3", '{"a": NaN}', "{'a': 1}", '{"a": 1} {"b": 2}'],
)
def test_invalid_json_gives_the_parse_error_at_json_loads_position(text: str) -> None:
    content = f"<think>let me write it</think>Result:\n```json\n{text}\n```"
    d = answer(content)
    assert d.correct is False and d.rule == "not_json" and d.extracted_final_answer is None
    error = d.parse_error
    assert error is not None
    body = text + "\n"  # the block's body, as read
    if "NaN" in text:
        # json.loads takes NaN; RFC 8259 does not: refused where it stands.
        assert error.offset == body.index("NaN") and "NaN is not JSON" in error.message
        assert (error.line, error.column) == (1, body.index("NaN") + 1)
    else:
        expected = json_error(body)
        assert (error.message, error.line, error.column, error.offset) == (
            expected.msg, expected.lineno, expected.colno, expected.pos,
        )  # fmt: skip
    # The raw offset points at the same character in the raw content (the <think> block is in it).
    assert error.raw_offset == content.index("```json\n") + len("```json\n") + error.offset
    assert f"line {error.line}, column {error.column}" in d.reason


def test_schema_violations_each_with_its_path_all_of_them() -> None:
    content = '{"name": 7, "items": [{"price": 3}, {"price": 0}, {"price": -1}, {"price": -2.5}]}'
    d = answer(content, PRICES)
    assert d.correct is False and d.parsed is True and d.valid is False and d.rule == "schema_violation"
    assert [(v.path, v.message, v.keyword) for v in d.violations] == [
        ("$.items[2].price", "-1 is less than the minimum of 0", "minimum"),
        ("$.items[3].price", "-2.5 is less than the minimum of 0", "minimum"),
        ("$.name", "7 is not of type 'string'", "type"),
    ]
    assert d.violations[0].schema_path == "/properties/items/items/properties/price/minimum"
    assert d.violations_left_out == 0 and "in 3 place(s)" in d.reason
    assert d.extracted_final_answer is not None  # a JSON value was given: a wrong answer, not no answer


def test_many_violations_are_kept_to_the_first_twenty_and_the_rest_counted() -> None:
    schema = {"type": "array", "items": {"type": "string"}}
    d = answer(json.dumps(list(range(25))), schema)
    assert len(d.violations) == 20 and d.violations_left_out == 5
    assert d.violations[0].path == "$[0]" and d.violations[19].path == "$[19]"


def test_the_schema_draft_is_its_own_schema_keyword() -> None:
    # Draft 4's exclusiveMaximum is a boolean beside maximum; 2020-12 would refuse that schema.
    schema = {"$schema": "http://json-schema.org/draft-04/schema#", "maximum": 5, "exclusiveMaximum": True}
    d = answer("5", schema)
    assert d.schema_draft == "4" and d.valid is False and d.violations[0].keyword == "maximum"


def test_references_inside_the_schema_are_followed() -> None:
    schema = {"$defs": {"positive": {"minimum": 1}}, "properties": {"n": {"$ref": "#/$defs/positive"}}}
    assert answer('{"n": 0}', schema).violations[0].path == "$.n"
    assert answer('{"n": 2}', schema).correct is True


def test_think_blocks_are_removed_and_the_reasoning_never_read() -> None:
    d = answer('<think>```json\n{"a": 1}\n``` and [1,</think>\n{"ok": true}', reasoning='{"other": 1}')
    assert d.correct is True and d.extraction_method == "bare" and d.extracted_final_answer == '{"ok":true}'
    only_reasoning = answer("<think>{}</think>", reasoning='{"a": 1}')
    assert only_reasoning.correct is False and only_reasoning.ambiguity == "empty_answer"
    assert "reasoning is not read" in only_reasoning.reason


def test_an_empty_answer_is_its_own_ambiguity_and_no_answer() -> None:
    d = answer("  \n ")
    assert d.correct is False and d.rule == "empty_answer" and d.ambiguity == "empty_answer"
    assert d.extracted_final_answer is None and d.parse_error is None
    assert answer("").rule == "empty_answer"


def test_a_truncated_answer_is_checked_as_it_stands_and_flagged() -> None:
    cut = answer('```json\n{"items": [1, 2', finish_reason="length")
    assert cut.truncated is True and cut.rule == "not_json" and cut.block is not None and cut.block.closed is False
    assert cut.parse_error is not None and cut.parse_error.offset == json_error('{"items": [1, 2').pos
    assert "checked as it stands" in cut.reason
    whole = answer('{"a": 1}', finish_reason="length")
    assert whole.correct is True and whole.truncated is True and "checked as it stands" in whole.reason


def suite(tmp_path: Path, **line: Any) -> Path:
    path = tmp_path / "suite.jsonl"
    path.write_text(json.dumps({"id": "j1", "type": "json", "question": "Give JSON.", "category": "c", **line}) + "\n")
    return path


@pytest.mark.parametrize(
    ("schema", "said"),
    [
        ({"type": "nope"}, "field 'schema': not a valid JSON Schema (draft 2020-12)"),
        ({"minimum": "zero"}, "'zero' is not of type 'number' at /minimum"),
        ({"$schema": "http://example.com/my-draft"}, "unknown $schema 'http://example.com/my-draft'"),
        ({"$ref": "https://example.com/item.json"}, "is not followed: ocllm resolves references inside the schema"),
        ({"properties": {"a": {"$ref": "#/$defs/missing"}}}, "does not resolve inside the schema"),
        ([{"type": "object"}], "a JSON Schema object is expected"),
    ],
)
def test_a_bad_schema_is_refused_in_one_line_before_any_request(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], schema: object, said: str
) -> None:
    path = suite(tmp_path, schema=schema)
    assert main(["run", "--suite", str(path), "--base-url", "http://127.0.0.1:9/v1", "--model", "m",
                 "--out", str(tmp_path / "r")]) == 2  # fmt: skip
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"ocllm: error: {path}:1: ") and said in err[0], err
    assert not (tmp_path / "r").exists()


def test_an_old_harness_file_with_json_tasks_is_rescored_through_the_cli(tmp_path: Path) -> None:
    def record(task_id: str, content: str, **extra: Any) -> dict[str, Any]:
        return {"task_id": task_id, "category": "format", "task_type": "json", "prompt": "Give JSON.",
                "raw_content": content, "raw_reasoning": None, "finish_reason": "stop", "correct": True,
                "extracted_final_answer": None, **extra}  # fmt: skip

    tasks = [
        record("ok", '```json\n{"items": [{"price": 1}]}\n```', schema=PRICES),
        record("bad", '{"items": [{"price": -1}]}', schema=PRICES),
        record("prose", "I cannot do that."),
    ]
    src = tmp_path / "old.json"
    src.write_text(json.dumps({"run_id": "r", "lane": "A", "summary": {}, "tasks": tasks}))
    out = tmp_path / "out.json"
    assert main(["rescore", str(src), "-o", str(out)]) == 0
    done = {t["task_id"]: t for t in json.loads(out.read_text())["tasks"]}
    assert done["ok"]["correct"] is True and done["ok"]["rule"] == "valid" and done["ok"]["schema"] == PRICES
    assert done["bad"]["correct"] is False and done["bad"]["violations"][0]["path"] == "$.items[0].price"
    assert done["prose"]["rule"] == "not_json" and done["prose"]["parse_error"]["offset"] == 0
    # Its own output rescores to the same decisions.
    again = tmp_path / "again.json"
    assert main(["rescore", str(out), "-o", str(again)]) == 0
    assert [t["rule"] for t in json.loads(again.read_text())["tasks"]] == ["valid", "schema_violation", "not_json"]
    # The report draws each decision's evidence: the block read, the violation with its path, the parse error.
    assert main(["report", str(out), "-o", str(tmp_path / "rep")]) == 0
    md = (tmp_path / "rep" / "report.md").read_text()
    assert r"schema: $.items\[0\].price: -1 is less than the minimum of 0" in md  # Markdown escapes brackets
    assert "parse error: Expecting value at line 1, column 1 (char 0; content char 0)" in md
    assert "block: fenced (json), content chars 8-34" in md


def test_a_run_against_the_simulator_says_its_plain_sentence_is_not_json(tmp_path: Path) -> None:
    path = suite(tmp_path, schema={"type": "object"})
    with SimServer(SimConfig()) as sim:
        assert main(["run", "--suite", str(path), "--base-url", sim.base_url, "--model", "sim-baseline",
                     "--out", str(tmp_path / "r")]) == 0  # fmt: skip
    metrics = json.loads((tmp_path / "r" / "metrics.json").read_text())
    (record,) = metrics["tasks"]
    sentence = json.loads((tmp_path / "r" / "samples.jsonl").read_text().splitlines()[0])["content"]
    assert record["rule"] == "not_json" and record["correct"] is False and record["extraction_method"] == "bare"
    expected = json_error(sentence.strip())
    assert (record["parse_error"]["line"], record["parse_error"]["column"]) == (expected.lineno, expected.colno)
    details = metrics["summary"]["by_type"]["json"]["details"]
    assert details["answers"] == 1 and details["parse_errors"] == 1 and details["parsed"] == 0


def test_the_template_may_show_the_schema() -> None:
    json_type = task_types.of("json")

    def user(task: Task, template: str) -> str:
        (message,) = json_type.prompt(task, PromptSettings(template=template))  # no system prompt: one message
        assert message["role"] == "user"
        return message["content"]

    template = "{question}\n\nValid against: {schema}"
    assert user(task({"type": "object"}), template) == 'Give JSON.\n\nValid against: {"type": "object"}'
    assert user(task(), template) == "Give JSON.\n\nValid against: "
    assert user(task(), json_type.default_template) == "Give JSON."


# --- review of issue 22: hostile answers -------------------------------------------------------------------------


def test_a_value_nested_too_deeply_for_a_recursive_schema_is_not_credited_nor_a_crash() -> None:
    from ocllm.models import Sample
    from ocllm.scoring import decide

    tree = {"type": "object", "properties": {"children": {"type": "array", "items": {"$ref": "#"}}}}
    task = JsonTask(id="t", question="A tree.", schema=tree, category="c")
    # 400 levels parse but exhaust the validator's recursion; 5,000 are too deep to parse at all.
    for depth, rule in ((400, "too_deep_to_validate"), (5_000, "not_json")):
        text = '{"children": [' * depth + "{}" + "]}" * depth
        d = decide(task, Sample(task_id="t", content=text))
        assert d.correct is False and d.rule == rule, (depth, d.reason)


def test_hostile_texts_get_their_positions_in_one_pass() -> None:
    from ocllm.scoring.json_answer.extract import fenced_blocks, parse

    # A string that never closes, after a NaN: the NaN's position, found in one pass.
    text = '[NaN] "' + '\\"' * 100_000
    parsed = parse(text)
    assert not parsed.ok and parsed.offset == 1 and "NaN is not JSON" in parsed.message
    # A fence line of 200,000 characters is read once.
    # (a backtick in its info string: no opening fence; the last line opens one that never closes)
    assert [b.label for b in fenced_blocks("```" + "a" * 200_000 + "`\n{}\n```")] == [""]
    assert [b.label for b in fenced_blocks("```json extra words\n{}\n```")] == ["json"]
    # A number past a float's range is no JSON value (json would read it as Infinity).
    big = parse('{"a": 1e400}')
    assert not big.ok and big.offset == 6 and "past the range of a number" in big.message
