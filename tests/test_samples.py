"""Repeated samples (issue 21): avg@k, pass@k, maj@k, task- and category-clustered errors, the sampled
comparison, and `run --samples k` with its seeds, resume, shards and merge. Every figure is computed here on its
own (textbook formulas, SciPy, statsmodels), never by the code under test."""

from __future__ import annotations

import functools
import json
import math
from pathlib import Path

import msgspec
import numpy as np
import pytest
import statsmodels.api as sm
from conftest import legacy_record, write_json
from helpers import run_cli as ocllm_run
from helpers import samples_of
from scipy import stats as sps

from ocllm.analysis.clustered import majority_is_gold, pass_at_k
from ocllm.analysis.compare import compare_runs, load_scored
from ocllm.analysis.paired import paired_by_task, sampled_paired_figures
from ocllm.analysis.report_documents import run_report_doc
from ocllm.cli import main
from ocllm.sim import SimConfig, SimServer
from ocllm.suites import shipped_suites

# Each task's k = 4 answers (gold B), and its category. None: the request failed (no sample of the task).
DESIGN: dict[str, tuple[str, list[str | None]]] = {
    "t1": ("c1", ["FINAL: B", "FINAL: B", "FINAL: B", "FINAL: B"]),  # all right, agree
    "t2": ("c1", ["FINAL: B", "FINAL: A", "FINAL: A", "FINAL: B"]),  # 2 right, 2 the same wrong: a tie, no maj
    "t3": ("c1", ["FINAL: A", "FINAL: C", "FINAL: B", "FINAL: D"]),  # 1 right; every answer once: a tie
    "t4": ("c2", ["FINAL: C", "FINAL: C", "FINAL: C", "FINAL: C"]),  # all wrong, agree
    "t5": ("c2", ["FINAL: B", "FINAL: B", "FINAL: A", "I cannot say."]),  # 2 right vs 1 A: the gold is the majority
    "t6": ("c2", ["FINAL: B", None, "FINAL: A", "FINAL: B"]),  # 3 scored: 2 right
    "t7": ("c3", ["FINAL: A", "FINAL: B", "FINAL: B", "FINAL: B"]),  # 3 right
}
MAJORITY = {"t1": True, "t2": False, "t3": False, "t4": False, "t5": True, "t6": True, "t7": True}
AGREE = {"t1": True, "t2": False, "t3": False, "t4": True, "t5": False, "t6": False, "t7": False}


def sampled_file(tmp_path: Path, name: str, design: dict[str, tuple[str, list[str | None]]]) -> Path:
    """An old-harness metrics file whose records carry `sample`: one record per (task, sample)."""
    tasks = []
    for task_id, (category, answers) in design.items():
        for index, content in enumerate(answers):
            record = legacy_record(task_id, content, expected="B", category=category, sample=index)
            if content is None:
                record["error"] = "HTTP 500 after 4 attempts"
            tasks.append(record)
    return write_json(tmp_path / f"{name}.json", {"lane": name, "tasks": tasks})


def verdicts(design: dict[str, tuple[str, list[str | None]]]) -> dict[str, list[int]]:
    """Each task's scored samples, 1 right / 0 wrong, as the design says (gold B, `FINAL: B` the one right)."""
    return {tid: [int(a == "FINAL: B") for a in answers if a is not None] for tid, (_, answers) in design.items()}


def rescored(tmp_path: Path, source: Path) -> dict:
    out = tmp_path / f"{source.stem}.out.json"
    assert main(["rescore", str(source), "-o", str(out)]) == 0
    return json.loads(out.read_text())


