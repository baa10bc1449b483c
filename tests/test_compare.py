"""`ocllm compare`: pairing, figures and comparison.json, on the shared audit data and on hand-made runs."""

from __future__ import annotations

import json
from pathlib import Path

import msgspec
import pytest
from conftest import legacy_record, write_json

from ocllm.cli import main
from ocllm.compare import compare_runs, load_scored


def compare_cli(a: Path, b: Path, out: Path, *flags: str) -> dict:
    assert main(["compare", str(a), str(b), "-o", str(out), *flags]) == 0
    return json.loads((out / "comparison.json").read_text())


def test_audit_data_rescored(shared_audit: Path, tmp_path: Path) -> None:
    doc = compare_cli(
        shared_audit / "lane_a_baseline_metrics.json",
        shared_audit / "lane_b_native_reasoning_metrics.json",
        tmp_path / "c",
    )
    assert (doc["n_paired"], doc["a_correct"], doc["b_correct"]) == (210, 184, 197)
    assert (doc["b_wins"], doc["a_wins"]) == (19, 6)
    assert doc["mcnemar_p"] == pytest.approx(0.0146, abs=5e-5)
    assert doc["diff"] == pytest.approx(13 / 210)
    assert doc["diff_ci_low"] > 0 and doc["significant"] is True
    assert doc["by_category"]["reasoning"]["b_wins"] == 17
    assert len(doc["flips"]) == 25
    for name in ("comparison.md", "comparison.html"):
        assert (tmp_path / "c" / name).stat().st_size > 0


def test_audit_data_as_the_old_scorer_left_it(shared_audit: Path, tmp_path: Path) -> None:
    doc = compare_cli(
        shared_audit / "lane_a_baseline_metrics.json",
        shared_audit / "lane_b_native_reasoning_metrics.json",
        tmp_path / "c",
        "--no-rescore",
    )
    assert (doc["a_correct"], doc["b_correct"], doc["b_wins"], doc["a_wins"]) == (184, 188, 18, 14)
    assert doc["mcnemar_p"] == pytest.approx(0.597, abs=5e-4)
    assert doc["significant"] is False and "not statistically significant" in doc["verdict"]


def run_file(tmp_path: Path, name: str, answers: dict[str, str | None], **extra: object) -> Path:
    tasks = []
    for task_id, content in answers.items():
        record = legacy_record(task_id, content, expected="B")
        record.update(extra)
        if content is None:
            record["error"] = "HTTP 500 after 4 attempts"
        tasks.append(record)
    return write_json(tmp_path / f"{name}.json", {"lane": name, "tasks": tasks})


def test_pairing_by_task_id_leaves_out_one_sided_and_failed_tasks(tmp_path: Path) -> None:
    a = run_file(
        tmp_path, "A", {"t1": "FINAL: B", "t2": "FINAL: C", "t3": "FINAL: B", "only_a": "FINAL: B", "err": "FINAL: B"}
    )
    b = run_file(
        tmp_path, "B", {"t3": "FINAL: A", "t2": "FINAL: B", "t1": "FINAL: B", "only_b": "FINAL: B", "err": None}
    )
    doc = msgspec.to_builtins(compare_runs(load_scored(a), load_scored(b)))
    assert doc["n_paired"] == 3
    assert (doc["a_correct"], doc["b_correct"], doc["a_wins"], doc["b_wins"]) == (2, 2, 1, 1)
    assert doc["only_in_a"] == ["only_a"] and doc["only_in_b"] == ["only_b"]
    assert doc["unpaired_errors"] == ["err"]
    assert doc["resources"]["b"]["errors"] == 1
    flips = {f["task_id"]: f for f in doc["flips"]}
    # Each side's answer is kept for the side-by-side view (issue 19, item 18).
    assert (flips["t2"].pop("a_side")["content"], flips["t2"].pop("b_side")["content"]) == ("FINAL: C", "FINAL: B")
    assert flips["t2"] == {
        "task_id": "t2",
        "category": "reasoning",
        "expected": "B",
        "a_extracted": "C",
        "b_extracted": "B",
        "winner": "b",
    }
    assert flips["t3"]["winner"] == "a" and flips["t3"]["b_extracted"] == "A"


def test_identical_runs_have_no_discordant_pairs(tmp_path: Path) -> None:
    answers = {f"t{i}": "FINAL: B" for i in range(8)}
    doc = msgspec.to_builtins(
        compare_runs(load_scored(run_file(tmp_path, "A", answers)), load_scored(run_file(tmp_path, "B", answers)))
    )
    assert (doc["a_wins"], doc["b_wins"], doc["mcnemar_p"], doc["diff"]) == (0, 0, 1.0, 0.0)
    assert doc["diff_ci_low"] == -doc["diff_ci_high"] and 0.3 < doc["diff_ci_high"] < 0.4  # 8 pairs, no flips
    assert doc["a_accuracy"] == doc["b_accuracy"] == 1.0
    assert doc["a_ci_high"] == pytest.approx(1.0) and doc["a_ci_low"] < 1.0
    assert "same accuracy" in doc["verdict"]


def test_resources_side_by_side(tmp_path: Path) -> None:
    usage = {"prompt_tokens": 50, "completion_tokens": 120, "completion_tokens_details": {"reasoning_tokens": 100}}
    a = run_file(tmp_path, "A", {"t1": "FINAL: B", "t2": "FINAL: B"}, usage=usage, latency_s=2.0)
    b = run_file(tmp_path, "B", {"t1": "FINAL: B", "t2": "FINAL: B"})
    doc = msgspec.to_builtins(compare_runs(load_scored(a), load_scored(b)))
    ra, rb = doc["resources"]["a"], doc["resources"]["b"]
    assert ra["completion_tokens"]["p50"] == 120 and ra["reasoning_tokens"]["mean"] == 100
    assert ra["latency_s"]["p95"] == 2.0
    assert rb["completion_tokens"] is None and rb["latency_s"] is None


def test_compare_bad_input_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    good = run_file(tmp_path, "A", {"t1": "FINAL: B"})
    assert main(["compare", str(good), str(tmp_path / "missing.json"), "-o", str(tmp_path / "c")]) == 2
    assert "missing.json: no such file" in capsys.readouterr().err
