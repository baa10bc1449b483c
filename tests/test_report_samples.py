"""The reports of repeated samples (issue 21): the run page's avg@k with its clustered interval, pass@k curve,
maj@k and per-task agreement; the comparison page's test, per-task differences and minimum detectable effect; the
matrix's lanes with their k and which differences are resolved. Every figure a page shows is checked against the
document it was drawn from (comparison.json, matrix.json, or the run report's data), formatted here on its own."""

from __future__ import annotations

import html as html_lib
import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

import msgspec
import pytest
from test_report_render import charts_in, table_rows
from test_samples import DESIGN, RIGHT_A, RIGHT_B, _lane_design, sampled_file

from ocllm.analysis.report_documents import run_report_doc
from ocllm.cli import main
from ocllm.sim import SimConfig, SimServer
from ocllm.suites import shipped_suites


def pct1(value: float) -> str:
    return f"{100.0 * value:.1f}%"


def span(low: float | None, high: float | None) -> str:
    """An interval as the pages print it; n/a where the document holds none (null: one task of several samples)."""
    return "n/a" if low is None or high is None else f"{100.0 * low:.1f}–{100.0 * high:.1f}%"


def pts(value: float) -> str:
    text = f"{100.0 * value:+.1f}"
    return "0.0" if text in ("+0.0", "-0.0") else text


def p3(p: float) -> str:
    return "< 0.001" if p < 0.001 else f"{p:.3g}"


def p_said(test: str, p: float) -> str:
    """How a page names a test and its p value: `paired t p = 0.0199`, `paired t p < 0.001`."""
    return f"{test} p < 0.001" if p < 0.001 else f"{test} p = {p:.3g}"


def text_of(page: str) -> str:
    """A page's visible text in one line (tags gone, entities read), for phrases that cross elements."""
    body = re.sub(r"<(script|style|svg)\b.*?</\1>", " ", page, flags=re.S)
    return " ".join(html_lib.unescape(re.sub(r"<[^>]+>", " ", body)).split())


def report_of(tmp_path: Path, source: Path) -> tuple[str, str, dict[str, Any]]:
    """`ocllm report` of `source`: its Markdown, its HTML, and the document the pages were drawn from."""
    out = tmp_path / f"{source.stem}_report"
    assert main(["report", str(source), "-o", str(out)]) == 0
    doc = msgspec.to_builtins(run_report_doc(source))
    return (out / "report.md").read_text(), (out / "report.html").read_text(), doc


# --- Run page -----------------------------------------------------------------------------------------


def test_the_run_page_leads_with_avg_at_k_and_its_clustered_interval(tmp_path: Path) -> None:
    md, page, doc = report_of(tmp_path, sampled_file(tmp_path, "L", DESIGN))
    s = doc["summary"]
    k = s["samples_per_task"]
    assert k == 4
    assert f"**avg@{k} {pct1(s['accuracy'])}**" in md
    assert f"95% t interval clustered on tasks {span(s['ci_low'], s['ci_high'])}" in md
    assert "Wilson" not in md.split("## By category")[0]
    kpi = text_of(re.search(r'data-figure="accuracy">(.*?)</div></div>', page, re.S).group(1))
    assert f"avg@{k}" in kpi and pct1(s["accuracy"]) in kpi
    assert f"95% t interval clustered on tasks {span(s['ci_low'], s['ci_high'])}" in kpi


