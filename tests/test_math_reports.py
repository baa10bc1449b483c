"""A suite that mixes MCQ and math tasks, through rescore, its audit, report and compare (issue 20): the figures
per task type, and each math answer's evidence (the normal forms with their steps, the comparator) drawn."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import legacy_record, write_json
from faultserver import FaultServer, answer, models
from helpers import CPU_HEAVY

from ocllm.cli import main


def math_record(task_id: str, content: str, gold: str, *, correct: bool, extracted: str | None) -> dict[str, Any]:
    """A math task in the old harness's metrics format, as its issue names the fields."""
    return {
        "task_id": task_id, "task_type": "math", "category": "algebra", "question": "q", "expected_answer": gold,
        "raw_content": content, "raw_reasoning": None, "finish_reason": "stop",
        "extracted_final_answer": extracted, "correct": correct,
    }  # fmt: skip


def lane_file(tmp_path: Path, name: str, math_contents: list[str]) -> Path:
    golds = ["\\frac{3}{4}", "26", "(1,2)"]
    tasks = [
        legacy_record("q1", "FINAL: B", extracted="B", correct=True),
        legacy_record("q2", "FINAL: C", extracted="C", correct=False),
        # The old harness's string match failed the first two although they are right.
        *[
            math_record(f"m{i}", content, gold, correct=False, extracted=None)
            for i, (content, gold) in enumerate(zip(math_contents, golds, strict=True), start=1)
        ],
    ]
    return write_json(tmp_path / f"{name}.json", {"run_id": name, "lane": name, "tasks": tasks})


A_MATH = ["So $\\boxed{0.75}$.", "**Answer:** $26.00", "The answer is $\\boxed{(2,1)}$."]
B_MATH = ["So $\\boxed{\\dfrac{3}{4}}$.", "#### 25", "Final answer: \\left( 1, 2 \\right)"]


def test_figures_per_type_and_the_math_evidence_in_rescore_audit_and_report(tmp_path: Path) -> None:
    source = lane_file(tmp_path, "A", A_MATH)
    out, audit = tmp_path / "a.rescored.json", tmp_path / "audit.md"
    assert main(["rescore", str(source), "-o", str(out), "--report", str(audit)]) == 0
    doc = json.loads(out.read_text(encoding="utf-8"))
    by_type = doc["summary"]["by_type"]
    # Hand-counted: MCQ q1 right, q2 wrong; math 0.75 = 3/4 and $26.00 = 26 right, (2,1) is not (1,2).
    assert {k: (v["total"], v["correct"]) for k, v in by_type.items()} == {"mcq": (2, 1), "math": (3, 2)}
    assert by_type["math"]["details"]["decided_by"] == {"number": 1, "string": 1, "symbolic": 1}
    tasks = {t["task_id"]: t for t in doc["tasks"]}
    assert (tasks["m2"]["extracted_final_answer"], tasks["m2"]["normalised_answer"]) == ("$26.00", "26")
    assert "trailing_zeros" in tasks["m2"]["normalisation"] and tasks["m2"]["tolerance"] is None
    assert "options" not in tasks["m2"]  # a math record carries its own fields, not MCQ's
    # The audit names the two decisions the old string match got wrong, with the comparator that decided.
    audit_text = audit.read_text(encoding="utf-8")
    assert "m1" in audit_text and "m2" in audit_text and "number" in audit_text

    report = tmp_path / "report"
    assert main(["report", str(out), "-o", str(report)]) == 0
    markdown = (report / "report.md").read_text(encoding="utf-8")
    assert "## By task type" in markdown and "| math | 2 | 3 |" in markdown
    assert "## How each answer was checked (3)" in markdown
    m3 = next(line for line in markdown.splitlines() if line.startswith("- `m3`"))
    assert "gold, normalised: (1,2)" in m3 and "compared: symbolic: different" in m3
    m2 = next(line for line in markdown.splitlines() if line.startswith("- `m2`"))
    assert "answer, normalised: 26 (currency → trailing_zeros)" in m2
    html = (report / "report.html").read_text(encoding="utf-8")
    assert 'id="task-types"' in html and "gold, normalised" in html and "trailing_zeros" in html
    assert "states <b class=\"mono\">$26.00 → 26</b>" in html  # the statement's value and its normal form


