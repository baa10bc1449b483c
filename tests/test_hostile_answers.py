"""Issue 29, a second probe of hostile answers (model outputs), whose checks run in the decision workers: each
answer ends with a recorded verdict within its check's CPU-time limit, never a traceback nor gigabytes. Real
files in the old harness's format, the real `ocllm rescore`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from helpers import CPU_HEAVY

from ocllm.cli import main
from ocllm.scoring.math.fields import MathTask
from ocllm.scoring.mcq.fields import McqTask


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


@pytest.mark.slow  # checks run to their CPU limit and killed
@CPU_HEAVY
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


@pytest.mark.slow  # checks run to their CPU limit and killed
@CPU_HEAVY
# The longest of the suite: 116-131 s beside four CPU hogs at a load of 15-19; a load of 50 could pass 300 s.
@pytest.mark.timeout(600)
def test_the_checks_of_a_long_answer_are_limited_by_cpu_time_killed_and_counted_apart(tmp_path: Path) -> None:
    # 20 instructions (the most a task holds) that read every letter of a 15 MB answer in each of IFEval's eight
    # loose variants: about 50 s of CPU in the worker with no limit, five times the limit, so that a fast machine
    # still reaches it (a 3 MB answer took 10.6 s on a 2-core AMD EPYC: it was done, not killed, when unloaded).
    capitals = [{"id": "change_case:english_capital", "kwargs": {}}] * 20
    no_comma = [{"id": "punctuation:no_comma", "kwargs": {}}, {"id": "change_case:english_lowercase", "kwargs": {}}]
    src = tmp_path / "old.json"
    src.write_text(json.dumps({"lane": "A", "tasks": [
        instructions_record("huge", capitals, "shout " * 2_500_000),
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


@pytest.mark.slow  # long answers decided in guarded children
@CPU_HEAVY
@pytest.mark.timeout(600)  # as the test above
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


# --- math and mcq: the statements of one region ------------------------------------------------------------------


def _cpu_limited_rescore(tmp_path: Path, records: list[dict[str, Any]], cpu_s: int) -> dict[str, dict[str, Any]]:
    """The real `ocllm rescore` in a process that the kernel stops after `cpu_s` seconds of CPU time: finishing at
    all is the bound on the work, whatever the machine's load (no wall clock is read)."""
    import resource
    import subprocess
    import sys

    src = tmp_path / "old.json"
    src.write_text(json.dumps({"run_id": "r", "lane": "A", "summary": {}, "tasks": records}))
    out = tmp_path / "out.json"

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_CPU, (cpu_s, cpu_s))

    done = subprocess.run([sys.executable, "-m", "ocllm", "rescore", str(src), "-o", str(out)], capture_output=True,
                          text=True, preexec_fn=limit, timeout=900)  # fmt: skip
    assert done.returncode == 0, done.stderr[-500:]
    document = json.loads(out.read_text())
    return {t["task_id"]: t for t in document["tasks"]} | {"": document["summary"]}


def math_record(task_id: str, content: str, gold: str, reasoning: str | None = None) -> dict[str, Any]:
    return {"task_id": task_id, "task_type": "math", "category": "c", "question": "q", "expected_answer": gold,
            "raw_content": content, "raw_reasoning": reasoning, "finish_reason": "stop"}  # fmt: skip


@pytest.mark.slow  # checks run to their CPU limit
@CPU_HEAVY
def test_hostile_statements_end_with_a_recorded_verdict_within_a_cpu_time_limit(tmp_path: Path) -> None:
    # The red team's answers: "The answer is 1. " 300,000 times (no verdict after 120 s of CPU), 300,000 boxes
    # then \boxed{42} (14.6 s), 500,000 Arabic-Indic digits after "Final answer:" (3.8 s in the screen alone),
    # 60,000 MCQ "FINAL:" claims (4.5 s). Each decision's cost was about 50 µs a statement, without a bound.
    mcq = {"task_id": "mcq", "task_type": "mcq", "category": "c", "question": "q", "options": ["w", "x", "y", "z"],
           "expected_answer": "A", "raw_content": "FINAL: A\nFINAL: B\n" * 30_000, "finish_reason": "stop"}  # fmt: skip
    done = _cpu_limited_rescore(tmp_path, [
        math_record("answer_is", "The answer is 1. " * 300_000, "1"),
        math_record("boxes", "\\boxed{1}" * 300_000 + "\\boxed{42}", "42"),
        math_record("digits", "Final answer: " + "\u0661" * 500_000, "1"),
        # Within the bound on statements, the screen takes a run of digits outside ASCII whole (it walked them
        # one by one in Python) and it goes no further: a literal of 50,000 digits.
        math_record("fewer_digits", "Final answer: " + "\u0661" * 50_000, "1"),
        # The visible answer decides; a reasoning past the bound is not read, and the decision says so.
        math_record("reasoning", "\\boxed{42}", "42", reasoning="\\boxed{1}" * 300_000),
        math_record("below", "\\boxed{1}" * 5_000 + "\\boxed{42}", "42"),  # far above any real answer: read
        # Few places, long values: each statement's value ran to the end of the one line, read again for each of
        # the 1,000 (quadratic: about 270 s of CPU for this half megabyte).
        math_record("long_values", ("The answer is " + "x" * 500 + " ") * 1_000, "1"),
        mcq,
    ], cpu_s=30)  # fmt: skip
    for task_id, places in (("answer_is", "300,000"), ("boxes", "300,001"), ("mcq", "60,000")):
        decision = done[task_id]
        assert (decision["rule"], decision["ambiguity"], decision["correct"]) == (
            "too_many_statements", "too_many_statements", False
        ), task_id
        assert decision["reason"].startswith(f"the visible content was not read: it holds {places} places where")
        assert "more than the bound of 10,000; not credited" in decision["reason"]
    # One statement of half a megabyte: past the bound on the characters statements span (one value of 500,014).
    assert done["digits"]["rule"] == "too_many_statements" and done["digits"]["correct"] is False
    assert "(reading stopped at 500,014)" in done["digits"]["reason"]
    fewer = done["fewer_digits"]
    assert (fewer["rule"], fewer["comparator"], fewer["correct"]) == ("equivalence_undecided", "screen", False)
    assert "a number of 50,000 digits (not all ASCII digits)" in fewer["comparison_detail"]
    reasoning = done["reasoning"]
    assert reasoning["rule"] == "final_statement" and reasoning["correct"] is True
    assert "the reasoning was not read: it holds 300,000 places" in reasoning["reason"]
    assert done["below"]["rule"] == "conflict_last" and done["below"]["correct"] is True
    long_values = done["long_values"]
    assert long_values["rule"] == "too_many_statements" and long_values["correct"] is False
    assert "its markers and boxes span more than the bound of 100,000 characters" in long_values["reason"]
    summary = done[""]
    assert summary["by_type"]["math"]["details"]["too_many_statements"] == 4
    assert summary["by_ambiguity"]["too_many_statements"] == 5