def test_the_run_page_shows_pass_at_k_maj_at_k_and_the_agreement_of_each_task(tmp_path: Path) -> None:
    md, page, doc = report_of(tmp_path, sampled_file(tmp_path, "L", DESIGN))
    s = doc["summary"]
    k = s["samples_per_task"]
    curve = sorted((int(j), v) for j, v in s["pass_at_k"].items())
    assert [j for j, _ in curve] == [1, 2, 3, 4]
    for j, value in curve:
        assert f"| pass@{j} | {pct1(value)} |" in md
    assert f"| maj@{k} | {pct1(s['majority_at_k'])} |" in md
    assert f"| pass^{k}: all {k} samples right | {pct1(s['pass_hat_k'][str(k)])} |" in md
    agree = sum(t["agree"] for t in s["by_task"].values())
    assert agree == 2  # t1 and t4
    assert f"{agree} of {len(s['by_task'])} tasks" in md
    # The histogram's counts, as a table in Markdown: tasks per share of correct samples.
    shares = Counter(round(100 * t["share"]) for t in s["by_task"].values())
    for share, n in shares.items():
        assert f"| {share}% | {n} |" in md

    drawn = charts_in(page)
    assert {"pass-at-k", "task-agreement"} <= set(drawn)
    assert f"{agree} of {len(s['by_task'])} tasks" in text_of(drawn["task-agreement"])
    rows = table_rows(page, "data-pass-at-k")[0]
    assert [r[:2] for r in rows[1:]] == [
        *([f"pass@{j}", pct1(v)] for j, v in curve),
        [f"maj@{k}", pct1(s["majority_at_k"])],
    ]


def test_the_per_category_table_gains_pass_at_k_and_maj_at_k(tmp_path: Path) -> None:
    md, page, doc = report_of(tmp_path, sampled_file(tmp_path, "L", DESIGN))
    cats = doc["summary"]["by_category"]
    k = doc["summary"]["samples_per_task"]
    header = md.split("## By category")[1].splitlines()[2]
    assert f"pass@{k}" in header and f"maj@{k}" in header
    rows = table_rows(page, "data-categories")[0]
    assert f"pass@{k}" in rows[0] and f"maj@{k}" in rows[0]
    at = {r[0]: r for r in rows[1:]}
    for name, c in cats.items():
        expected_pass = pct1(c["pass_at_k"][str(k)]) if str(k) in c["pass_at_k"] else "n/a"
        assert expected_pass in at[name] and pct1(c["majority_at_k"]) in at[name]
        line = next(x for x in md.splitlines() if x.startswith(f"| {name} |"))
        assert f"| {expected_pass} | {pct1(c['majority_at_k'])} |" in line
        assert span(c["ci_low"], c["ci_high"]) in line


def test_each_record_is_a_sample_listed_under_its_task(tmp_path: Path) -> None:
    md, page, doc = report_of(tmp_path, sampled_file(tmp_path, "L", DESIGN))
    expected = [(t["task_id"], t["sample"]) for t in doc["tasks"]]
    expected.sort(key=lambda pair: (list(DESIGN).index(pair[0]), pair[1]))
    section = md.split("## Tasks")[1].split("\n## ")[0]
    table = [line for line in section.splitlines() if line.startswith("| ")][2:]  # under the header
    assert [tuple(c.strip() for c in line.split("|")[1:3]) for line in table] == [(t, str(i)) for t, i in expected]
    shown = re.findall(r'data-task-id="([^"]+)" data-sample="(\d+)"', page)
    assert [(t, int(i)) for t, i in shown] == expected


# Two categories whose tasks go together: c1 right, c2 wrong. The tasks of a category share more than the
# tasks themselves, so the standard error clustered on category is the larger one.
TOGETHER: dict[str, tuple[str, list[str | None]]] = {
    "a1": ("c1", ["FINAL: B"] * 3),
    "a2": ("c1", ["FINAL: B", "FINAL: B", "FINAL: A"]),
    "a3": ("c1", ["FINAL: B"] * 3),
    "b1": ("c2", ["FINAL: A"] * 3),
    "b2": ("c2", ["FINAL: A", "FINAL: B", "FINAL: A"]),
    "b3": ("c2", ["FINAL: A"] * 3),
}


def test_the_category_clustered_error_is_shown_where_it_is_larger(tmp_path: Path) -> None:
    md, page, doc = report_of(tmp_path, sampled_file(tmp_path, "L", DESIGN))
    s = doc["summary"]
    assert s["accuracy_stderr_category"] < s["accuracy_stderr"]  # not shown: it says nothing more
    assert "Clustered on its" not in md and "Clustered on its" not in page
    assert f"| standard error, clustered on tasks | {100 * s['accuracy_stderr']:.1f} pts |" in md

    md, page, doc = report_of(tmp_path, sampled_file(tmp_path, "T", TOGETHER))
    s = doc["summary"]
    assert s["accuracy_stderr_category"] > s["accuracy_stderr"]
    said = (
        f"Clustered on its {s['categories']} categories the standard error is "
        f"{100 * s['accuracy_stderr_category']:.1f} pts, larger than the {100 * s['accuracy_stderr']:.1f} pts "
        "clustered on tasks: the tasks of a category share more than the tasks themselves do"
    )
    assert said in md and said in text_of(page)


