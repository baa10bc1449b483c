"""`ocllm report` and `ocllm matrix-report` end to end on real run directories from the simulator."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from conftest import legacy_record, write_json
from test_report_render import table_rows

from ocllm.analysis.rescore import score_run_dir
from ocllm.cli import main
from ocllm.report.wording import SERVING_MISSING, count, duration, rate, seconds
from ocllm.run.lanes import Lane
from ocllm.run.progress import RunProgress
from ocllm.run.runner import run_lane
from ocllm.sim import SimConfig, SimServer
from ocllm.suites import shipped_suites


@pytest.fixture(scope="module")
def matrix_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("matrix")
    with open(os.devnull, "w") as devnull, SimServer(SimConfig(suites=tuple(shipped_suites().values()))) as sim:
        # B streams, so its serving figures have a time to first token; A does not.
        for name, model, reasoning, stream in (
            ("A_baseline", "sim-baseline", "off", False),
            ("B_native", "sim-reasoning", "native", True),
        ):
            lane = Lane(name=name, base_url=sim.base_url, model=model, reasoning=reasoning, suite="demo", stream=stream)
            run_lane(
                lane,
                folder / name,
                progress=lambda label, total, done: RunProgress(label, total, done, stream=devnull),
                score=score_run_dir,
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


# --- Serving figures, as the run recorded them in its metrics.json ----------------------------------------


def recorded_serving(run: Path) -> dict[str, Any]:
    serving = json.loads((run / "metrics.json").read_text())["summary"]["serving"]
    assert serving is not None, run
    return serving


def test_run_report_shows_the_serving_figures_metrics_json_holds(matrix_folder: Path, tmp_path: Path) -> None:
    serving = recorded_serving(matrix_folder / "B_native")
    assert serving["ttft_samples"] > 0  # a streamed lane
    assert main(["report", str(matrix_folder / "B_native"), "-o", str(tmp_path)]) == 0
    expected = [
        ["requests/s", rate(serving["requests_per_s"])],
        ["output tokens/s", rate(serving["output_tokens_per_s"])],
        ["time to first token, median", seconds(serving["ttft_p50_s"])],
        ["time to first token, 95th percentile", seconds(serving["ttft_p95_s"])],
        ["wall time", duration(serving["wall_s"])],
        ["requests (retries included)", count(serving["requests"])],
    ]
    md = (tmp_path / "report.md").read_text()
    section = md[md.index("## Serving") : md.index("## Tasks")]
    for name, value in expected:
        assert f"| {name} | {value} |" in section, name
    (table,) = table_rows((tmp_path / "report.html").read_text(), "data-serving")
    for row in expected:
        assert row in table, row


@pytest.mark.slow  # lanes run against the simulator
def test_matrix_report_shows_each_lanes_serving_figures(matrix_folder: Path, tmp_path: Path) -> None:
    folder = tmp_path / "runs"
    shutil.copytree(matrix_folder, folder)
    # A run directory written before serving figures existed: its manifest has no wall time.
    manifest = json.loads((folder / "A_baseline" / "manifest.json").read_text())
    del manifest["wall_s"]
    write_json(folder / "A_baseline" / "manifest.json", manifest)
    assert main(["matrix-report", str(folder), "-o", str(tmp_path / "m")]) == 0
    doc = json.loads((tmp_path / "m" / "matrix.json").read_text())
    lanes = {lane["label"]: lane for lane in doc["lanes"]}
    serving = recorded_serving(matrix_folder / "B_native")
    assert lanes["B_native"]["serving"] == serving
    assert lanes["A_baseline"]["serving"] is None
    b = [rate(serving["requests_per_s"]), rate(serving["output_tokens_per_s"]), seconds(serving["ttft_p50_s"])]

    md = (tmp_path / "m" / "matrix.md").read_text()
    rows = {line.split("|")[2].strip(): line for line in md.splitlines() if line.startswith(("| 1 ", "| 2 "))}
    assert rows["B_native"].endswith(f"| {' | '.join(b)} |")
    assert rows["A_baseline (baseline)"].endswith("| not recorded | not recorded | not recorded |")
    page = (tmp_path / "m" / "matrix.html").read_text()
    (board,) = table_rows(page, "data-leaderboard")
    assert board[0][-3:] == ["req/s", "output tok/s", "TTFT p50"]
    by_lane = {row[1].split()[0]: row for row in board[1:]}
    assert by_lane["B_native"][-3:] == b
    assert by_lane["A_baseline"][-3:] == ["—"] * 3


def test_comparison_shows_each_sides_serving_figures(matrix_folder: Path, tmp_path: Path) -> None:
    a, b = matrix_folder / "A_baseline", matrix_folder / "B_native"
    assert main(["compare", str(a), str(b), "-o", str(tmp_path)]) == 0
    doc = json.loads((tmp_path / "comparison.json").read_text())
    sa, sb = recorded_serving(a), recorded_serving(b)
    assert (doc["a"]["serving"], doc["b"]["serving"]) == (sa, sb)
    expected = [
        ["requests/s", rate(sa["requests_per_s"]), rate(sb["requests_per_s"])],
        ["output tokens/s", rate(sa["output_tokens_per_s"]), rate(sb["output_tokens_per_s"])],
        ["time to first token, median", "not recorded", seconds(sb["ttft_p50_s"])],
        ["wall time", duration(sa["wall_s"]), duration(sb["wall_s"])],
    ]
    md = (tmp_path / "comparison.md").read_text()
    section = md[md.index("## Serving") :]
    for row in expected:
        assert f"| {' | '.join(row)} |" in section, row
    (table,) = table_rows((tmp_path / "comparison.html").read_text(), "data-serving")
    assert table[0] == ["figure", "A_baseline", "B_native"]
    for row in expected:
        assert row in table, row


def test_metrics_files_without_serving_figures_render_without_them(matrix_folder: Path, tmp_path: Path) -> None:
    """The old harness's metrics files record no wall time: the run report says so in one line, a comparison
    of two shows no serving section, and beside a run directory only the run's figures show."""
    old = write_json(
        tmp_path / "old_lane.json", {"lane": "old_lane", "tasks": [legacy_record("t1", "FINAL: B", expected="B")]}
    )
    assert main(["report", str(old), "-o", str(tmp_path / "r")]) == 0
    md = (tmp_path / "r" / "report.md").read_text()
    assert md.count(SERVING_MISSING) == 1 and "requests/s" not in md
    page = (tmp_path / "r" / "report.html").read_text()
    assert "data-serving-missing" in page and table_rows(page, "data-serving") == []

    other = write_json(tmp_path / "other.json", {"lane": "other", "tasks": [legacy_record("t1", "FINAL: A")]})
    assert main(["compare", str(old), str(other), "-o", str(tmp_path / "c")]) == 0
    assert json.loads((tmp_path / "c" / "comparison.json").read_text())["a"]["serving"] is None
    assert "## Serving" not in (tmp_path / "c" / "comparison.md").read_text()
    assert 'id="serving"' not in (tmp_path / "c" / "comparison.html").read_text()

    # Beside a run directory of the demo suite: an old lane that answered one of its tasks (a comparison needs one).
    answered = legacy_record("arith4_001", "FINAL: A", expected="A")
    old_demo = write_json(tmp_path / "old_demo.json", {"lane": "old_lane", "tasks": [answered]})
    run = matrix_folder / "B_native"
    assert main(["compare", str(old_demo), str(run), "-o", str(tmp_path / "d")]) == 0
    md = (tmp_path / "d" / "comparison.md").read_text()
    assert f"| requests/s | not recorded | {rate(recorded_serving(run)['requests_per_s'])} |" in md
    assert "- Only B_native recorded serving figures." in md


