"""`ocllm rescore` end to end through the real CLI entry point, on files written by the tests."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import PER_TASK_FIELDS, legacy_record, write_json

from ocllm.cli import main


def legacy_file(tmp_path: Path) -> Path:
    tasks = [
        # The bug: visible FINAL: B, format examples in the reasoning, old scorer said wrong.
        legacy_record(
            "t_bug", "FINAL: B", reasoning="Write it like FINAL: A or FINAL: C. It is B.", extracted="B", correct=False
        ),
        legacy_record("t_ok", "FINAL: B", extracted="B", correct=True),
        legacy_record("t_wrong", "FINAL: C", extracted="C", correct=False),
        legacy_record("t_reason_only", "", reasoning="So 4, option B.\nFINAL: B", correct=False),
        {
            **legacy_record("t_sub", "The colours are green and orange."),
            "task_type": "required_substrings",
            "category": "instruction",
            "options": None,
            "expected_answer": None,
            "required_substrings": ["green", "orange"],
            "correct": True,
        },
    ]
    return write_json(tmp_path / "old_metrics.json", {"run_id": "r1", "lane": "B", "summary": {}, "tasks": tasks})


def test_rescore_legacy_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = legacy_file(tmp_path)
    before = hashlib.sha256(src.read_bytes()).hexdigest()
    out, audit = tmp_path / "new.json", tmp_path / "audit.md"
    assert main(["rescore", str(src), "-o", str(out), "--report", str(audit)]) == 0
    assert hashlib.sha256(src.read_bytes()).hexdigest() == before
    doc = json.loads(out.read_text())
    s = doc["summary"]
    assert (s["total"], s["correct"], s["changed"]) == (5, 3, 1)
    assert s["scorer"]["conflict_policy"] == "last" and s["scorer"]["allow_reasoning_fallback"] is False
    assert s["by_category"]["reasoning"]["correct"] == 2
    bug = next(t for t in doc["tasks"] if t["task_id"] == "t_bug")
    for field in (*PER_TASK_FIELDS, "previous"):
        assert field in bug
    assert bug["previous"] == {
        "extracted_final_answer": "B",
        "extraction_method": "final_colon_letter",
        "ambiguity_flag": True,
        "scoring_decision": {"correct": False, "required_substrings": None},
        "correct": False,
    }
    assert bug["correct"] is True and bug["reasoning_statements"] == 2
    assert {c["region"] for c in bug["candidates"]} == {"content", "reasoning"}
    report = audit.read_text()
    assert "## Changed decisions (1)" in report and "`t_bug`" in report
    assert "1 task(s) are marked `correct: false`" in report
    assert "wrote" in capsys.readouterr().out


def test_fallback_switch(tmp_path: Path) -> None:
    src = legacy_file(tmp_path)
    out = tmp_path / "new.json"
    assert main(["rescore", str(src), "-o", str(out), "--allow-reasoning-fallback"]) == 0
    doc = json.loads(out.read_text())
    assert doc["summary"]["correct"] == 4
    t = next(t for t in doc["tasks"] if t["task_id"] == "t_reason_only")
    assert t["extraction_source"] == "reasoning"


def test_own_output_rescores_to_the_same_decisions(tmp_path: Path) -> None:
    first, second = tmp_path / "first.json", tmp_path / "second.json"
    assert main(["rescore", str(legacy_file(tmp_path)), "-o", str(first)]) == 0
    assert main(["rescore", str(first), "-o", str(second)]) == 0
    a, b = json.loads(first.read_text()), json.loads(second.read_text())
    assert b["summary"]["changed"] == 0
    strip = ("previous",)
    assert [{k: v for k, v in t.items() if k not in strip} for t in a["tasks"]] == [
        {k: v for k, v in t.items() if k not in strip} for t in b["tasks"]
    ]


def test_bare_list_input(tmp_path: Path) -> None:
    src = write_json(tmp_path / "list.json", [legacy_record("x", "Answer: B", correct=True)])
    out = tmp_path / "o.json"
    assert main(["rescore", str(src), "-o", str(out)]) == 0
    assert json.loads(out.read_text())["summary"]["correct"] == 1


BAD_INPUTS = {
    "truncated": ('{"tasks": [{"task_id": "a"', "invalid JSON at line 1"),
    "not_json": ("hello", "invalid JSON at line 1 column 1"),
    "no_task_id": (json.dumps({"tasks": [{"raw_content": "FINAL: B", "task_type": "mcq"}]}), "task #1 has no task_id"),
    "no_options": (
        json.dumps([{"task_id": "q1", "task_type": "mcq", "expected_answer": "A", "options": []}]),
        "task 'q1' is an MCQ task without options",
    ),
    "gold_outside": (
        json.dumps([{"task_id": "q2", "task_type": "mcq", "expected_answer": "E", "options": ["1", "2", "3", "4"]}]),
        "expects answer 'E'",
    ),
    "wrong_shape": (json.dumps({"runs": []}), "expected an object with a 'tasks' list"),
    "duplicate": (json.dumps([legacy_record("d", "FINAL: B"), legacy_record("d", "FINAL: B")]), "appears twice"),
    "empty": ("", "the file is empty"),
}


@pytest.mark.parametrize("name", sorted(BAD_INPUTS))
def test_bad_input_is_one_line_and_exit_2(tmp_path: Path, name: str) -> None:
    text, expected = BAD_INPUTS[name]
    src = tmp_path / f"{name}.json"
    src.write_text(text, encoding="utf-8")
    out = tmp_path / "out.json"
    proc = subprocess.run(
        [sys.executable, "-m", "ocllm", "rescore", str(src), "-o", str(out)], capture_output=True, text=True
    )
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr
    assert str(src) in proc.stderr and expected in proc.stderr
    assert not out.exists()
    assert [p.name for p in tmp_path.iterdir()] == [src.name]  # no temporary file left behind


def test_non_utf8_file(tmp_path: Path) -> None:
    src = tmp_path / "latin1.json"
    src.write_bytes('[{"task_id": "caf\u00e9"}]'.encode("latin-1"))
    proc = subprocess.run(
        [sys.executable, "-m", "ocllm", "rescore", str(src), "-o", str(tmp_path / "o.json")],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 2 and "not UTF-8 text (byte 0xe9" in proc.stderr


def test_refuses_to_write_over_input(tmp_path: Path) -> None:
    src = legacy_file(tmp_path)
    before = src.read_bytes()
    proc = subprocess.run(
        [sys.executable, "-m", "ocllm", "rescore", str(src), "-o", str(src)], capture_output=True, text=True
    )
    assert proc.returncode == 2 and "refusing to write the output over its own input" in proc.stderr
    assert src.read_bytes() == before


def test_bad_flag_is_one_line(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "ocllm", "rescore", "x.json", "-o", "y.json", "--conflict-policy", "maybe"],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and "--conflict-policy" in proc.stderr


def test_existing_output_is_replaced_only_when_complete(tmp_path: Path) -> None:
    out = tmp_path / "out.json"
    out.write_text("previous good output")
    bad = tmp_path / "bad.json"
    bad.write_text("{")
    assert main(["rescore", str(bad), "-o", str(out)]) == 2
    assert out.read_text() == "previous good output"


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("prompt", 5, "a prompt that is not text"),
        ("latency_s", "slow", "a latency_s that is not a number"),
        ("usage", [1], "a usage that is not an object"),
        ("raw_content", {"x": 1}, "a raw_content that is not text"),
    ],
)
def test_wrongly_typed_fields_are_one_line_errors(tmp_path: Path, field: str, value: object, message: str) -> None:
    src = write_json(tmp_path / "bad.json", [legacy_record("q", "FINAL: B", **{field: value})])
    proc = subprocess.run(
        [sys.executable, "-m", "ocllm", "rescore", str(src), "-o", str(tmp_path / "o.json")],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and message in proc.stderr