def test_one_sample_per_task_keeps_the_wilson_headline_and_no_sampled_figures(tmp_path: Path) -> None:
    single = {tid: (cat, answers[:1]) for tid, (cat, answers) in DESIGN.items()}
    md, page, doc = report_of(tmp_path, sampled_file(tmp_path, "S", single))
    s = doc["summary"]
    assert s["samples_per_task"] == 1
    assert f"**Accuracy {pct1(s['accuracy'])}**" in md and "95% Wilson interval" in md
    assert "avg@" not in md and "pass@" not in md and "maj@" not in md
    assert "avg@" not in page and "pass-at-k" not in page and "data-sample" not in page
    assert "| task | category | expected |" in md  # no sample column


# --- Comparison page ----------------------------------------------------------------------------------


def compare_of(tmp_path: Path, a: Path, b: Path) -> tuple[str, str, dict[str, Any]]:
    out = tmp_path / "comparison"
    assert main(["compare", str(a), str(b), "-o", str(out)]) == 0
    doc = json.loads((out / "comparison.json").read_text())
    return (out / "comparison.md").read_text(), (out / "comparison.html").read_text(), doc


def test_a_sampled_comparison_names_its_test_and_its_clustered_figures(tmp_path: Path) -> None:
    a = sampled_file(tmp_path, "A", _lane_design(RIGHT_A))
    b = sampled_file(tmp_path, "B", _lane_design(RIGHT_B))
    md, page, doc = compare_of(tmp_path, a, b)
    assert doc["test"] == "paired t" and doc["mcnemar_p"] is None
    for text in (md, text_of(page)):
        assert "McNemar" not in text
        assert p_said("paired t", doc["p_value"]) in text
        assert "paired-bootstrap" not in text and "paired bootstrap" not in text
        assert "t interval clustered on tasks" in text
        assert f"{pts(doc['diff_ci_low'])} to {pts(doc['diff_ci_high'])} pts" in text
        mde = (
            f"With {doc['n_paired']} paired tasks a difference under {100 * doc['minimum_detectable_effect']:.1f} "
            "points could not be detected reliably (80% power)."
        )
        assert mde in text
        assert f"{100 * doc['diff_stderr']:.1f} pts" in text
    assert f"| samples per task | {doc['samples_per_task_a']} | {doc['samples_per_task_b']} |" in md
    assert doc["diff_stderr_category"] < doc["diff_stderr"] and "Clustered on its" not in md
    # The by-category table's p column is the paired t test's.
    header = md.split("## By category")[1].splitlines()[2]
    assert "paired t p" in header
    rows = table_rows(page, "data-categories")[0]
    assert "paired t p" in rows[0]
    for name, c in doc["by_category"].items():
        row = next(r for r in rows[1:] if r[0] == name)
        assert p3(c["p_value"]) in row


def test_a_sampled_comparison_draws_the_per_task_differences(tmp_path: Path) -> None:
    a = sampled_file(tmp_path, "A", _lane_design(RIGHT_A))
    b = sampled_file(tmp_path, "B", _lane_design(RIGHT_B))
    md, page, doc = compare_of(tmp_path, a, b)
    counts = Counter(pts(d) for d in doc["task_differences"])
    assert len(doc["task_differences"]) == doc["n_paired"]
    for value, n in counts.items():
        assert f"| {value} pts | {n} |" in md
    assert "task-differences" in charts_in(page)
    rows = table_rows(page, "data-task-differences")[0]
    assert {r[0]: r[1] for r in rows[1:]} == {f"{v} pts": str(n) for v, n in counts.items()}
    # Flips show each side's share of correct samples.
    for flip in doc["flips"]:
        line = next(x for x in md.splitlines() if x.startswith(f"| {flip['task_id']} |"))
        assert f"| {round(100 * flip['a_share'])}% | {round(100 * flip['b_share'])}% |" in line
    shown = table_rows(page, "data-flips")[0]
    assert "share right" in " ".join(shown[0])
    for flip in doc["flips"]:
        row = next(r for r in shown[1:] if r[0] == flip["task_id"])
        assert f"{round(100 * flip['a_share'])}%" in row and f"{round(100 * flip['b_share'])}%" in row