def test_compare_pairs_each_task_type_when_the_suite_mixes_them(tmp_path: Path) -> None:
    a, b = lane_file(tmp_path, "A", A_MATH), lane_file(tmp_path, "B", B_MATH)
    out = tmp_path / "cmp"
    assert main(["compare", str(a), str(b), "-o", str(out)]) == 0
    doc = json.loads((out / "comparison.json").read_text(encoding="utf-8"))
    # Hand-paired: math m1 both right; m2 A right ($26.00), B wrong (25); m3 A wrong, B right (1, 2).
    math = doc["by_type"]["math"]
    assert (math["n_paired"], math["both_correct"], math["a_wins"], math["b_wins"]) == (3, 1, 1, 1)
    assert doc["by_type"]["mcq"]["n_paired"] == 2
    flips = {f["task_id"]: (f["a_extracted"], f["b_extracted"]) for f in doc["flips"]}
    assert flips == {"m2": ("$26.00", "25"), "m3": ("(2,1)", "\\left( 1, 2 \\right)")}
    assert "## By task type" in (out / "comparison.md").read_text(encoding="utf-8")
    assert 'id="task-types"' in (out / "comparison.html").read_text(encoding="utf-8")



def scripted_run(tmp: Path, name: str, replies: list[str], out: Path) -> int:
    """A real run of the mixed suite against the scriptable server on 127.0.0.1, answering `replies` in order."""
    suite = tmp / "suite.jsonl"
    lines = [
        {"id": "q1", "type": "mcq", "question": "Pick B.", "options": ["x", "y"], "answer": "B", "category": "c"},
        {"id": "m1", "type": "math", "question": "What is 1/2 + 1/4?", "answer": "\\frac{3}{4}", "category": "c"},
        {"id": "m2", "type": "math", "question": "What is 20 + 6?", "answer": "26", "category": "c"},
    ]
    suite.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    with FaultServer() as server:
        server.script(models("m"), *[answer(text) for text in replies])
        args = ["run", "--suite", str(suite), "--base-url", server.base_url, "--model", "m", "--lane", name]
        return main([*args, "--out", str(out), "--concurrency", "1"])


def test_the_matrix_ranks_each_lane_per_task_type(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    # A: B right, 0.75 right, 25 wrong. B: A wrong, \dfrac{3}{4} right, #### 26 right.
    assert scripted_run(tmp_path, "A", ["FINAL: B", "\\boxed{0.75}", "\\boxed{25}"], runs / "A") == 0
    assert scripted_run(tmp_path, "B", ["FINAL: A", "\\boxed{\\dfrac{3}{4}}", "#### 26"], runs / "B") == 0
    out = tmp_path / "matrix"
    assert main(["matrix-report", str(runs), "-o", str(out), "--baseline", "A"]) == 0
    doc = json.loads((out / "matrix.json").read_text(encoding="utf-8"))
    lanes = {lane["label"]: lane for lane in doc["lanes"]}
    counts = {name: {k: (v["correct"], v["total"]) for k, v in lane["by_type"].items()} for name, lane in lanes.items()}
    assert counts == {"A": {"mcq": (1, 1), "math": (1, 2)}, "B": {"mcq": (0, 1), "math": (2, 2)}}
    (comparison,) = doc["comparisons"]
    assert (comparison["by_type"]["math"]["n_paired"], comparison["by_type"]["math"]["b_wins"]) == (2, 1)
    assert "## Accuracy by task type" in (out / "matrix.md").read_text(encoding="utf-8")
    assert 'id="task-types"' in (out / "matrix.html").read_text(encoding="utf-8")
    # The run's own metrics.json has the figures per type and each math decision's evidence.
    summary = json.loads((runs / "A" / "metrics.json").read_text(encoding="utf-8"))["summary"]
    assert summary["by_type"]["math"]["details"]["decided_by"] == {"number": 2}  # 0.75 = 3/4, 25 != 26


@pytest.mark.slow  # a symbolic child run to its limit and killed
@CPU_HEAVY
def test_a_symbolic_check_that_never_ends_is_killed_and_the_run_finishes(tmp_path: Path) -> None:
    # sympy expands (x+1)^{3000} for many seconds: in a run, the check is stopped at its CPU-time limit in the
    # decision worker's child, the decision says so (never correct), and the other tasks are decided as usual.
    out = tmp_path / "run"
    replies = ["FINAL: B", "\\boxed{(x+1)^{3000}}", "\\boxed{26}"]
    assert scripted_run(tmp_path, "A", replies, out) == 0
    doc = json.loads((out / "metrics.json").read_text(encoding="utf-8"))
    tasks = {t["task_id"]: t for t in doc["tasks"]}
    killed = tasks["m1"]
    assert (killed["comparator"], killed["comparison"], killed["correct"]) == ("symbolic", "killed", False)
    assert killed["rule"] == killed["ambiguity"] == "symbolic_check_killed"
    assert (tasks["q1"]["correct"], tasks["m2"]["correct"]) == (True, True)
    details = doc["summary"]["by_type"]["math"]["details"]
    assert details["symbolic_checks_killed"] == 1
    assert any("1 math answer(s) could not be checked" in n and "5 s CPU-time limit" in n for n in doc["notices"])