def test_the_summary_s_sampled_figures_are_the_textbook_ones(tmp_path: Path) -> None:
    doc = rescored(tmp_path, sampled_file(tmp_path, "L", DESIGN))
    summary = doc["summary"]
    per_task = verdicts(DESIGN)
    flat = [v for values in per_task.values() for v in values]
    groups = [tid for tid, values in per_task.items() for _ in values]
    categories = [DESIGN[tid][0] for tid in groups]

    # One record per (task, sample), each saying which sample it is.
    assert [(t["task_id"], t["sample"]) for t in doc["tasks"]][:5] == [
        ("t1", 0), ("t1", 1), ("t1", 2), ("t1", 3), ("t2", 0)
    ]  # fmt: skip
    assert summary["samples_per_task"] == 4 and summary["tasks_scored"] == 7
    assert (summary["total"], summary["errors"], summary["scored"]) == (28, 1, 27)
    assert summary["accuracy"] == pytest.approx(sum(flat) / len(flat), abs=1e-6)  # avg@k: every sample

    # pass@j: 1 - C(n-c, j)/C(n, j) per task (Chen et al. 2021), averaged over the tasks with n >= j.
    for j in range(1, 5):
        values = [
            1 - math.comb(len(v) - sum(v), j) / math.comb(len(v), j) for v in per_task.values() if len(v) >= j
        ]
        assert summary["pass_at_k"][str(j)] == pytest.approx(sum(values) / len(values), abs=1e-6)
    assert summary["majority_at_k"] == pytest.approx(sum(MAJORITY.values()) / len(MAJORITY))

    # The standard error clustered on tasks, and on categories: statsmodels' cluster-robust OLS of an intercept.
    y, x = np.asarray(flat, dtype=float), np.ones(len(flat))
    on_tasks = sm.OLS(y, x).fit(cov_type="cluster", cov_kwds={"groups": pd_codes(groups)}, use_t=True)
    on_categories = sm.OLS(y, x).fit(cov_type="cluster", cov_kwds={"groups": pd_codes(categories)})
    assert summary["accuracy_stderr"] == pytest.approx(float(on_tasks.bse[0]), rel=1e-9)
    assert summary["accuracy_stderr_category"] == pytest.approx(float(on_categories.bse[0]), rel=1e-9)
    assert summary["categories"] == 3

    for tid, values in per_task.items():
        agreement = summary["by_task"][tid]
        assert (agreement["samples"], agreement["correct"]) == (len(values), sum(values))
        assert agreement["share"] == pytest.approx(sum(values) / len(values), abs=1e-6)
        assert (agreement["agree"], agreement["majority"]) == (AGREE[tid], MAJORITY[tid]), tid

    # Per category the same figures, on that category's tasks alone.
    c2 = [t for t in per_task if DESIGN[t][0] == "c2"]
    figures = summary["by_category"]["c2"]
    assert figures["samples_per_task"] == 4 and figures["tasks_scored"] == 3
    assert figures["majority_at_k"] == pytest.approx(sum(MAJORITY[t] for t in c2) / 3)
    assert figures["pass_at_k"]["1"] == pytest.approx(np.mean([np.mean(per_task[t]) for t in c2]), abs=1e-6)


def pd_codes(labels: list[str]) -> np.ndarray:
    """Cluster labels as the integer codes statsmodels takes."""
    names = sorted(set(labels))
    return np.asarray([names.index(label) for label in labels])


def test_the_run_report_s_interval_is_the_clustered_t_interval(tmp_path: Path) -> None:
    data = msgspec.to_builtins(run_report_doc(sampled_file(tmp_path, "L", DESIGN)))
    per_task = verdicts(DESIGN)
    flat = [v for values in per_task.values() for v in values]
    groups = pd_codes([tid for tid, values in per_task.items() for _ in values])
    fit = sm.OLS(np.asarray(flat, dtype=float), np.ones(len(flat))).fit(
        cov_type="cluster", cov_kwds={"groups": groups}, use_t=True
    )
    low, high = fit.conf_int(alpha=0.05)[0]  # t with G - 1 degrees of freedom
    assert (data["summary"]["ci_low"], data["summary"]["ci_high"]) == (pytest.approx(low), pytest.approx(high))


def test_majority_and_pass_at_k_on_hand_worked_cases() -> None:
    # 5 samples, 2 right: pass@2 = 1 - C(3,2)/C(5,2) = 1 - 3/10.
    assert pass_at_k(5, 2, 2) == pytest.approx(0.7)
    assert pass_at_k(5, 0, 3) == 0.0 and pass_at_k(5, 3, 3) == 1.0
    assert pass_at_k(200, 1, 1) == pytest.approx(1 / 200)
    with pytest.raises(ValueError):
        pass_at_k(3, 1, 4)
    gold = ("gold",)
    assert majority_is_gold([gold, gold, "x"], gold)
    assert not majority_is_gold([gold, "x"], gold)  # a tie
    assert majority_is_gold([gold, None, None], gold)  # no answer is no vote
    assert not majority_is_gold([None, None], gold)
    assert not majority_is_gold(["x", "x", gold], gold)


