"""`ocllm plan` and analysis/power.py: every size computed here again from its formula (SciPy's normal quantiles,
statsmodels' power solver, a published worked example), and checked by simulation against the power it
promises; pilot runs are real files (written by `ocllm run` against the simulator, or old-harness metrics)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from conftest import legacy_record, write_json
from scipy.stats import norm
from statsmodels.stats.power import NormalIndPower

from ocllm.analysis.power import mcnemar_tasks, minimum_detectable_effect, pilot_plan
from ocllm.cli import main
from ocllm.sim import SimConfig, SimServer
from ocllm.suites import shipped_suites

Z95, Z80 = norm.ppf(0.975), norm.ppf(0.8)


def connor(delta: float, psi: float, z_alpha: float = Z95, z_power: float = Z80) -> float:
    """Connor (1987), written out again here: the tasks before rounding up."""
    return (z_alpha * math.sqrt(psi) + z_power * math.sqrt(psi - delta**2)) ** 2 / delta**2


# --- Connor's McNemar sample size -------------------------------------------------------------------------


def test_connor_hand_worked_example() -> None:
    # delta 0.05, psi 0.2, alpha 0.05, power 0.8: (1.95996 * 0.44721 + 0.84162 * 0.44441)^2 / 0.0025 = 625.5
    raw = connor(0.05, 0.2)
    assert 625 < raw < 626
    assert mcnemar_tasks(0.05, 0.2) == math.ceil(raw) == 626
    assert mcnemar_tasks(-0.05, 0.2) == 626  # the sign says which lane is better, not how many tasks
    # Another level and power, by hand from the same formula.
    raw = connor(0.1, 0.3, norm.ppf(0.995), norm.ppf(0.9))
    assert mcnemar_tasks(0.1, 0.3, alpha=0.01, power=0.9) == math.ceil(raw)


def test_connor_published_example() -> None:
    # HyLown's "Compare Paired Proportions: McNemar's Z-test, 2-Sided Equality" (powerandsamplesize.com, after
    # Connor 1987, p. 209): p01 = 0.45, p10 = 0.05, alpha 0.05, power 0.8 -> 23 pairs.
    assert mcnemar_tasks(0.05 - 0.45, 0.45 + 0.05) == 23


def test_connor_size_gives_its_power_by_simulation() -> None:
    # Draw many paired comparisons of the planned size and test each with McNemar's asymptotic test (the one
    # Connor's formula is for): about `power` of them find the difference.
    rng = np.random.default_rng(20260501)
    for delta, psi in ((0.1, 0.3), (0.05, 0.15)):
        n = mcnemar_tasks(delta, psi)
        counts = rng.multinomial(n, [(psi + delta) / 2, (psi - delta) / 2, 1 - psi], size=20_000)
        b, c = counts[:, 0], counts[:, 1]
        with np.errstate(divide="ignore", invalid="ignore"):
            z = np.where(b + c > 0, (b - c) / np.sqrt(b + c), 0.0)
        found = float(np.mean(np.abs(z) > Z95))
        assert 0.78 < found < 0.83, (delta, psi, n, found)


@pytest.mark.parametrize(
    ("delta", "psi", "why"),
    [
        (0.3, 0.2, "at least 0.3"),
        (0.0, 0.2, "must not be 0"),
        (0.1, 0.0, "more than 0 and at most 1"),
        (0.1, 1.5, "more than 0 and at most 1"),
        (0.1, float("nan"), "more than 0 and at most 1"),
        (float("nan"), 0.2, "must not be 0"),
    ],
)
def test_connor_refuses_what_has_no_size(delta: float, psi: float, why: str) -> None:
    with pytest.raises(ValueError, match=why):
        mcnemar_tasks(delta, psi)


# --- minimum detectable effect ------------------------------------------------------------------------------


def test_minimum_detectable_effect() -> None:
    assert minimum_detectable_effect(0.02) == pytest.approx((1.959964 + 0.841621) * 0.02, rel=1e-6)
    assert minimum_detectable_effect(0.02, alpha=0.01, power=0.9) == pytest.approx(
        (norm.ppf(0.995) + norm.ppf(0.9)) * 0.02, rel=1e-12
    )
    # statsmodels: the effect (in standard errors) one observation of unit spread detects with 80% power. Its
    # two-sided power counts the far tail too, which moves the figure by far less than 1e-4.
    effect = NormalIndPower().solve_power(nobs1=1, alpha=0.05, power=0.8, ratio=0)
    assert minimum_detectable_effect(1.0) == pytest.approx(effect, abs=1e-4)
    assert minimum_detectable_effect(0.0) == 0.0
    for bad in (-0.1, float("nan"), float("inf")):
        with pytest.raises(ValueError):
            minimum_detectable_effect(bad)


# --- the pilot plan, from verdicts --------------------------------------------------------------------------


def test_pilot_with_one_sample_per_task_is_the_mcnemar_plan() -> None:
    a = {f"t{i}": [i < 6] for i in range(10)}  # right on t0..t5
    b = {f"t{i}": [1 <= i < 8] for i in range(10)}  # right on t1..t7: t0 flips to wrong, t6 and t7 to right
    b["only_b"] = [True]
    a["failed_in_a"], b["failed_in_a"] = [], [True]  # every request of it failed in A: nothing to pair
    a["only_a"] = [False]
    plan = pilot_plan(a, b, 0.2)
    assert plan.method == "mcnemar" and plan.paired_tasks == 10
    assert (plan.unpaired_a, plan.unpaired_b) == (2, 2)  # failed_in_a is left out of both
    assert plan.discordance == pytest.approx(0.3)
    assert plan.observed_difference == pytest.approx(0.1)
    assert plan.tasks == math.ceil(connor(0.2, 0.3)) and plan.table == [] and plan.variance is None


def test_pilot_variance_parts_by_hand() -> None:
    # Two samples of each of four tasks per side. Means A: 1, 0, .5, 1; B: 0, 1, .5, 1; d = -1, 1, 0, 0.
    a = {"t1": [True, True], "t2": [False, False], "t3": [True, False], "t4": [True, True]}
    b = {"t1": [False, False], "t2": [True, True], "t3": [False, True], "t4": [True, True]}
    plan = pilot_plan(a, b, 0.1)
    assert plan.method == "samples" and plan.discordance is None
    assert plan.variance == pytest.approx(2 / 3)  # (1 + 1 + 0 + 0) / (4 - 1)
    # t3's verdicts vary: p(1-p) k/(k-1) = .25 * 2 = .5; the other tasks 0; the mean over four tasks: 1/8.
    assert plan.within_a == pytest.approx(1 / 8) and plan.within_b == pytest.approx(1 / 8)
    assert plan.within == pytest.approx((1 / 8 + 1 / 8) / 2)
    assert plan.between == pytest.approx(2 / 3 - 1 / 8)
    z2 = (Z95 + Z80) ** 2
    expected = {k: math.ceil(z2 * (2 / 3 - 1 / 8 + (1 / 4) / k) / 0.01) for k in (1, 2, 4, 8, 16)}
    assert {row.samples_per_task: row.tasks for row in plan.table} == expected
    assert plan.tasks == expected[2]  # the pilot's own two samples per task
    # 0.25 / k is at most a tenth of the between part (13/24) from k = 8 on: 0.25 / 4 = 0.0625 > 0.054.
    assert plan.saturates_at == 8
    assert plan.table[0].sampling_share == pytest.approx(0.25 / (2 / 3 - 1 / 8 + 0.25))


def test_pilot_where_all_variance_is_sampling_noise_never_saturates() -> None:
    a = {"t1": [True, False], "t2": [True, False], "t3": [True, True]}
    b = {"t1": [True, False], "t2": [False, True], "t3": [True, True]}
    plan = pilot_plan(a, b, 0.1)
    assert plan.between == 0 and plan.saturates_at is None
    rows = {row.samples_per_task: row.tasks for row in plan.table}
    assert rows[1] > rows[2] > rows[4] > rows[8] > rows[16]


@pytest.mark.parametrize(
    ("a", "b", "why"),
    [
        ({"t1": [True]}, {"t1": [False]}, "share 1 scored task"),
        ({"t1": [True], "t2": [False]}, {"t3": [True]}, "share 0 scored task"),
        ({"t1": [True], "t2": [False]}, {"t1": [True], "t2": [False]}, "agree on all 2 paired tasks"),
        ({"t1": [True, True], "t2": [False] * 2}, {"t1": [True] * 3, "t2": [False] * 3}, "no variance"),
        ({"t1": [True], "t2": [False]}, {"t1": [True, False], "t2": [False, True]}, "pilot run A has one sample"),
        ({"t1": [True], "t2": [False]}, {"t1": [True], "t2": [True]}, "at least 0.9"),  # discordance 0.5
    ],
)
def test_pilot_refuses_what_it_cannot_estimate(a: dict, b: dict, why: str) -> None:
    with pytest.raises(ValueError, match=why):
        pilot_plan(a, b, 0.9 if why == "at least 0.9" else 0.1)


@pytest.mark.slow  # a simulation of many pilots
def test_pilot_estimates_are_near_the_truth_by_simulation() -> None:
    """Pilots drawn from known per-task probabilities: the estimated parts of the variance are near the true
    ones on average, and a comparison of the size planned from the true parts finds the difference about
    `power` of the time."""
    rng = np.random.default_rng(20260502)
    tasks, k, difference = 300, 4, 0.05
    p_a = rng.uniform(0.3, 0.6, tasks)
    shift = rng.uniform(-0.25, 0.25, tasks)
    p_b = p_a + difference + shift - shift.mean()  # the true mean difference is exactly `difference`
    assert p_b.min() >= 0 and p_b.max() <= 1
    true_within_a = float(np.mean(p_a * (1 - p_a)))
    true_within_b = float(np.mean(p_b * (1 - p_b)))
    true_between = float(np.var(p_b - p_a, ddof=1))

    estimates = []
    for _ in range(200):
        hits_a, hits_b = rng.binomial(k, p_a), rng.binomial(k, p_b)
        a = {f"t{i}": [j < hits_a[i] for j in range(k)] for i in range(tasks)}
        b = {f"t{i}": [j < hits_b[i] for j in range(k)] for i in range(tasks)}
        plan = pilot_plan(a, b, difference)
        estimates.append((plan.within_a, plan.within_b, plan.between, plan.variance))
    within_a, within_b, between, variance = np.mean(estimates, axis=0)
    assert within_a == pytest.approx(true_within_a, rel=0.03)
    assert within_b == pytest.approx(true_within_b, rel=0.03)
    assert between == pytest.approx(true_between, rel=0.15)  # (the floor at 0 lifts it a little)
    assert variance == pytest.approx(true_between + (true_within_a + true_within_b) / k, rel=0.05)
    # One pilot alone is near only loosely: the between part is a small difference of two larger figures (its
    # spread here is about 0.012, against a true 0.020), which docs/statistics.md says.
    near = np.abs(np.array(estimates)[:, 2] - true_between) < 0.03
    assert near.mean() > 0.9

    # The size planned from the truth, tested by drawing comparisons of that size from the same tasks.
    n = math.ceil((Z95 + Z80) ** 2 * (true_between + (true_within_a + true_within_b) / k) / difference**2)
    picks = rng.integers(0, tasks, size=(4000, n))
    d = rng.binomial(k, p_b[picks]) / k - rng.binomial(k, p_a[picks]) / k
    t = d.mean(axis=1) / (d.std(axis=1, ddof=1) / math.sqrt(n))
    found = float(np.mean(np.abs(t) > Z95))
    assert 0.77 < found < 0.83, (n, found)


# --- the command ------------------------------------------------------------------------------------------


def test_plan_command_says_the_tasks(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", "--difference", "0.05", "--discordance", "0.2"]) == 0
    out = capsys.readouterr().out
    assert "tasks needed: 626 (one sample each)" in out
    assert "5.0 points" in out and "20.0% of the tasks" in out and "not a guarantee" in out


def test_plan_json_is_one_object(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["--difference", "0.05", "--discordance", "0.2", "--alpha", "0.01", "--power", "0.9", "--json"]
    assert main(["plan", *args]) == 0
    doc = json.loads(capsys.readouterr().out)  # the whole of stdout is one object
    assert doc == {
        "method": "mcnemar",
        "tasks": math.ceil(connor(0.05, 0.2, norm.ppf(0.995), norm.ppf(0.9))),
        "difference": 0.05,
        "discordance": 0.2,
        "alpha": 0.01,
        "power": 0.9,
    }


def old_harness_run(path: Path, verdicts: dict[str, bool | None]) -> Path:
    """An old-harness metrics file: each task answered B (right) or C (wrong), or failed (None)."""
    tasks = []
    for task_id, correct in verdicts.items():
        if correct is None:
            tasks.append(legacy_record(task_id, None, error="HTTP 500 after 3 attempts", finish_reason=None))
        else:
            tasks.append(legacy_record(task_id, "FINAL: B" if correct else "FINAL: C"))
    return write_json(path, {"run_id": path.stem, "summary": {}, "tasks": tasks})


def test_plan_from_old_harness_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # The files' own `correct` fields are not read: each answer is decided again (B is right).
    a = old_harness_run(tmp_path / "a.json", {f"t{i}": i < 12 for i in range(20)} | {"gone": None})
    b = old_harness_run(tmp_path / "b.json", {f"t{i}": 2 <= i < 16 for i in range(20)} | {"gone": True})
    assert main(["plan", str(a), str(b), "--difference", "0.1", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    # t0, t1 flip to wrong; t12..t15 to right: 6 of 20 paired tasks disagree. "gone" failed in A: not paired.
    assert (doc["method"], doc["paired_tasks"], doc["unpaired_a"], doc["unpaired_b"]) == ("mcnemar", 20, 1, 1)
    assert doc["discordance"] == pytest.approx(0.3) and doc["observed_difference"] == pytest.approx(0.1)
    assert doc["tasks"] == math.ceil(connor(0.1, 0.3)) and doc["table"] == []
    assert list(doc) == [  # the keys docs/statistics.md lists, in its order
        "method", "tasks", "difference", "alpha", "power", "paired_tasks", "unpaired_a", "unpaired_b",
        "samples_per_task_a", "samples_per_task_b", "observed_difference", "discordance", "variance", "within_a",
        "within_b", "within", "between", "table", "saturates_at",
    ]  # fmt: skip
    # `--from RUN_A RUN_B`, the spelling of before (--from names another tool's format elsewhere), still reads them.
    assert main(["plan", "--from", str(a), str(b), "--difference", "0.1"]) == 0
    out = capsys.readouterr().out
    assert "pilot: 20 paired tasks (left out, in one run only or failed: 1 of A's, 1 of B's)" in out
    assert f"tasks needed: {math.ceil(connor(0.1, 0.3))} (one sample each)" in out
    assert "disagreed on 30.0% of the paired tasks" in out


def test_plan_from_two_real_runs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Two pilot runs written by `ocllm run` against the simulator: the discordance `plan` estimates is the one
    the runs' own metrics.json files record, task by task."""
    suites = tuple(shipped_suites().values())
    with SimServer(SimConfig(suites=suites, models={"weak": 0.55, "strong": 0.75})) as sim:
        for model in ("weak", "strong"):
            args = ["run", "--suite", "demo", "--base-url", sim.base_url, "--model", model]
            assert main([*args, "--out", str(tmp_path / model)]) in (0, 1)
    capsys.readouterr()
    recorded = {}
    for model in ("weak", "strong"):
        metrics = json.loads((tmp_path / model / "metrics.json").read_text())
        recorded[model] = {t["task_id"]: t["correct"] for t in metrics["tasks"] if t["error"] is None}
    paired = sorted(set(recorded["weak"]) & set(recorded["strong"]))
    psi = sum(recorded["weak"][t] != recorded["strong"][t] for t in paired) / len(paired)
    assert 0.1 < psi < 0.9  # (two draws of a seeded simulator: a fixed figure, far from both ends)
    # A run directory on one side, its metrics file on the other: both are saved runs.
    runs = [str(tmp_path / "weak"), str(tmp_path / "strong" / "metrics.json")]
    assert main(["plan", *runs, "--difference", "0.1", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["paired_tasks"] == len(paired) and doc["discordance"] == pytest.approx(psi)
    assert doc["tasks"] == math.ceil(connor(0.1, psi))


BAD_FLAGS = {
    "difference 0": (["--difference", "0", "--discordance", "0.2"], "the difference must be more than 0"),
    "difference 1": (["--difference", "1", "--discordance", "0.2"], "less than 1 (got 1.0)"),
    "difference below 0": (["--difference", "-0.1", "--discordance", "0.2"], "more than 0 and less than 1"),
    "difference NaN": (["--difference", "nan", "--discordance", "0.2"], "(got nan)"),
    "difference not a number": (["--difference", "five", "--discordance", "0.2"], "'five' is not a valid float"),
    "no difference": (["--discordance", "0.2"], "Missing option '--difference'"),
    # Below 0.1 points the sizes outgrow any suite, then a float: 1e-300 divided by zero, 1e-160 overflowed.
    "difference 1e-300": (["--difference", "1e-300", "--discordance", "0.5"], "must be at least 0.001 (0.1 points"),
    "difference 1e-160": (["--difference", "1e-160", "--discordance", "0.5"], "at least 0.001 (0.1 points"),
    "difference 1e-10": (["--difference", "1e-10", "--discordance", "0.5"], "at least 0.001 (0.1 points"),
    "a tiny difference with runs": (["--difference", "1e-300", "A", "B"], "at least 0.001"),
    "alpha 1e-20": (["--difference", "0.1", "--discordance", "0.2", "--alpha", "1e-20"], "alpha must be at least"),
    "discordance 0": (["--difference", "0.1", "--discordance", "0"], "discordance must be more than 0"),
    "discordance above 1": (["--difference", "0.1", "--discordance", "1.5"], "at most 1 (got 1.5)"),
    "discordance infinite": (["--difference", "0.1", "--discordance", "inf"], "(got inf)"),
    "discordance below the difference": (["--difference", "0.3", "--discordance", "0.2"], "at least 0.3"),
    "alpha 0": (["--difference", "0.1", "--discordance", "0.2", "--alpha", "0"], "alpha must be more than 0"),
    "alpha 1": (["--difference", "0.1", "--discordance", "0.2", "--alpha", "1"], "alpha must be"),
    "power 1": (["--difference", "0.1", "--discordance", "0.2", "--power", "1"], "power must be at least 0.5"),
    "power below a half": (["--difference", "0.1", "--discordance", "0.2", "--power", "0.3"], "(got 0.3)"),
    "neither": (["--difference", "0.1"], "give either --discordance P or two pilot runs RUN_A RUN_B"),
    "both": (["--difference", "0.1", "--discordance", "0.2", "A", "B"], "give either --discordance"),
    "one run": (["--difference", "0.1", "A"], "a pilot is two runs, RUN_A RUN_B (got 1)"),
    "three runs": (["--difference", "0.1", "A", "B", "C"], "a pilot is two runs, RUN_A RUN_B (got 3)"),
    "runs twice": (["--difference", "0.1", "A", "B", "--from", "A", "B"], "give the pilot runs once"),
    "one run, spelled as before": (["--difference", "0.1", "--from", "A"], "'--from' requires 2 arguments"),
}


def bad_pilots(tmp_path: Path) -> dict[str, tuple[list[str], str]]:
    """Pilot runs a plan cannot come from, written for each case."""
    a = str(old_harness_run(tmp_path / "a.json", {"t1": True, "t2": False}))
    b = str(old_harness_run(tmp_path / "b.json", {"t1": False, "t2": True}))
    half = str(old_harness_run(tmp_path / "half.json", {"t1": True, "t2": True}))  # disagrees with A on t2 only
    other = str(old_harness_run(tmp_path / "other.json", {"x1": True, "x2": False}))
    broken = tmp_path / "broken.json"
    broken.write_text('{"tasks": [', encoding="utf-8")
    return {
        "runs with no shared task": ([a, other, "--difference", "0.1"], "share 0 scored task(s)"),
        "a run that is not there": ([a, str(tmp_path / "nope"), "--difference", "0.1"], "no such file"),
        "a run that is not JSON": ([str(broken), b, "--difference", "0.1"], "broken.json"),
        "a bad difference with runs": ([a, b, "--difference", "2"], "less than 1 (got 2.0)"),
        "a difference above the pilot's discordance": (
            [a, half, "--difference", "0.6"],
            "a difference of 0.6 needs a discordance of at least 0.6",
        ),
    }


PILOT_CASES = (
    "runs with no shared task",
    "a run that is not there",
    "a run that is not JSON",
    "a bad difference with runs",
    "a difference above the pilot's discordance",
)


@pytest.mark.parametrize("case", [*BAD_FLAGS, *PILOT_CASES])
@pytest.mark.parametrize("as_json", [False, True])
def test_bad_flags_are_one_line_and_exit_2(
    case: str, as_json: bool, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args, message = BAD_FLAGS[case] if case in BAD_FLAGS else bad_pilots(tmp_path)[case]
    assert main(["plan", *(["--json"] if as_json else []), *args]) == 2
    captured = capsys.readouterr()
    lines = [line for line in captured.err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("ocllm: error: ") and message in lines[0], lines
    assert captured.out == ""  # no half a JSON object, nor a plan


def test_the_pilot_plan_printed(capsys: pytest.CaptureFixture[str]) -> None:
    """What `plan RUN_A RUN_B` prints for a pilot with samples (run files of k >= 2 samples are the run loop's to
    write): the parts of the variance, the table and the saturation, from the plan computed by hand above."""
    from ocllm.console import print_plan

    a = {"t1": [True, True], "t2": [False, False], "t3": [True, False], "t4": [True, True]}
    b = {"t1": [False, False], "t2": [True, True], "t3": [False, True], "t4": [True, True]}
    print_plan(pilot_plan(a, b, 0.1))
    out = capsys.readouterr().out
    assert "variance of a task's difference: 0.6667, of which sampling noise 0.1250 and between tasks 0.5417" in out
    z2 = (Z95 + Z80) ** 2
    assert f"tasks needed with 2 samples per task: {math.ceil(z2 * (13 / 24 + 1 / 8) / 0.01)}" in out
    assert "from 8 samples per task on, more samples no longer help" in out
    assert "more tasks than the pilot's 4" in out and "not a guarantee" in out
    rows = [line.split("│")[1:-1] for line in out.splitlines() if line.count("│") == 6]
    first = [cell.strip() for cell in rows[0]]  # (the header row is drawn with heavy lines)
    one = math.ceil(z2 * (13 / 24 + 1 / 4) / 0.01)
    assert first == ["1", str(one), f"{13 / 24 + 1 / 4:.4f}", f"{100 * 0.25 / (13 / 24 + 1 / 4):.0f}%", str(one)]


def test_plan_from_two_sampled_runs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Two pilot lanes run by `ocllm run` with 4 samples of each task at temperature 0.6 against the simulator:
    `plan` splits the variance as the runs' own metrics.json verdicts, per (task, sample), say it should."""
    suites = tuple(shipped_suites().values())
    config = tmp_path / "lanes.toml"
    lanes = "".join(
        f'[lanes.{name}]\nmodel = "{name}"\nsuite = "demo"\ntemperature = 0.6\nseed = 7\nsamples_per_task = 4\n\n'
        for name in ("weak", "strong")
    )
    with SimServer(SimConfig(suites=suites, models={"weak": 0.55, "strong": 0.75})) as sim:
        config.write_text(f'[defaults]\nbase_url = "{sim.base_url}"\n\n{lanes}', encoding="utf-8")
        for name in ("weak", "strong"):
            assert main(["run", "--config", str(config), "--lane", name, "--out", str(tmp_path / name)]) in (0, 1)
    capsys.readouterr()
    verdicts: dict[str, dict[str, list[bool]]] = {}
    for name in ("weak", "strong"):
        records = json.loads((tmp_path / name / "metrics.json").read_text())["tasks"]
        verdicts[name] = {}
        for record in records:
            scored = verdicts[name].setdefault(record["task_id"], [])
            if record["error"] is None:
                scored.append(record["correct"])
    paired = [t for t in verdicts["weak"] if verdicts["weak"][t] and verdicts["strong"].get(t)]
    assert all(len(verdicts[name][t]) == 4 for name in verdicts for t in paired)
    means = {name: np.array([np.mean(verdicts[name][t]) for t in paired]) for name in verdicts}
    d = means["strong"] - means["weak"]
    within = {name: np.mean([4 / 3 * p * (1 - p) for p in means[name]]) for name in verdicts}
    assert within["weak"] > 0 and within["strong"] > 0  # sampled tasks are mixed: some samples right, some wrong

    runs = [str(tmp_path / "weak"), str(tmp_path / "strong")]
    assert main(["plan", *runs, "--difference", "0.1", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert (doc["method"], doc["paired_tasks"], doc["samples_per_task_a"]) == ("samples", len(paired), 4)
    assert doc["variance"] == pytest.approx(np.var(d, ddof=1))
    assert doc["within_a"] == pytest.approx(within["weak"]) and doc["within_b"] == pytest.approx(within["strong"])
    between = max(0.0, np.var(d, ddof=1) - (within["weak"] + within["strong"]) / 4)
    assert doc["between"] == pytest.approx(between)
    z2 = (Z95 + Z80) ** 2
    assert doc["tasks"] == max(2, math.ceil(z2 * (between + (within["weak"] + within["strong"]) / 4) / 0.01))
    assert [row["samples_per_task"] for row in doc["table"]] == [1, 2, 4, 8, 16]


@pytest.mark.parametrize(
    ("difference", "points"), [("0.0015", "0.15"), ("0.07", "7.0"), ("0.001", "0.1"), ("0.05", "5.0")]
)
def test_the_difference_is_said_as_given(difference: str, points: str, capsys: pytest.CaptureFixture[str]) -> None:
    # 1e-10 was "a difference of 0.0 points"; 0.0015 said 0.1 (rounded); 0.07 must not be 7.000000000000001.
    assert main(["plan", "--difference", difference, "--discordance", "0.5"]) == 0
    assert f"for a difference of {points} points," in " ".join(capsys.readouterr().out.split())