def test_the_category_clustered_error_of_a_difference_is_shown_where_larger(tmp_path: Path) -> None:
    # B gains in c1 only: the categories differ more than the tasks within them.
    a = sampled_file(tmp_path, "A", _lane_design([1, 1, 1, 1, 1, 1, 1, 1]))
    b = sampled_file(tmp_path, "B", _lane_design([3, 2, 3, 3, 1, 1, 2, 1]))
    md, page, doc = compare_of(tmp_path, a, b)
    assert doc["diff_stderr_category"] > doc["diff_stderr"]
    said = (
        f"Clustered on its {doc['categories']} categories the standard error is "
        f"{100 * doc['diff_stderr_category']:.1f} pts, larger than the {100 * doc['diff_stderr']:.1f} pts "
        "clustered on tasks"
    )
    assert said in md and said in text_of(page)


def test_one_sample_per_task_reads_as_before_and_states_what_its_interval_holds(tmp_path: Path) -> None:
    right_a = [True, False, True, True, False, False, True, True, False, True]
    right_b = [True, True, True, False, True, True, True, True, True, True]
    design_a = {f"t{i}": ("c1" if i < 5 else "c2", ["FINAL: B" if r else "FINAL: A"]) for i, r in enumerate(right_a)}
    design_b = {f"t{i}": ("c1" if i < 5 else "c2", ["FINAL: B" if r else "FINAL: A"]) for i, r in enumerate(right_b)}
    md, page, doc = compare_of(tmp_path, sampled_file(tmp_path, "A", design_a), sampled_file(tmp_path, "B", design_b))
    assert doc["test"] == "exact McNemar"
    assert p_said("exact McNemar", doc["mcnemar_p"]) + "." in md
    assert "95% exact interval (matching the McNemar test)" in md and "clustered on tasks" not in md
    assert "samples per task" not in md and "task-differences" not in page
    assert "| category | paired |" in md and "McNemar p" in md.split("## By category")[1].splitlines()[2]
    # The exact interval reaches past the detectable difference: the interval is said, the contradicted sentence not.
    reach = max(abs(doc["diff_ci_low"]), abs(doc["diff_ci_high"]))
    assert reach > doc["minimum_detectable_effect"]
    room = f"The 95% interval still holds a difference of up to {100 * reach:.1f} points"
    for text in (md, text_of(page)):
        assert room in text and "could not be detected reliably" not in text and "80% power" not in text
    assert "exact McNemar p" in text_of(page) and "exact interval (matching the McNemar test)" in text_of(page)


# --- Matrix -------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def sampled_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Four lanes of the demo suite from the simulator, each task asked 3 times (seed + i for sample i): one far
    from the baseline, one nearer, and one of the baseline's own model (it never differs on a task)."""
    folder = tmp_path_factory.mktemp("sampled-matrix")
    config = folder.parent / f"{folder.name}-lanes.toml"
    lanes = (
        ("A_baseline", "sim-baseline"),
        ("B_reasoning", "sim-reasoning"),
        ("C_baseline_again", "sim-baseline"),
        ("D_weak", "sim-weak"),
    )
    models = {"sim-baseline": 0.85, "sim-reasoning": 0.93, "sim-weak": 0.3}
    with SimServer(SimConfig(models=models, suites=tuple(shipped_suites().values()))) as sim:
        config.write_text(
            "".join(
                f'[lanes.{name}]\nbase_url = "{sim.base_url}"\nmodel = "{model}"\nsuite = "demo"\n'
                "seed = 7\ntemperature = 0.6\n"
                for name, model in lanes
            )
        )
        for name, _ in lanes:
            argv = ["run", "--config", str(config), "--lane", name, "--samples", "3", "--out", str(folder / name)]
            assert main(argv) == 0
    return folder


