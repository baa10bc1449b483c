"""`ocllm compare`: pairing, figures and comparison.json, on the shared audit data and on hand-made runs."""

from __future__ import annotations

import html
import json
from pathlib import Path

import msgspec
import pytest
from conftest import legacy_record, write_json

from ocllm.analysis.compare import compare_runs, load_scored
from ocllm.cli import main


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
    assert (flips["t2"].pop("a_share"), flips["t2"].pop("b_share")) == (None, None)  # one sample per task
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


# --- issue 19 item 14: another tool's results, rescored or read with --from ---------------------------------

# One MMLU-Pro question per row: the script's `pred`, the response, and what each side makes of it (worked out
# by hand: the script counts a task right when pred == answer, this scorer reads the response).
MMLU_PRO_ROWS = (
    # pred, response, the script right, this scorer right
    ("B", "The answer is (B).", True, True),
    (None, "Let me think.\n\n**Answer: (B)**", False, True),  # the script's regex missed it
    ("C", "The answer is (C).", False, False),
    ("(B)", "The answer is (B).", False, True),  # "(B)" is not "B" to the script
    ("B", "I am not sure which one it is.", True, False),  # the script's pred, but no answer in the text
)
TOOL_RIGHT = sum(row[2] for row in MMLU_PRO_ROWS)  # 2
OURS_RIGHT = sum(row[3] for row in MMLU_PRO_ROWS)  # 3
CHANGED = sum(row[2] != row[3] for row in MMLU_PRO_ROWS)  # 3


def mmlu_pro_folder(folder: Path, rows: tuple[tuple[str | None, str, bool, bool], ...] = MMLU_PRO_ROWS) -> Path:
    """A folder of MMLU-Pro results as the scripts write them: `<category>_result.json`, a list of questions."""
    options = ["one", "two", "three", "four", "five"]
    records = [
        {"question_id": 100 + i, "question": "Which one?", "options": options, "answer": "B", "answer_index": 1,
         "cot_content": "", "category": "math", "src": "ori_mmlu-x", "pred": pred, "model_outputs": response}
        for i, (pred, response, _, _) in enumerate(rows)
    ]  # fmt: skip
    folder.mkdir(parents=True)
    return write_json(folder / "math_result.json", records).parent


def rescored(tmp_path: Path, folder: Path, name: str = "out") -> Path:
    out = tmp_path / f"rescored-{folder.parent.name}-{folder.name}" / f"{name}.json"
    assert main(["rescore", "--from", "mmlu-pro", str(folder), "-o", str(out)]) == 0
    return out


def test_rescored_foreign_files_are_labelled_by_their_folder_not_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    a = rescored(tmp_path, mmlu_pro_folder(tmp_path / "qwen3-think-4k"))
    b = rescored(tmp_path, mmlu_pro_folder(tmp_path / "qwen3-think-16k"))
    monkeypatch.chdir(tmp_path)  # the default output folder is relative to where ocllm runs
    assert main(["compare", str(a), str(b)]) == 0
    folder = tmp_path / "comparisons" / "qwen3-think-4k_vs_qwen3-think-16k"
    doc = json.loads((folder / "comparison.json").read_text())
    assert (doc["a"]["label"], doc["b"]["label"]) == ("qwen3-think-4k", "qwen3-think-16k")
    assert (doc["a"]["tool"], doc["b"]["tool"]) == ("MMLU-Pro script", "MMLU-Pro script")
    md = (folder / "comparison.md").read_text()
    assert "# Comparison: qwen3-think-4k vs qwen3-think-16k" in md and md.count(", MMLU-Pro script results)") == 2
    page = html.unescape((folder / "comparison.html").read_text())
    assert "qwen3-think-4k: MMLU-Pro script results" in page and "qwen3-think-16k: MMLU-Pro script results" in page


def test_two_sides_with_the_same_label_are_told_apart_by_their_folders(tmp_path: Path) -> None:
    a = rescored(tmp_path, mmlu_pro_folder(tmp_path / "budget-4k" / "qwen3"))
    b = rescored(tmp_path, mmlu_pro_folder(tmp_path / "budget-16k" / "qwen3"))
    doc = compare_cli(a, b, tmp_path / "c")
    assert (doc["a"]["label"], doc["b"]["label"]) == ("qwen3 (budget-4k)", "qwen3 (budget-16k)")
    same = compare_cli(a, a, tmp_path / "d")
    assert (same["a"]["label"], same["b"]["label"]) == ("A: qwen3", "B: qwen3")