# Two lanes of 8 tasks in 2 categories, 3 samples each: the number of right samples of each task on each side.
RIGHT_A = [0, 1, 3, 2, 0, 3, 1, 2]
RIGHT_B = [2, 1, 3, 3, 1, 3, 2, 3]


def _lane_design(right: list[int]) -> dict[str, tuple[str, list[str | None]]]:
    return {
        f"t{i}": ("c1" if i < 4 else "c2", ["FINAL: B"] * r + ["FINAL: A"] * (3 - r)) for i, r in enumerate(right)
    }


def test_a_sampled_comparison_pairs_per_task_shares_with_a_clustered_error(tmp_path: Path) -> None:
    a = sampled_file(tmp_path, "A", _lane_design(RIGHT_A))
    b = sampled_file(tmp_path, "B", _lane_design(RIGHT_B))
    doc = msgspec.to_builtins(compare_runs(load_scored(a), load_scored(b)))
    d = (np.asarray(RIGHT_B) - np.asarray(RIGHT_A)) / 3
    assert doc["n_paired"] == 8 and doc["samples_per_task_a"] == doc["samples_per_task_b"] == 3
    assert doc["diff"] == pytest.approx(d.mean())
    assert doc["diff_stderr"] == pytest.approx(sps.sem(d))  # the paired standard error of the per-task means
    low, high = sps.t.interval(0.95, len(d) - 1, loc=d.mean(), scale=sps.sem(d))
    assert (doc["diff_ci_low"], doc["diff_ci_high"]) == (pytest.approx(low), pytest.approx(high))
    assert doc["test"] == "paired t" and doc["mcnemar_p"] is None
    assert doc["p_value"] == pytest.approx(sps.ttest_1samp(d, 0).pvalue)
    categories = pd_codes(["c1"] * 4 + ["c2"] * 4)
    fit = sm.OLS(d, np.ones(len(d))).fit(cov_type="cluster", cov_kwds={"groups": categories})
    assert doc["diff_stderr_category"] == pytest.approx(float(fit.bse[0])) and doc["categories"] == 2
    mde = (sps.norm.ppf(0.975) + sps.norm.ppf(0.8)) * sps.sem(d)
    assert doc["minimum_detectable_effect"] == pytest.approx(mde)
    assert doc["task_differences"] == pytest.approx(list(d), abs=1e-6)
    assert (doc["a_wins"], doc["b_wins"]) == (0, 5)  # tasks whose share is higher on that side
    assert doc["a_accuracy"] == pytest.approx(np.mean(RIGHT_A) / 3)
    assert doc["by_category"]["c2"]["diff"] == pytest.approx(d[4:].mean())
    shares = {f["task_id"]: (f["a_share"], f["b_share"]) for f in doc["flips"]}
    assert shares["t0"] == (pytest.approx(0.0), pytest.approx(2 / 3)) and "t1" not in shares
    # The sentence names the test it rests on.
    assert "paired t p =" in doc["verdict"]


