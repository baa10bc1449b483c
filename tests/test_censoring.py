"""Scores beside their censoring (issue 44, item 3): each lane's accuracy on the answers that finished and the share
cut off at max_tokens, in the summary, the console, the run page and the comparison, and a comparison that says when
its difference is mostly truncation."""

from __future__ import annotations

import json
from pathlib import Path

from helpers import quiet

from ocllm.analysis.compare import ScoredTask, censoring_of
from ocllm.analysis.rescore import score_run_dir
from ocllm.cli import main
from ocllm.run.lanes import Lane
from ocllm.run.runner import run_lane
from ocllm.sim import SimConfig, SimServer
from ocllm.suites import shipped_suites


def _task(n: int, correct: bool, cut: bool) -> list[ScoredTask]:
    return [ScoredTask(f"t{n}", "c", "A", None, correct, None, cut, None, None, None, "mcq", finish_reason=True)]


def test_a_difference_that_vanishes_on_the_answers_both_finished_is_said_to_be_truncation() -> None:
    a = [_task(n, n < 8, False) for n in range(10)]  # 8 of 10 right, none cut
    b = [_task(n, 4 <= n < 8, n < 4) for n in range(10)]  # the first 4 cut off (wrong), then as A
    said = censoring_of(a, b, "A", "B")
    assert said is not None
    assert said["a"] == {"scored": 10, "correct": 8, "finished_scored": 10, "finished_correct": 8}
    assert said["b"] == {"scored": 10, "correct": 4, "finished_scored": 6, "finished_correct": 4}
    assert said["both_finished"] == 6
    assert said["said"] == (
        "B - A: -40.0 points on the 10 paired tasks, +0.0 on the 6 both finished: most of the difference is "
        "truncation (answers cut off at max_tokens), not the answers"
    )
    # Where the answers differ too, nothing is said of truncation.
    worse = [_task(n, 4 <= n < 6, n < 4) for n in range(10)]
    other = censoring_of(a, worse, "A", "B")
    assert other is not None and "truncation" not in other["said"]
    # A side that recorded no finish_reason: its truncation is not known, and nothing is said.
    unknown = [[task[0]._replace(finish_reason=False)] for task in b]
    assert censoring_of(a, unknown, "A", "B") is None


def test_every_page_shows_the_accuracy_on_the_answers_that_finished_and_the_share_cut_off(tmp_path: Path) -> None:
    suites = tuple(shipped_suites().values())
    # A reasoning lane of the simulator cuts a share of its answers at max_tokens (truncation_rate).
    with SimServer(SimConfig(suites=suites, truncation_rate=0.3)) as sim:
        for name in ("a", "b"):
            lane = Lane(name=name, base_url=sim.base_url, model="sim-reasoning", suite="demo", reasoning="native",
                        sampling={"seed": 0 if name == "a" else 1, "temperature": 0.0, "max_tokens": 4096})  # fmt: skip
            run_lane(lane, tmp_path / name, progress=quiet, score=score_run_dir)
    summary = json.loads((tmp_path / "a" / "metrics.json").read_text())["summary"]
    cut = summary["scored"] - summary["finished_scored"]
    assert summary["truncated"] >= cut > 0 and summary["finished_correct"] <= summary["finished_scored"]
    words = (
        f"accuracy on the answers that finished: {100 * summary['finished_correct'] / summary['finished_scored']:.1f}% "
        f"({summary['finished_correct']} of {summary['finished_scored']}); cut off: "
        f"{cut} of {summary['scored']} ({100 * cut / summary['scored']:.1f}%)"
    )
    assert main(["report", str(tmp_path / "a"), "-o", str(tmp_path / "report")]) == 0
    assert f"| beside the truncation | {words} |" in (tmp_path / "report" / "report.md").read_text()
    page = (tmp_path / "report" / "report.html").read_text()
    assert 'data-figure="censoring"' in page and words in page
    assert main(["compare", str(tmp_path / "a"), str(tmp_path / "b"), "-o", str(tmp_path / "cmp")]) == 0
    comparison = json.loads((tmp_path / "cmp" / "comparison.json").read_text())
    assert comparison["censoring"]["a"]["finished_scored"] == summary["finished_scored"]
    markdown = (tmp_path / "cmp" / "comparison.md").read_text()
    assert "### Beside the truncation" in markdown and words in markdown
    assert comparison["censoring"]["said"] in markdown
    assert 'data-table="censoring"' in (tmp_path / "cmp" / "comparison.html").read_text()
    assert main(["matrix-report", str(tmp_path), "-o", str(tmp_path / "matrix")]) == 0
    assert f"- a: {words}" in (tmp_path / "matrix" / "matrix.md").read_text()
    assert "data-censoring" in (tmp_path / "matrix" / "matrix.html").read_text()