# --- issue 19 item 14: the report of another tool's results, rescored or read with --from --------------------


def test_report_of_a_rescored_mmlu_pro_folder_keeps_the_scripts_story(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from test_compare import CHANGED, OURS_RIGHT, TOOL_RIGHT, mmlu_pro_folder, rescored

    folder = mmlu_pro_folder(tmp_path / "qwen3-think-4k")
    out = rescored(tmp_path, folder)
    assert json.loads(out.read_text())["summary"]["changed"] == CHANGED  # what rescore said
    n = len(json.loads(out.read_text())["tasks"])
    for args, where in (([str(out)], "doc"), (["--from", "mmlu-pro", str(folder)], "from")):
        capsys.readouterr()
        assert main(["report", *args, "-o", str(tmp_path / where)]) == 0
        said = f"MMLU-Pro script: {TOOL_RIGHT}/{n}   ocllm's scorer: {OURS_RIGHT}/{n}   changed decisions: {CHANGED}"
        assert said in capsys.readouterr().out
        md = (tmp_path / where / "report.md").read_text()
        page = (tmp_path / where / "report.html").read_text()
        assert md.startswith("# Run report: qwen3-think-4k\n") and "<title>Run report: qwen3-think-4k</title>" in page
        assert f"| decisions changed from MMLU-Pro script's | {CHANGED} |" in md
        assert f"| MMLU-Pro script | {TOOL_RIGHT}/{n} |" in md and f"| ocllm's scorer | {OURS_RIGHT}/{n} |" in md
        assert "MMLU-Pro script's verdict" in md  # per changed task
        (verdicts,) = table_rows(page, "data-tool-verdicts")
        assert ["MMLU-Pro script", f"{TOOL_RIGHT}/{n}"] == verdicts[1][:2]
        assert ["ocllm's scorer", f"{OURS_RIGHT}/{n}"] == verdicts[2][:2]
        assert f'data-figure="changed"><div class="label">changed</div><div class="value">{CHANGED}<' in page
        assert "MMLU-Pro script's verdict" in page


def test_report_of_a_rescored_inspect_log_counts_truncation_as_rescore_did(tmp_path: Path) -> None:
    variant = next((Path(__file__).parent / "fixtures" / "inspect" / "0.3.285" / "variant").glob("*.eval"))
    out = tmp_path / "out.json"
    assert main(["rescore", "--from", "inspect", str(variant), "-o", str(out)]) == 0
    truncated = json.loads(out.read_text())["summary"]["truncated"]
    assert truncated > 0
    assert main(["report", str(out), "-o", str(tmp_path / "r")]) == 0
    md = (tmp_path / "r" / "report.md").read_text()
    assert f"| truncated (finish_reason: length) | {truncated} |" in md
    assert "inspect_ai" in md and "# Run report: out" not in md
