"""`ocllm report` and `ocllm matrix-report` end to end on real run directories from the simulator."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from ocllm.cli import main
from ocllm.lanes import Lane
from ocllm.progress import RunProgress
from ocllm.runner import run_lane
from ocllm.sim import SimConfig, SimServer
from ocllm.suites import shipped_suites


@pytest.fixture(scope="module")
def matrix_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("matrix")
    with open(os.devnull, "w") as devnull, SimServer(SimConfig(suites=tuple(shipped_suites().values()))) as sim:
        for name, model, reasoning in (("A_baseline", "sim-baseline", "off"), ("B_native", "sim-reasoning", "native")):
            lane = Lane(name=name, base_url=sim.base_url, model=model, reasoning=reasoning, suite="demo")
            run_lane(
                lane, folder / name, progress=lambda label, total, done: RunProgress(label, total, done, stream=devnull)
            )
    return folder


def test_report_of_a_run_directory(matrix_folder: Path, tmp_path: Path) -> None:
    assert main(["report", str(matrix_folder / "B_native"), "-o", str(tmp_path / "r")]) == 0
    html = (tmp_path / "r" / "report.html").read_text()
    md = (tmp_path / "r" / "report.md").read_text()
    assert html.count("<details") >= 59 and "data-chart" in html
    assert "B_native" in md and "95%" in md


def test_report_of_an_old_metrics_file(shared_audit: Path, tmp_path: Path) -> None:
    assert main(["report", str(shared_audit / "lane_b_native_reasoning_metrics.json"), "-o", str(tmp_path)]) == 0
    assert "197/210" in (tmp_path / "report.md").read_text()


def test_matrix_report_leaderboard_and_baseline(matrix_folder: Path, tmp_path: Path) -> None:
    assert main(["matrix-report", str(matrix_folder), "-o", str(tmp_path / "m")]) == 0
    doc = json.loads((tmp_path / "m" / "matrix.json").read_text())
    assert doc["baseline"] == "A_baseline"
    assert {lane["label"] for lane in doc["lanes"]} == {"A_baseline", "B_native"}
    assert [(c["a"]["label"], c["b"]["label"]) for c in doc["comparisons"]] == [("A_baseline", "B_native")]
    assert (tmp_path / "m" / "matrix.html").stat().st_size > 0
    assert main(["matrix-report", str(matrix_folder), "--baseline", "nope", "-o", str(tmp_path / "x")]) == 2


def test_matrix_report_of_a_folder_without_runs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["matrix-report", str(tmp_path)]) == 2
    assert "holds no run directories" in capsys.readouterr().err