def test_one_sample_per_task_keeps_mcnemar_and_adds_the_paired_standard_error(tmp_path: Path) -> None:
    right_a = [True, False, True, True, False, False, True, True, False, True]
    right_b = [True, True, True, False, True, True, True, True, True, True]
    design_a = {f"t{i}": ("c1" if i < 5 else "c2", ["FINAL: B" if r else "FINAL: A"]) for i, r in enumerate(right_a)}
    design_b = {f"t{i}": ("c1" if i < 5 else "c2", ["FINAL: B" if r else "FINAL: A"]) for i, r in enumerate(right_b)}
    a, b = sampled_file(tmp_path, "A", design_a), sampled_file(tmp_path, "B", design_b)
    doc = msgspec.to_builtins(compare_runs(load_scored(a), load_scored(b)))
    b_wins, a_wins = 4, 1
    assert doc["mcnemar_p"] == pytest.approx(sps.binomtest(b_wins, a_wins + b_wins, 0.5).pvalue)
    assert doc["p_value"] == doc["mcnemar_p"] and doc["test"] == "exact McNemar"
    d = np.asarray(right_b, dtype=float) - np.asarray(right_a, dtype=float)
    assert doc["diff_stderr"] == pytest.approx(sps.sem(d))
    assert doc["task_differences"] == []  # the discordant pairs say it with one sample
    assert "exact McNemar p =" in doc["verdict"]
    # Not significant: the exact interval (+30 points, reaching past +70) holds more than the detectable difference
    # of the normal approximation, so the verdict says what the interval holds, and no detectable difference beside
    # it that it contradicts (issue 41, item 5).
    mde = (sps.norm.ppf(0.975) + sps.norm.ppf(0.8)) * sps.sem(d)
    reach = max(abs(doc["diff_ci_low"]), abs(doc["diff_ci_high"]))
    assert reach > mde
    assert doc["significant"] is False and f"{mde * 100:.1f} points" not in doc["verdict"]
    assert f"The 95% interval still holds a difference of up to {reach * 100:.1f} points" in doc["verdict"]


SUITES = tuple(shipped_suites().values())


# `ocllm run` through the real entry point, as the simulator's baseline model.
run_cli = functools.partial(ocllm_run, model="sim-baseline")


@pytest.fixture(scope="module")
def sim() -> SimServer:
    with SimServer(SimConfig(suites=SUITES)) as server:
        yield server


def test_run_asks_each_task_k_times_with_seed_plus_i(sim: SimServer, tmp_path: Path) -> None:
    out = tmp_path / "run"
    lanes = tmp_path / "lanes.toml"
    lanes.write_text(
        f'[lanes.sampled]\nbase_url = "{sim.base_url}"\nmodel = "sim-baseline"\nsuite = "smoke"\n'
        "seed = 40\ntemperature = 0.6\n"
    )
    assert main(["run", "--config", str(lanes), "--lane", "sampled", "--samples", "3", "--out", str(out)]) == 0
    samples = samples_of(out)
    tasks = {t["id"] for t in map(json.loads, (out / "suite.jsonl").read_text().splitlines())}
    assert sorted((s["task_id"], s.get("sample", 0)) for s in samples) == sorted(
        (t, i) for t in tasks for i in range(3)
    )
    for s in samples:
        assert s["request"]["seed"] == 40 + s.get("sample", 0)
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["lane"]["samples_per_task"] == 3 and manifest["requests"] == 3 * len(tasks)
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["summary"]["samples_per_task"] == 3 and metrics["summary"]["tasks_scored"] == len(tasks)
    assert sorted((t["task_id"], t["sample"]) for t in metrics["tasks"]) == sorted(
        (s["task_id"], s.get("sample", 0)) for s in samples
    )