def test_compare_from_reads_both_folders_and_no_rescore_compares_the_tools_verdicts(tmp_path: Path) -> None:
    a = mmlu_pro_folder(tmp_path / "think-4k")
    flipped = tuple((pred, response, not tool, ours) for pred, response, tool, ours in MMLU_PRO_ROWS[:1])
    b = mmlu_pro_folder(tmp_path / "think-16k", MMLU_PRO_ROWS[1:] + flipped)
    doc = compare_cli(a, b, tmp_path / "c", "--from", "mmlu-pro")
    assert (doc["a"]["label"], doc["b"]["label"]) == ("think-4k", "think-16k")
    assert doc["rescored"] is True and doc["a_correct"] == OURS_RIGHT
    raw = compare_cli(a, b, tmp_path / "r", "--from", "mmlu-pro", "--no-rescore")
    assert raw["rescored"] is False and raw["a_correct"] == TOOL_RIGHT
    said = "the verdicts compared are MMLU-Pro script's own"
    assert any(said in notice for notice in raw["notices"])
    for page in ("comparison.md", "comparison.html"):
        assert said in html.unescape((tmp_path / "r" / page).read_text()), page
    # The rescored documents of the same folders compare the same way, and keep the script's verdicts.
    again = compare_cli(rescored(tmp_path, a), rescored(tmp_path, b), tmp_path / "again", "--no-rescore")
    assert again["a_correct"] == TOOL_RIGHT and (again["a"]["label"], again["b"]["label"]) == ("think-4k", "think-16k")


FIXTURES = Path(__file__).parent / "fixtures"
RAW_FOREIGN = {
    "mmlu-pro file": ("mmlu-pro", FIXTURES / "mmlu_pro" / "evaluate_from_api-2a7ec7e" / "math_result.json"),
    "mmlu-pro folder": ("mmlu-pro", FIXTURES / "mmlu_pro" / "evaluate_from_api-2a7ec7e"),
    "lm-eval folder": ("lm-eval", FIXTURES / "lm_eval" / "0.4.13" / "sim-baseline"),
    "lm-eval file": ("lm-eval", next((FIXTURES / "lm_eval" / "0.4.13" / "sim-baseline").rglob("samples_*.jsonl"))),
    "inspect .eval": ("inspect", next((FIXTURES / "inspect" / "0.3.285").glob("*.eval"))),
    "inspect .json": ("inspect", next((FIXTURES / "inspect" / "0.3.285").glob("*.json"))),
}


@pytest.mark.parametrize("case", RAW_FOREIGN)
def test_another_tools_files_without_from_get_one_line_naming_the_flag(
    case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    name, path = RAW_FOREIGN[case]
    for command in (["compare", str(path), str(path), "-o", str(tmp_path / "c")], ["report", str(path)]):
        assert main([*command, "-o", str(tmp_path / "out")] if command[0] == "report" else command) == 2
        err = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
        assert len(err) == 1 and err[0].startswith("ocllm: error: "), err
        assert f"--from {name}" in err[0], err


def test_compare_of_runs_with_no_task_in_common_refuses_and_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # It wrote a full report of n/a figures and exited 0 (issue 41): read as a comparison made.
    a = run_file(tmp_path, "a", {"t1": "FINAL: B", "t2": "FINAL: C"})
    b = run_file(tmp_path, "b", {"u1": "FINAL: B", "u2": "FINAL: B", "u3": "FINAL: C"})
    monkeypatch.chdir(tmp_path)  # where the default output folder, comparisons/, would be made
    capsys.readouterr()
    for out in ([], ["-o", str(tmp_path / "c")]):
        assert main(["compare", str(a), str(b), *out]) == 2
        captured = capsys.readouterr()
        assert captured.out == "" and captured.err.count("\n") == 1
        assert captured.err == (
            f"ocllm: error: {a} and {b} have no task in common (2 and 3 tasks, paired by id): nothing to compare; "
            "compare two runs of one suite\n"
        )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.json", "b.json"]
    # One task in common is a comparison (of that task).
    c = run_file(tmp_path, "c", {"t1": "FINAL: B", "u9": "FINAL: B"})
    assert compare_cli(a, c, tmp_path / "ac")["n_paired"] == 1


def test_runs_with_no_task_in_common_show_no_statistic(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 28, section 4: no p-value, difference or test is drawn on 0 paired tasks (the pages a matrix report's
    lane of another suite is compared on; `compare` itself refuses such a pair)."""
    from ocllm.console import console_comparison
    from ocllm.report.write import write_comparison

    a = mmlu_pro_folder(tmp_path / "a")
    b = tmp_path / "b"
    b.mkdir()
    records = json.loads((a / "math_result.json").read_text())
    write_json(b / "math_result.json", [{**r, "question_id": r["question_id"] + 1000} for r in records])
    doc = compare_runs(*(load_scored(side, from_format="mmlu-pro") for side in (a, b)))
    write_comparison(doc, tmp_path / "c")
    capsys.readouterr()
    console_comparison(doc)
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if line.strip().strip("│").split("│")[0].strip() == "all")
    cells = [c.strip() for c in row.strip().strip("│").split("│")]
    assert cells[1:3] == ["n/a", "n/a"] and cells[5:] == ["-", "-"]  # issue 30: 0/0 read as a measured zero
    md = (tmp_path / "c" / "comparison.md").read_text()
    assert "no test (no paired task)" in md and "p = 1" not in md
    page = (tmp_path / "c" / "comparison.html").read_text()
    assert "exact McNemar p</div><div class=\"value\">n/a<" in page
