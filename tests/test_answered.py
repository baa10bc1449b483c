"""Answered, no answer, wrong and failed, apart everywhere (issue 19, item 15): metrics.json, the console after
run, rescore and matrix, the run report (Markdown and HTML), the comparison, the matrix leaderboard, and the
chance level of the suite on the accuracy charts.

Real runs against the scriptable server on 127.0.0.1, real files, the real CLI. Every expected count comes from
the table below (what each reply is), never from the code under test."""

from __future__ import annotations

import json
import re
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
from faultserver import FaultServer, Reply
from test_run_notices import models, reply

from ocllm.cli import main

# (task, what the model replies, what that reply is): None as the reply is a failed request (HTTP 400).
LANE_A: list[tuple[dict[str, Any], str | None, str]] = [
    ({"id": "m1", "category": "maths", "options": ["3", "4", "5", "6"], "answer": "B"}, "FINAL: B", "correct"),
    ({"id": "m2", "category": "maths", "options": ["3", "4", "5", "6"], "answer": "A"}, "FINAL: C", "wrong"),
    ({"id": "m3", "category": "maths", "options": ["3", "4", "5", "6"], "answer": "A"}, "I cannot tell.", "none"),
    ({"id": "w1", "category": "words", "options": ["a", "b", "c", "d", "e"], "answer": "A"}, "Hmm.", "none"),
    ({"id": "w2", "category": "words", "options": ["a", "b", "c", "d", "e"], "answer": "E"}, None, "error"),
    ({"id": "s1", "category": "words", "required_substrings": ["alpha"]}, "beta", "wrong"),
    ({"id": "s2", "category": "words", "required_substrings": ["beta"]}, "", "none"),
]
# Lane B answers every MCQ task with A (right where A is the gold letter) and every substring task with both words.
LANE_B = [
    (task, "FINAL: A", "correct" if task["answer"] == "A" else "wrong")
    if "options" in task
    else (task, "alpha beta", "correct")
    for task, _, _ in LANE_A
]


def outcomes(lane: list[tuple[dict[str, Any], str | None, str]], category: str | None = None) -> dict[str, int]:
    """What the table says of a lane's tasks (of one category), counted here."""
    counts = {"correct": 0, "wrong": 0, "none": 0, "error": 0}
    for task, _, outcome in lane:
        if category is None or task["category"] == category:
            counts[outcome] += 1
    return counts


def chance() -> float:
    """The suite's chance level: the mean of 1/options over its MCQ tasks."""
    shares = [Fraction(1, len(task["options"])) for task, _, _ in LANE_A if "options" in task]
    return float(sum(shares) / len(shares))


def write_suite(path: Path) -> Path:
    lines = []
    for task, _, _ in LANE_A:
        kind = "mcq" if "options" in task else "required_substrings"
        lines.append(json.dumps({"type": kind, "question": f"Question {task['id']}?", **task}))
    path.write_text("\n".join(lines) + "\n")
    return path


def run(tmp: Path, name: str, lane: list[tuple[dict[str, Any], str | None, str]], out: Path) -> tuple[int, str]:
    failed = Reply(status=400, json={"error": {"message": "no"}})
    replies = [reply(text) if text is not None else failed for _, text, _ in lane]
    with FaultServer() as server:
        # /models (which lists the model: no trial request), then the tasks in the suite's order, one at a time.
        server.script(models("m"), *replies)
        args = ["run", "--suite", str(write_suite(tmp / "suite.jsonl")), "--base-url", server.base_url]
        code = main([*args, "--model", "m", "--lane", name, "--out", str(out), "--concurrency", "1"])
    return code, name


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("answered")
    run(folder, "A", LANE_A, folder / "runs" / "A")
    run(folder, "B", LANE_B, folder / "runs" / "B")
    return folder / "runs"


