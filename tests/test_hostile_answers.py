"""Issue 29, a second probe of hostile answers (model outputs), whose checks run in the decision workers: each
answer ends with a recorded verdict within its check's CPU-time limit, never a traceback nor gigabytes. Real
files in the old harness's format, the real `ocllm rescore`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ocllm.cli import main


def rescore(tmp_path: Path, records: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """`ocllm rescore` of these records: each task's output record, by id."""
    src = tmp_path / "old.json"
    src.write_text(json.dumps({"run_id": "r", "lane": "A", "summary": {}, "tasks": records}))
    out = tmp_path / "out.json"
    assert main(["rescore", str(src), "-o", str(out)]) == 0
    return {t["task_id"]: t for t in json.loads(out.read_text())["tasks"]}


def json_record(task_id: str, schema: dict[str, Any], content: str) -> dict[str, Any]:
    return {"task_id": task_id, "category": "c", "task_type": "json", "prompt": "Give JSON.", "schema": schema,
            "raw_content": content, "raw_reasoning": None, "finish_reason": "stop"}  # fmt: skip


# --- json: a schema without patterns costs without bound too ---------------------------------------------------


def test_schema_checks_without_patterns_are_limited_by_cpu_time_too(tmp_path: Path) -> None:
    # uniqueItems on objects (which do not sort) compares every pair: 8,000 objects are 32 million comparisons
    # (about a minute of CPU; 100,000 are hours), run bare in the worker because the schema holds no pattern.
    unique = {"type": "array", "uniqueItems": True}
    done = rescore(tmp_path, [
        json_record("unique", unique, json.dumps([{"a": i} for i in range(8_000)])),
        json_record("fine", unique, json.dumps([{"a": 1}, {"a": 2}])),
        json_record("twice", unique, json.dumps([{"a": 1}, {"a": 1}])),
    ])  # fmt: skip
    assert done["unique"]["rule"] == "schema_check_killed" and done["unique"]["correct"] is False
    assert "reached its CPU-time limit of 2 s and was killed" in done["unique"]["reason"]
    assert done["fine"]["rule"] == "valid" and done["fine"]["correct"] is True
    assert done["twice"]["rule"] == "schema_violation" and done["twice"]["violations"][0]["keyword"] == "uniqueItems"


def test_a_float_multiple_of_and_an_integer_past_a_float_s_range_is_a_verdict_not_a_traceback(
    tmp_path: Path,
) -> None:
    # jsonschema divides the integer by the float before it guards against an overflow: OverflowError, which
    # ended `ocllm rescore` with a traceback (and a run's decision with an error).
    schema = {"type": "number", "multipleOf": 1e-300}
    done = rescore(tmp_path, [json_record("big", schema, "9" * 4_000), json_record("small", schema, "1e300")])
    big = done["big"]
    assert big["rule"] == "schema_check_killed" and big["correct"] is False
    assert "OverflowError" in big["reason"]
    assert done["small"]["rule"] == "schema_violation"


def test_violations_are_kept_as_they_come_twenty_by_place_the_rest_counted(tmp_path: Path) -> None:
    # Kept as they come, not all held and sorted: 1,000 violations of which the first 20 by place are kept.
    schema = {"type": "array", "items": {"type": "string"}}
    done = rescore(tmp_path, [json_record("many", schema, json.dumps(list(range(1_000))))])
    many = done["many"]
    assert many["rule"] == "schema_violation" and many["violations_left_out"] == 980
    assert [v["path"] for v in many["violations"][:3]] == ["$[0]", "$[1]", "$[2]"]
    assert many["violations"][-1]["path"] == "$[19]"


def test_a_value_nested_hundreds_deep_crosses_to_the_guarded_check(tmp_path: Path) -> None:
    # The parsed value was pickled to the guarded child: 400 objects in arrays (800 levels) are past pickle's
    # recursion limit, a traceback in the worker before any limit applied (a schema with a pattern, before every
    # schema went there; a recursive one after).
    schema = {"type": "object", "properties": {"a": {"pattern": "^x"}}}
    tree = {"type": "object", "properties": {"children": {"type": "array", "items": {"$ref": "#"}}}}
    done = rescore(tmp_path, [
        json_record("deep", schema, '{"c": [' * 400 + "{}" + "]}" * 400),
        json_record("tree", tree, '{"children": [' * 400 + "{}" + "]}" * 400),
    ])  # fmt: skip
    assert done["deep"]["rule"] == "valid" and done["deep"]["correct"] is True
    assert done["tree"]["rule"] == "too_deep_to_validate" and done["tree"]["correct"] is False


