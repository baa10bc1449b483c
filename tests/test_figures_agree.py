"""Figures that must not contradict on a careful read (issue 41, item 5): the detectable difference beside the 95%
interval of a comparison, the progress line's accuracy after --resume, and serving rates over no time or no answer.
Real files, real CLI, real HTTP on 127.0.0.1 (tests/faultserver.py)."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path
from typing import Any

import pytest
from faultserver import FaultServer, Reply, answer, models
from helpers import run_cli, sums, write_suite
from test_samples import sampled_file

from ocllm.cli import main

POWER = "would have been detected with 80% power"
USAGE = {"prompt_tokens": 10, "completion_tokens": 3, "total_tokens": 13}


def lanes(tmp_path: Path, right_a: list[bool], right_b: list[bool]) -> tuple[Path, Path]:
    """Two one-sample-per-task files of the same tasks, right where the lists say (gold B)."""

    def design(right: list[bool]) -> dict[str, tuple[str, list[str | None]]]:
        return {f"t{i}": ("c", ["FINAL: B" if r else "FINAL: A"]) for i, r in enumerate(right)}

    return sampled_file(tmp_path, "A", design(right_a)), sampled_file(tmp_path, "B", design(right_b))


def compared(tmp_path: Path, a: Path, b: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, str]:
    out = tmp_path / "cmp"
    assert main(["compare", str(a), str(b), "-o", str(out)]) == 0
    page = html.unescape(re.sub(r"<[^>]+>", " ", (out / "comparison.html").read_text()))
    verdict = json.loads((out / "comparison.json").read_text())["verdict"]
    markdown, console = (out / "comparison.md").read_text(), capsys.readouterr().out
    return {"console": console, "markdown": markdown, "html": " ".join(page.split()), "verdict": verdict}


def test_the_issue_s_interval_is_said_and_no_detectable_difference_it_contradicts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """10 paired tasks, A right on one B missed: 95% interval -44.5 to +25.9 points (exact, matching McNemar), the
    normal approximation's detectable difference 28.0 points; a difference of 44.5 points is in the interval, so
    "only a difference of about 28.0 points or more would have been detected" cannot stand beside it."""
    a, b = lanes(tmp_path, [True] * 10, [False] + [True] * 9)
    said = compared(tmp_path, a, b, capsys)
    assert "95% CI -44.5 to +25.9" in said["verdict"]
    room = "The 95% interval still holds a difference of up to 44.5 points: 10 paired tasks cannot rule one that large"
    for where, text in said.items():
        flat = " ".join(text.split())
        assert room in flat, where
        assert POWER not in flat and "28.0 points" not in flat, where
        assert "could not be detected reliably" not in flat and "smallest difference detectable" not in flat, where


def test_a_detectable_difference_the_interval_agrees_with_is_said_after_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """40 paired tasks, each lane right on 3 the other missed: 95% interval -15.4 to +15.4, detectable difference
    17.4 points: the interval first, then the detectable difference, which it does not contradict."""
    right_a = [True] * 3 + [False] * 3 + [True] * 34
    right_b = [False] * 3 + [True] * 3 + [True] * 34
    said = compared(tmp_path, *lanes(tmp_path, right_a, right_b), capsys)
    verdict = said["verdict"]
    assert "95% CI -15.4 to +15.4" in verdict
    rules_out = verdict.index("The 95% interval rules out a difference over 15.4 points")
    assert rules_out < verdict.index(f"only a difference of about 17.4 points or more {POWER}")
    assert "smallest difference detectable with 80% power: 17.4 points" in said["console"]


def progress_lines(err: str) -> list[str]:
    return [line for line in err.splitlines() if re.match(r"\[\S+\] \d+/\d+ done", line)]


def test_after_resume_the_progress_line_s_accuracy_is_the_whole_lane_s(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """4 tasks: the first invocation answers 2 right, then stops (its samples cut to those 2, as Ctrl-C leaves
    them); --resume answers the other 2 wrong. The lane is 2 of 4 right: its last progress line says 50.0%,
    not this invocation's 0.0%."""
    suite, out = write_suite(tmp_path / "suite.jsonl", sums(4)), tmp_path / "run"
    with FaultServer() as server:
        server.script(models("m"), then=answer("FINAL: B", usage=USAGE))
        assert run_cli(server.base_url, out, suite=suite, concurrency=1) == 0
    samples = (out / "samples.jsonl").read_text().splitlines(keepends=True)
    (out / "samples.jsonl").write_text("".join(samples[:2]))
    capsys.readouterr()
    with FaultServer() as server:
        server.script(models("m"), then=answer("FINAL: A", usage=USAGE))
        run_cli(server.base_url, out, "--resume", suite=suite, concurrency=1)
    captured = capsys.readouterr()
    last = progress_lines(captured.err)[-1]
    assert last.startswith("[run] 4/4 done") and "acc 50.0%  errors 0" in last, last  # the lane: its --out's name
    assert json.loads((out / "metrics.json").read_text())["summary"]["accuracy"] == 0.5


def test_no_rate_from_a_lane_whose_every_request_was_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Every request refused at once (an unknown model): no answer, a wall time of milliseconds. No requests/s or
    tokens/s is made of that: null in metrics.json, n/a on the console and on the run's page."""
    suite, out = write_suite(tmp_path / "suite.jsonl", sums(4)), tmp_path / "run"
    refused = Reply(status=404, json={"error": {"message": "model 'm' not found", "type": "not_found_error"}})
    with FaultServer() as server:
        server.script(models("m"), then=refused)
        assert run_cli(server.base_url, out, suite=suite, concurrency=1) == 2
    console = capsys.readouterr().out
    serving: dict[str, Any] = json.loads((out / "metrics.json").read_text())["summary"]["serving"]
    assert serving["answers"] == 0 and serving["requests"] >= 1
    assert serving["requests_per_s"] is None and serving["output_tokens_per_s"] is None
    [line] = [x for x in console.splitlines() if x.startswith("serving:")]
    assert "requests/s n/a" in line and not re.search(r"[\d.]+ requests/s", line), line
    assert main(["report", str(out), "-o", str(tmp_path / "page")]) == 0
    markdown = (tmp_path / "page" / "report.md").read_text()
    assert "| requests/s | n/a |" in markdown and "| output tokens/s | not recorded |" in markdown


def test_a_document_written_before_shows_no_rate_over_no_answer(tmp_path: Path) -> None:
    """A metrics.json of before this rule, with its "166.67 requests/s (over 0.0 s)": read as n/a all the same."""
    suite, out = write_suite(tmp_path / "suite.jsonl", sums(2)), tmp_path / "run"
    with FaultServer() as server:
        server.script(models("m"), then=answer("FINAL: B", usage=USAGE))
        assert run_cli(server.base_url, out, suite=suite, concurrency=1) == 0
    metrics = json.loads((out / "metrics.json").read_text())
    metrics["summary"]["serving"].update({"wall_s": 0.006, "requests": 1, "requests_per_s": 166.67, "answers": 0})
    (out / "metrics.json").write_text(json.dumps(metrics))
    assert main(["report", str(out / "metrics.json"), "-o", str(tmp_path / "page")]) == 0
    markdown = (tmp_path / "page" / "report.md").read_text()
    assert "166.67" not in markdown and "| requests/s | n/a |" in markdown