def test_metrics_json_counts_no_answer_apart_from_wrong_and_errors(folder: Path) -> None:
    summary = json.loads((folder / "A" / "metrics.json").read_text())["summary"]
    want = outcomes(LANE_A)
    assert summary["correct"] == want["correct"] and summary["errors"] == want["error"]
    assert summary["no_answer"] == want["none"]
    assert summary["scored"] - summary["correct"] - summary["no_answer"] == want["wrong"]
    for category in ("maths", "words"):
        want = outcomes(LANE_A, category)
        assert summary["by_category"][category]["no_answer"] == want["none"], category


def test_the_console_after_run_and_rescore_says_no_answer(
    folder: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    want = outcomes(LANE_A)
    capsys.readouterr()
    code, _ = run(tmp_path, "A", LANE_A, tmp_path / "again")
    printed = capsys.readouterr().out
    assert code == 1  # one failed request
    assert f"no answer: {want['none']}" in printed and f"wrong: {want['wrong']}" in printed
    header = next(line for line in printed.splitlines() if "scope" in line)
    assert "wrong" in header and "no answer" in header
    all_row = next(line for line in printed.splitlines() if re.match(r"\W*all\b", line))
    figures = [str(want[key]) for key in ("correct", "wrong", "none", "error")]
    assert re.findall(r"\d+", all_row)[:4] == figures
    assert main(["rescore", str(folder / "A"), "-o", str(tmp_path / "r.json")]) == 0
    assert f"no answer: {want['none']}" in capsys.readouterr().out


def test_the_run_report_shows_correct_wrong_no_answer_and_errors(folder: Path, tmp_path: Path) -> None:
    want = outcomes(LANE_A)
    assert main(["report", str(folder / "A"), "-o", str(tmp_path)]) == 0
    html = (tmp_path / "report.html").read_text()
    for figure, key in (("correct", "correct"), ("wrong", "wrong"), ("no-answer", "none"), ("errors", "error")):
        value = re.search(rf'data-figure="{figure}">.*?<div class="value">(\d+)</div>', html, re.S)
        assert value and int(value.group(1)) == want[key], figure
    assert html.count('data-verdict="no-answer"') == want["none"]
    md = (tmp_path / "report.md").read_text()
    assert f"| no answer (nothing extracted) | {want['none']} |" in md
    assert f"| wrong | {want['wrong']} |" in md
    # The category chart draws the suite's chance level and says what it is.
    assert f"chance {100 * chance():.0f}%" in html


def test_the_comparison_and_the_matrix_show_no_answer(
    folder: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a, b = outcomes(LANE_A), outcomes(LANE_B)
    capsys.readouterr()
    assert main(["compare", str(folder / "A"), str(folder / "B"), "-o", str(tmp_path / "c")]) == 0
    printed = capsys.readouterr().out
    doc = json.loads((tmp_path / "c" / "comparison.json").read_text())
    # Paired: every task but the one that failed on A's side.
    assert (doc["a_no_answer"], doc["b_no_answer"]) == (a["none"], b["none"])
    assert f"no answer: A {a['none']}, B {b['none']}" in printed
    assert f"chance {100 * chance():.0f}%" in (tmp_path / "c" / "comparison.html").read_text()
    assert "no answer" in (tmp_path / "c" / "comparison.md").read_text()

    assert main(["matrix-report", str(folder), "-o", str(tmp_path / "m")]) == 0
    matrix = json.loads((tmp_path / "m" / "matrix.json").read_text())
    lanes = {lane["label"]: lane for lane in matrix["lanes"]}
    assert (lanes["A"]["no_answer"], lanes["B"]["no_answer"]) == (a["none"], b["none"])
    html = (tmp_path / "m" / "matrix.html").read_text()
    assert "<th class=\"num\">no answer</th>" in html and f"chance {100 * chance():.0f}%" in html
    row = re.search(r'<tr data-lane="A">.*?</tr>', html, re.S)
    assert row and f'data-no-answer="{a["none"]}"' in row.group(0)
    md = (tmp_path / "m" / "matrix.md").read_text()
    assert "no answer" in md.split("## Leaderboard")[1].splitlines()[2]
