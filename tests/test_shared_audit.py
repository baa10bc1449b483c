"""Acceptance: the reconstructed audit data of the bug report (read from ../shared, never copied)."""

from __future__ import annotations

import json
from pathlib import Path

from ocllm.cli import main


def rescore(src: Path, tmp_path: Path, *flags: str) -> tuple[dict, str]:
    out, report = tmp_path / "out.json", tmp_path / "audit.md"
    assert main(["rescore", str(src), "-o", str(out), "--report", str(report), *flags]) == 0
    return json.loads(out.read_text()), report.read_text()


def test_lane_b_rescored_is_197_with_nine_changes(shared_audit: Path, tmp_path: Path) -> None:
    doc, report = rescore(shared_audit / "lane_b_native_reasoning_metrics.json", tmp_path)
    s = doc["summary"]
    assert (s["total"], s["correct"], s["changed"]) == (210, 197, 9)
    assert (s["by_category"]["reasoning"]["correct"], s["by_category"]["reasoning"]["total"]) == (137, 145)
    assert "## Changed decisions (9)" in report
    for task_id in ("reasoning_mmlu_015", "reasoning_mmlu_pro_019", "reasoning_mmlu_030"):
        assert f"`{task_id}`" in report
        task = next(t for t in doc["tasks"] if t["task_id"] == task_id)
        assert task["correct"] is True and task["previous"]["correct"] is False
        assert task["extraction_method"] == "final_colon_letter" and task["ambiguity"] == "none"
    assert "9 task(s) are marked `correct: false`" in report
    assert "| all | 188/210 (89.52%) | 197/210 (93.81%) | +9 |" in report


def test_lane_b_with_reasoning_fallback_is_198(shared_audit: Path, tmp_path: Path) -> None:
    doc, _ = rescore(shared_audit / "lane_b_native_reasoning_metrics.json", tmp_path, "--allow-reasoning-fallback")
    assert doc["summary"]["correct"] == 198


def test_lane_b_strict_policy_fails_the_conflict(shared_audit: Path, tmp_path: Path) -> None:
    doc, _ = rescore(shared_audit / "lane_b_native_reasoning_metrics.json", tmp_path, "--conflict-policy", "strict")
    assert doc["summary"]["correct"] == 197  # the one conflict's last letter was wrong anyway
    conflicts = [t for t in doc["tasks"] if t["ambiguity"] == "conflicting_final_answers"]
    assert len(conflicts) == 1 and conflicts[0]["extracted_final_answer"] is None


def test_lane_a_stays_184(shared_audit: Path, tmp_path: Path) -> None:
    doc, report = rescore(shared_audit / "lane_a_baseline_metrics.json", tmp_path)
    assert (doc["summary"]["correct"], doc["summary"]["changed"]) == (184, 0)
    assert "No decision changed." in report
