"""Issue 30, item 3: no page or console shows a figure computed from nothing. `compare`, `report` and
`matrix-report` are fed a lane whose every request failed, a comparison with no paired task, one with a single
paired task, and a lane of another suite; every number they print is read."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from test_stats import wilson_by_hand

from ocllm.cli import main

OPTIONS = ["3", "4", "5", "6"]


def run_dir(folder: Path, lane: str, suite: str, answers: dict[str, str | None]) -> Path:
    """A run directory written by hand: each task an MCQ whose gold is B; an answer of None is a failed request."""
    folder.mkdir(parents=True)
    tasks = [
        {"id": task_id, "type": "mcq", "question": f"q {task_id}", "options": OPTIONS, "answer": "B", "category": "c"}
        for task_id in answers
    ]
    (folder / "suite.jsonl").write_text("".join(json.dumps(t) + "\n" for t in tasks))
    samples = []
    for task_id, content in answers.items():
        if content is None:
            samples.append({"task_id": task_id, "error": "HTTP 500 after 4 attempts: tools param requires --jinja flag",
                            "error_kind": "http_status", "error_status": 500})  # fmt: skip
        else:
            samples.append({"task_id": task_id, "content": content, "finish_reason": "stop"})
    (folder / "samples.jsonl").write_text("".join(json.dumps(s) + "\n" for s in samples))
    manifest = {"lane": {"name": lane, "model": "m", "suite": suite}, "suite": {"name": suite, "tasks": len(tasks)}}
    (folder / "manifest.json").write_text(json.dumps(manifest))
    return folder


def text_of(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


# What a figure of nothing looks like wherever it is printed: an accuracy of 0 of 0, the whole-range interval, a
# difference of zero with a zero-width interval, p = 1 (all of them what issue 30 saw).
OF_NOTHING = re.compile(r"(?<![\d.])0\.0 ?%|0\.0[–-]100\.0|\b0/0\b|\+0\.0 \(\+0\.0 to \+0\.0\)|\bp = 1\b|McNemar p 1\b")


def assert_nothing_from_nothing(text: str, where: str) -> None:
    found = OF_NOTHING.findall(text)
    assert not found, (where, found)


@pytest.fixture()
def folders(tmp_path: Path) -> dict[str, Path]:
    ids = [f"t{i}" for i in range(6)]
    return {
        "good": run_dir(
            tmp_path / "m" / "A_good", "A_good", "mcq6", dict.fromkeys(ids, "FINAL: B") | {"t5": "FINAL: C"}
        ),
        "failed": run_dir(tmp_path / "m" / "B_failed", "B_failed", "mcq6", dict.fromkeys(ids)),
        "other": run_dir(tmp_path / "m" / "C_other", "C_other", "tools", {"x1": "FINAL: B", "x2": "FINAL: A"}),
        "one": run_dir(tmp_path / "one" / "D_one", "D_one", "mcq6", {"t0": "FINAL: A", **dict.fromkeys(ids[1:])}),
    }


def test_a_comparison_with_nothing_paired_prints_no_figure(
    folders: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    capsys.readouterr()
    assert main(["compare", str(folders["good"]), str(folders["failed"]), "-o", str(tmp_path / "c")]) == 0
    out = capsys.readouterr().out
    doc = json.loads((tmp_path / "c" / "comparison.json").read_text())
    assert doc["n_paired"] == 0
    md = (tmp_path / "c" / "comparison.md").read_text()
    page = text_of((tmp_path / "c" / "comparison.html").read_text())
    for where, text in (("console", out), ("markdown", md), ("html", page)):
        assert "No paired task" in text, where
        assert_nothing_from_nothing(text, where)
    assert "| accuracy | n/a | n/a |" in md and "| 95% interval | n/a | n/a |" in md
    assert "**n/a**" in md.split("- Difference")[1].splitlines()[0] and "no test" in md
    assert "difference n/a" in page and "exact McNemar p n/a" in page and "no test" in page


def test_a_comparison_of_one_task_gives_the_exact_interval_and_no_claim(
    folders: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """One paired task, A right (t0 of A_good) and B wrong (D_one answered A): B - A = -100 points. The exact interval
    by hand: the upper limit solves P[U >= 1/2 + d/2] = 0.025 for U uniform (Beta(1, 1): one discordant pair, none
    won by B, every pair discordant), so d = 0.95; the lower limit is -1. p = 1 (one discordant pair)."""
    capsys.readouterr()
    assert main(["compare", str(folders["good"]), str(folders["one"]), "-o", str(tmp_path / "c")]) == 0
    out = capsys.readouterr().out
    doc = json.loads((tmp_path / "c" / "comparison.json").read_text())
    assert (doc["n_paired"], doc["a_wins"], doc["b_wins"]) == (1, 1, 0)
    assert (doc["diff_ci_low"], doc["diff_ci_high"]) == (pytest.approx(-1.0), pytest.approx(0.95, abs=1e-9))
    assert doc["significant"] is False
    said = "D_one minus A_good: -100.0 points, 95% CI -100.0 to +95.0; exact McNemar p = 1)"
    md = (tmp_path / "c" / "comparison.md").read_text()
    page = text_of((tmp_path / "c" / "comparison.html").read_text())
    for where, text in (("console", " ".join(out.split())), ("markdown", md), ("html", page)):
        assert said in text and "not statistically significant" in text, where
    # The card and the tables state the same difference, with the same sign, named the same way round.
    assert "- Difference (D_one − A_good): **-100.0 pts**, 95% exact interval (matching the McNemar test) -100.0 to " \
           "+95.0 pts; not significant." in md  # fmt: skip
    assert "-100.0 pts D_one − A_good; 95% exact interval (matching the McNemar test) -100.0 to +95.0 pts" in page


def test_a_run_with_nothing_scored_reports_no_accuracy(
    folders: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    capsys.readouterr()
    assert main(["report", str(folders["failed"]), "-o", str(tmp_path / "r")]) in (0, 1)
    out = capsys.readouterr().out
    md = (tmp_path / "r" / "report.md").read_text()
    page = text_of((tmp_path / "r" / "report.html").read_text())
    assert "**Accuracy n/a**: no task was scored (6 failed request(s))." in md
    assert "accuracy n/a 95% Wilson n/a" in page
    for where, text in (("console", out), ("markdown", md), ("html", page)):
        assert_nothing_from_nothing(text, where)


def test_the_leaderboard_ranks_only_lanes_it_can_compare(
    folders: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    capsys.readouterr()
    assert main(["matrix-report", str(tmp_path / "m"), "--baseline", "A_good", "-o", str(tmp_path / "mr")]) == 0
    out = capsys.readouterr().out
    doc = json.loads((tmp_path / "mr" / "matrix.json").read_text())
    lanes = {lane["label"]: lane for lane in doc["lanes"]}
    assert [lane["label"] for lane in doc["lanes"]] == ["A_good", "B_failed", "C_other"]
    assert lanes["A_good"]["rank"] == 1 and lanes["A_good"]["not_ranked"] is None
    assert lanes["B_failed"]["rank"] is None and lanes["B_failed"]["not_ranked"].startswith("nothing scored")
    assert lanes["C_other"]["rank"] is None and "another suite (tools, 2 tasks)" in lanes["C_other"]["not_ranked"]
    assert "no task is in both suites" in lanes["C_other"]["not_ranked"]
    md = (tmp_path / "mr" / "matrix.md").read_text()
    page = text_of((tmp_path / "mr" / "matrix.html").read_text())
    rows = {line.split("|")[2].strip(): [c.strip() for c in line.split("|")[1:-1]] for line in md.splitlines()
            if line.startswith("| ") and line.split("|")[2].strip().split(" ")[0] in lanes}  # fmt: skip
    wilson = {k_n: "{:.1f}–{:.1f}%".format(*(100 * v for v in wilson_by_hand(*k_n))) for k_n in ((5, 6), (1, 2))}
    assert rows["A_good (baseline)"][:5] == ["1", "A_good (baseline)", "**83.3%**", wilson[5, 6], "5/6"]
    assert rows["B_failed"][:5] == ["—", "B_failed", "**n/a**", "n/a", "n/a"]
    assert rows["C_other"][:5] == ["—", "C_other", "**50.0%**", wilson[1, 2], "1/2"]
    console_rows = {}
    for line in out.splitlines():
        cells = [c.strip() for c in line.strip("│ ").split("│")]
        if len(cells) > 8:
            console_rows[cells[1]] = cells
    assert console_rows["B_failed"][0] == "—" and console_rows["B_failed"][7:9] == ["n/a", "n/a"]
    assert console_rows["A_good"][0] == "1" and console_rows["C_other"][0] == "—"
    for where, text in (("console", out), ("markdown", md), ("html", page)):
        assert "not ranked: nothing scored" in text and "not ranked: it ran another suite" in text, where
        assert_nothing_from_nothing(text, where)
    assert "B_failed (no task paired with the baseline)" in md
    assert "| B_failed | n/a | n/a | no test (no paired task) | n/a | n/a |" in md