# --- instructions: every check reads the whole answer, up to eight times -----------------------------------------


def instructions_record(task_id: str, instructions: list[dict[str, Any]], content: str) -> dict[str, Any]:
    return {"task_id": task_id, "task_type": "instructions", "category": "ifeval", "prompt": "Write.",
            "instructions": instructions, "raw_content": content, "finish_reason": "stop"}  # fmt: skip


def test_the_checks_of_a_long_answer_are_limited_by_cpu_time_killed_and_counted_apart(tmp_path: Path) -> None:
    # 20 instructions (the most a task holds) that read every letter of a 3 MB answer in each of IFEval's eight
    # loose variants: about a minute of CPU in the worker, with no limit.
    capitals = [{"id": "change_case:english_capital", "kwargs": {}}] * 20
    no_comma = [{"id": "punctuation:no_comma", "kwargs": {}}, {"id": "change_case:english_lowercase", "kwargs": {}}]
    src = tmp_path / "old.json"
    src.write_text(json.dumps({"lane": "A", "tasks": [
        instructions_record("huge", capitals, "shout " * 500_000),
        instructions_record("long", no_comma, "a calm long answer " * 4_000),  # 76,000 characters, checked
        instructions_record("short", no_comma, "a calm short answer"),
    ]}))  # fmt: skip
    out = tmp_path / "out.json"
    assert main(["rescore", str(src), "-o", str(out)]) == 0
    document = json.loads(out.read_text())
    done = {t["task_id"]: t for t in document["tasks"]}
    huge = done["huge"]
    assert huge["rule"] == "check_killed" and huge["correct"] is False and huge["correct_loose"] is False
    assert "reached its CPU-time limit of 10 s and were killed" in huge["reason"]
    assert huge["verdicts"] == [] and huge["instructions_followed"] == [False] * 20
    for task_id in ("long", "short"):
        assert done[task_id]["rule"] == "all_followed" and done[task_id]["instructions_followed"] == [True, True]
    assert "lowercase" in done["long"]["verdicts"][1]["measured"]
    details = document["summary"]["by_type"]["instructions"]["details"]
    assert details["instruction_checks_killed"] == 1 and details["instructions"] == 4
    assert details["prompt_level_strict"] == round(2 / 3, 6)


def test_an_answer_of_megabytes_in_lowercase_is_counted_not_listed(tmp_path: Path) -> None:
    # english_capital listed every lowercase letter as (index, letter) to report their count and the first:
    # 530 MB for a 5 MB answer. Checked here in a process limited to 400 MB of address space.
    import subprocess
    import sys

    code = (
        "import resource; resource.setrlimit(resource.RLIMIT_AS, (400 * 2**20, 400 * 2**20))\n"
        "from ocllm.scoring.instructions.checks import CHECKS\n"
        "for check in ('change_case:english_capital', 'change_case:english_lowercase'):\n"
        "    text = ('a' if check.endswith('capital') else 'A') * 5_000_000\n"
        "    print(CHECKS[check].run(text, {}).measured)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-500:]
    assert done.stdout.splitlines() == [
        "lowercase letters: 5000000, the first 'a' at 0; needed none",
        "capital letters: 5000000, the first 'A' at 0; needed none",
    ]


# --- reading a saved run: one long answer -----------------------------------------------------------------------


def test_one_long_answer_is_read_in_pieces_that_grow(tmp_path: Path) -> None:
    # ijson's C parser costs by the pieces a value spans times its length: an answer of 40 MB (hermes-format calls,
    # full of escaped quotes) read in 64 KB pieces took over a minute of CPU, twice (the file is read in two
    # passes). A CPU-time limit of 30 s on the whole rescore, which reads it in about 3 s.
    import resource
    import subprocess
    import sys

    call = '<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>'
    record = json_record("long", {"type": "object"}, call * 550_000)
    src = tmp_path / "old.json"
    src.write_text(json.dumps({"lane": "A", "tasks": [record]}))
    assert src.stat().st_size > 40_000_000

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_CPU, (30, 30))

    out = tmp_path / "out.json"
    done = subprocess.run([sys.executable, "-m", "ocllm", "rescore", str(src), "-o", str(out)], capture_output=True,
                          text=True, preexec_fn=limit, timeout=600)  # fmt: skip
    assert done.returncode == 0, done.stderr[-500:]
    assert json.loads(out.read_text())["tasks"][0]["rule"] == "not_json"