def test_the_bounds_on_statements_hold_at_their_values_exactly() -> None:
    # Counted, not timed: a region at the bound is read and decided; one place more, or one character more of
    # statements, and it is not read.
    from ocllm.models import Policy, Sample
    from ocllm.scoring.math.decide import decide_math
    from ocllm.scoring.math.statements import MAX_STATED_CHARS, MAX_STATEMENT_PLACES
    from ocllm.scoring.mcq.decide import decide_mcq
    from ocllm.scoring.mcq.statements import MAX_STATEMENT_PLACES as MCQ_PLACES

    def math(content: str) -> Any:
        task = MathTask(id="m", question="q", answer="42", category="c")
        return decide_math(task, Sample(task_id="m", content=content, finish_reason="stop"), Policy())

    at_bound = "\\boxed{1}" * (MAX_STATEMENT_PLACES - 1) + "\\boxed{42}"
    assert (math(at_bound).rule, math(at_bound).correct) == ("conflict_last", True)
    assert math("\\boxed{1}" + at_bound).rule == "too_many_statements"
    # One statement whose value runs to the end of its line: its span is "Final answer: " and the value.
    value = "4" + "2" * (MAX_STATED_CHARS - len("Final answer: ") - 1)
    assert math("Final answer: " + value).rule != "too_many_statements"
    past = math("Final answer: " + value + "2")
    assert past.rule == "too_many_statements" and past.correct is False
    assert f"reading stopped at {MAX_STATED_CHARS + 1:,}" in past.reason

    task = McqTask(id="q", question="q", options=["w", "x"], answer="A", category="c")
    for claims, rule in ((MCQ_PLACES, "final_statement"), (MCQ_PLACES + 1, "too_many_statements")):
        decision = decide_mcq(task, Sample(task_id="q", content="FINAL: A\n" * claims, finish_reason="stop"), Policy())
        assert decision.rule == rule and decision.correct is (rule == "final_statement")
    # A reasoning past the bound: the visible answer decides as ever; with none, the reasoning could have decided.
    reasoning = "FINAL: B\n" * (MCQ_PLACES + 1)
    for content, rule in (("FINAL: A", "final_statement"), ("", "too_many_statements")):
        sample = Sample(task_id="q", content=content, reasoning=reasoning, finish_reason="stop")
        decision = decide_mcq(task, sample, Policy(allow_reasoning_fallback=True))
        assert decision.rule == rule and decision.correct is (rule == "final_statement")
        assert f"the reasoning was not read: it holds {MCQ_PLACES + 1:,} places" in decision.reason
    task = MathTask(id="m", question="q", answer="42", category="c")
    sample = Sample(task_id="m", content="", reasoning="\\boxed{42}" * (MAX_STATEMENT_PLACES + 1), finish_reason="stop")
    decision = decide_math(task, sample, Policy(allow_reasoning_fallback=True))
    assert decision.rule == "too_many_statements" and decision.correct is False
    assert decision.reason.startswith("the reasoning was not read: it holds 10,001 places")


def test_statements_in_thousands_of_pieces_are_placed_by_bisection(tmp_path: Path) -> None:
    # Each of 9,999 boxes, one after each of 9,999 think blocks, was looked for in every piece of the region, twice
    # (quadratic: about 12 s of CPU). Under the bound on places, so read and decided, within 5 s of CPU time.
    import resource
    import subprocess
    import sys

    code = (
        "from ocllm.models import Policy, Sample\n"
        "from ocllm.scoring.math.fields import MathTask\n"
        "from ocllm.scoring.math.decide import decide_math\n"
        "task = MathTask(id='m', question='q', answer='1', category='c')\n"
        "content = '<think>a</think>\\\\boxed{1}' * 9_999\n"
        "d = decide_math(task, Sample(task_id='m', content=content, finish_reason='stop'), Policy())\n"
        "print(d.rule, d.correct, d.candidates[-1].text, d.candidates[-1].start)\n"
    )

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_CPU, (5, 5))

    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, preexec_fn=limit, timeout=300)
    assert done.returncode == 0, done.stderr[-500:]
    assert done.stdout.split() == ["final_statement", "True", "\\boxed{1}", str(25 * 9_999 - 9)]