def test_resume_runs_only_the_samples_not_yet_run_and_refuses_fewer(
    sim: SimServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run"
    assert run_cli(sim.base_url, out, "--samples", "2") == 0
    first = samples_of(out)
    assert run_cli(sim.base_url, out, "--samples", "3", "--resume") == 0
    after = samples_of(out)
    assert after[: len(first)] == first  # nothing finished is asked again
    added = after[len(first) :]
    assert len(added) == len(first) // 2 and {s["sample"] for s in added} == {2}
    capsys.readouterr()
    assert run_cli(sim.base_url, out, "--samples", "1", "--resume") == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "samples_per_task may be raised to resume, not lowered" in err[0]


def test_sampled_shards_merge_into_the_unsharded_run(sim: SimServer, tmp_path: Path) -> None:
    whole = tmp_path / "whole"
    assert run_cli(sim.base_url, whole, "--samples", "2", "--concurrency", "1") == 0
    parts = [tmp_path / f"part{k}" for k in range(2)]
    for k, part in enumerate(parts):
        assert run_cli(sim.base_url, part, "--samples", "2", "--concurrency", "1", "--shard", f"{k}/2") == 0
    assert main(["merge", *map(str, parts), "-o", str(tmp_path / "merged")]) == 0

    def key(s: dict) -> tuple:
        return (s["task_id"], s.get("sample", 0), s["content"], s["request"]["seed"])

    assert sorted(map(key, samples_of(tmp_path / "merged"))) == sorted(map(key, samples_of(whole)))
    merged = json.loads((tmp_path / "merged" / "metrics.json").read_text())["summary"]
    alone = json.loads((whole / "metrics.json").read_text())["summary"]
    for figure in ("accuracy", "pass_at_k", "majority_at_k", "samples_per_task", "accuracy_stderr"):
        assert merged[figure] == alone[figure]


def test_a_shard_short_of_a_sample_is_refused(
    sim: SimServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    parts = [tmp_path / f"part{k}" for k in range(2)]
    for k, part in enumerate(parts):
        assert run_cli(sim.base_url, part, "--samples", "2", "--shard", f"{k}/2") == 0
    lines = (parts[0] / "samples.jsonl").read_text().splitlines(keepends=True)
    (parts[0] / "samples.jsonl").write_text("".join(lines[:-1]))
    capsys.readouterr()
    assert main(["merge", *map(str, parts), "-o", str(tmp_path / "merged")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "samples (2 for each of" in err[0] and "have no sample" in err[0]


def test_tasks_that_all_differ_alike_get_an_exact_test_never_a_certain_difference() -> None:
    # Every task's difference the same: the t test has no spread (p = 0 on two tasks, a zero-width interval), so
    # the exact bound and its own test stand in (review of issue 21; issue 30, item 4).
    two = sampled_paired_figures([0.0, 0.0], [1.0, 1.0], (3, 3), "A", "B")
    assert two.test == "exact test over tasks" and two.p_value == pytest.approx(0.5)  # the sign test's 2 * 0.5^2
    assert two.significant is False and two.diff_ci_low < 0 < two.diff_ci_high
    # Shares held as floats (1/3, 2/3): differences all 1/3 up to rounding are all the same too.
    a = [0.0, 1 / 3, 2 / 3] * 4
    b = [1 / 3, 2 / 3, 1.0] * 4
    many = sampled_paired_figures(a, b, (3, 3), "A", "B")
    n, d = 12, 1 / 3
    q = 1 - 0.025 ** (1 / n)  # the exact (Clopper-Pearson) bound on the share of tasks that would go the other way
    assert many.test == "exact test over tasks"
    assert (many.diff_ci_low, many.diff_ci_high) == (pytest.approx(d - q * (1 + d)), pytest.approx(d + q * (1 - d)))
    # Its p is the level at which that bound reaches 0: d = q(1 + d) with q = 1 - (alpha/2)^(1/n), so
    # alpha = 2 (1 + d)^-n = 2 (3/4)^12 = 0.063. The sign test's 2 * 0.5^12 = 0.0005 claimed what the interval
    # (which holds 0) does not; now the two agree.
    assert many.p_value == pytest.approx(2 * 0.75**12) and many.diff_ci_low < 0 and many.significant is False
    assert sps.binomtest(n, n, 0.5).pvalue < 0.001
    assert many.diff_ci_high > many.diff_ci_low  # never zero width
    same = sampled_paired_figures([1 / 3] * 10, [1 / 3] * 10, (3, 3), "A", "B")
    assert same.a_ci_high - same.a_ci_low > 0.2 and same.p_value == 1.0


def test_one_task_s_samples_give_no_interval_of_an_accuracy(tmp_path: Path) -> None:
    design = {"only": ("c1", ["FINAL: B"] * 16)}
    summary = rescored(tmp_path, sampled_file(tmp_path, "L", design))["summary"]
    assert summary["samples_per_task"] == 16 and summary["tasks_scored"] == 1
    data = msgspec.to_builtins(run_report_doc(sampled_file(tmp_path, "L", design)))
    # No interval, null (issue 40): the whole range in its place would read as one that was measured.
    assert (data["summary"]["ci_low"], data["summary"]["ci_high"]) == (None, None)
    assert data["summary"]["ci_method"].startswith("no interval (one task")


def test_an_audit_pairs_a_task_s_samples_as_one_task() -> None:
    # Epochs of one task judged by another tool and by this scorer: four tasks, three samples each.
    tasks = [t for t in "wxyz" for _ in range(3)]
    old = [True, True, False, False, False, False, True, True, True, False, True, False]
    new = [True, True, True, False, True, False, True, True, True, True, True, True]
    figures = paired_by_task(tasks, old, new, "tool", "ocllm", sides="scoring")
    share = {side: [np.mean(v[i : i + 3]) for i in range(0, 12, 3)] for side, v in (("old", old), ("new", new))}
    d = np.asarray(share["new"]) - np.asarray(share["old"])
    assert figures.n_paired == 4 and figures.test == "paired t"
    assert figures.p_value == pytest.approx(sps.ttest_1samp(d, 0).pvalue)
    once = paired_by_task(["a", "b", "c"], [True, False, True], [True, True, True], "tool", "ocllm")
    assert once.test == "exact McNemar" and once.n_paired == 3


def test_retry_errors_reruns_only_the_failed_samples(sim: SimServer, tmp_path: Path) -> None:
    out = tmp_path / "run"
    assert run_cli(sim.base_url, out, "--samples", "3") == 0
    lines = (out / "samples.jsonl").read_text().splitlines()
    # Sample 1 of the first task failed (as a request that ran out of attempts records it).
    failed = json.loads(lines[len(lines) // 3])
    assert failed["sample"] == 1
    lines[len(lines) // 3] = json.dumps(
        {"task_id": failed["task_id"], "sample": 1, "error": "HTTP 503 after 4 attempts", "error_kind": "http_status"}
    )
    (out / "samples.jsonl").write_text("\n".join(lines) + "\n")
    before = json.loads((out / "manifest.json").read_text())["requests"]
    assert run_cli(sim.base_url, out, "--samples", "3", "--retry-errors") == 0
    after = samples_of(out)
    assert len(after) == len(lines) and not any(s.get("error") for s in after)
    assert sorted((s["task_id"], s.get("sample", 0)) for s in after) == sorted(
        (json.loads(line)["task_id"], json.loads(line).get("sample", 0)) for line in lines
    )
    assert after[-1]["task_id"] == failed["task_id"] and after[-1]["sample"] == 1  # the one re-run, appended
    assert json.loads((out / "manifest.json").read_text())["requests"] == before + 1


def test_matrix_samples_sets_every_lane_s_samples(sim: SimServer, tmp_path: Path) -> None:
    lanes = tmp_path / "lanes.toml"
    lanes.write_text(
        f'[defaults]\nbase_url = "{sim.base_url}"\nsuite = "smoke"\ntemperature = 0.6\n'
        '[lanes.one]\nmodel = "sim-baseline"\n[lanes.two]\nmodel = "sim-reasoning"\nsamples_per_task = 5\n'
    )
    assert main(["matrix", str(lanes), "--out", str(tmp_path / "m"), "--samples", "2"]) == 0
    for name in ("one", "two"):
        manifest = json.loads((tmp_path / "m" / name / "manifest.json").read_text())
        assert manifest["lane"]["samples_per_task"] == 2  # the flag wins over the lane's own
        assert {s.get("sample", 0) for s in samples_of(tmp_path / "m" / name)} == {0, 1}


def test_another_tool_s_epochs_are_paired_as_tasks_on_the_run_page(tmp_path: Path) -> None:
    # inspect_ai's fixture log ran 2 epochs: its verdicts against this scorer's pair each task's shares, and the
    # counts are of samples, said as such (review of issue 21).
    logs = sorted((Path(__file__).parent / "fixtures" / "inspect" / "0.3.285").glob("*.eval"))
    doc = msgspec.to_builtins(run_report_doc(logs[0], from_format="inspect"))
    figures = doc["tool_verdicts"]
    both = [t for t in doc["tasks"] if isinstance(t["previous"].get("correct"), bool) and t["correct"] is not None]
    assert figures["a_samples"] == figures["b_samples"] == len(both)
    assert figures["n_paired"] == len({t["task_id"] for t in both}) < len(both)
    assert figures["a_correct"] == sum(t["previous"]["correct"] for t in both)
    assert main(["report", "--from", "inspect", str(logs[0]), "-o", str(tmp_path / "r")]) == 0
    markdown = (tmp_path / "r" / "report.md").read_text()
    assert f"| inspect_ai | {figures['a_correct']}/{len(both)} |" in markdown
    assert f"On the {figures['n_paired']} tasks both decided ({len(both)} samples)" in markdown