def test_the_matrix_ranks_lanes_with_their_k_and_says_which_differences_are_resolved(
    sampled_folder: Path, tmp_path: Path
) -> None:
    out = tmp_path / "m"
    assert main(["matrix-report", str(sampled_folder), "-o", str(out)]) == 0
    doc = json.loads((out / "matrix.json").read_text())
    md, page = (out / "matrix.md").read_text(), (out / "matrix.html").read_text()
    lanes = doc["lanes"]
    assert [lane["samples_per_task"] for lane in lanes] == [3, 3, 3, 3]
    assert [lane["accuracy"] for lane in lanes] == sorted((lane["accuracy"] for lane in lanes), reverse=True)

    board = [line for line in md.split("## Leaderboard")[1].splitlines() if line.startswith("| ")]
    assert "samples per task" in board[0] and "avg@k" in board[0]
    shown = table_rows(page, "data-leaderboard")[0]
    assert "samples per task" in shown[0]
    for rank, lane in enumerate(lanes, start=1):
        line = next(x for x in board[2:] if x.startswith(f"| {rank} |"))
        assert lane["label"] in line
        assert f"| **{pct1(lane['accuracy'])}** | {span(lane['ci_low'], lane['ci_high'])} | 3 |" in line
        row = shown[rank]
        assert pct1(lane["accuracy"]) in row and span(lane["ci_low"], lane["ci_high"]) in row and "3" in row

    resolved_md = md.split("## Which differences are resolved")[1]
    rows = table_rows(page, "data-resolved")[0]
    assert len(rows) == 1 + len(doc["comparisons"])
    for comp in doc["comparisons"]:
        label = comp["b"]["label"]
        mde = comp["minimum_detectable_effect"]
        cells = [
            pts(comp["diff"]) + " pts",
            f"{pts(comp['diff_ci_low'])} to {pts(comp['diff_ci_high'])} pts",
            p_said(comp["test"], comp["p_value"]),
            "yes" if comp["significant"] else "no",
            "n/a" if mde is None else f"{100 * mde:.1f} pts",
        ]
        line = next(x for x in resolved_md.splitlines() if x.startswith(f"| {label} |"))
        assert " | ".join(cells) in line
        row = next(r for r in rows[1:] if r[0] == label)
        assert row[1:] == cells
    resolved = [c["b"]["label"] for c in doc["comparisons"] if c["significant"]]
    def why(c: dict[str, Any]) -> str:
        """A lane not resolved: under its detectable difference, unless its interval holds more (issue 41)."""
        mde = c["minimum_detectable_effect"]
        if mde is None:
            return " (never differs on a task)"
        reach = 100 * max(abs(c["diff_ci_low"]), abs(c["diff_ci_high"]))
        return f" (under {100 * mde:.1f} points)" if round(reach, 1) < round(100 * mde, 1) else (
            f" (its 95% interval holds up to {reach:.1f} points)"
        )

    unresolved = [c["b"]["label"] + why(c) for c in doc["comparisons"] if not c["significant"]]
    assert resolved and unresolved  # D_weak is resolved; C_baseline_again never differs
    said = (
        f"Resolved against {doc['baseline']} (significant at the 5% level): {', '.join(resolved) or 'none'}. "
        f"Not resolved: {', '.join(unresolved) or 'none'}."
    )
    assert said in md and said in text_of(page)


def test_every_task_differing_alike_is_not_called_clustered() -> None:
    """Issue 30: each interval is named as it was computed. Every task one third of a point ahead: the exact bound
    over tasks and its own test, not a t interval clustered on tasks."""
    from ocllm.analysis.paired import sampled_paired_figures
    from ocllm.report.markdown import comparison_core

    figures = sampled_paired_figures([0.0, 1 / 3, 2 / 3] * 4, [1 / 3, 2 / 3, 1.0] * 4, (3, 3), "A", "B")
    doc = {**msgspec.to_builtins(figures), "a": {"label": "A"}, "b": {"label": "B"}}
    text = "\n".join(comparison_core(doc))
    assert "95% exact bound over tasks (every task the same difference)" in text
    assert "t interval clustered on tasks" not in text and "exact test over tasks p = 0.0634" in text
