"""The documents the renderers draw: one run, and a folder of runs (a matrix), built here on the analysis side
(re-scored, compared, counted); `report/` only draws them, and imports nothing of analysis.

Comparisons come from `ocllm.analysis.compare`. Every document is plain JSON-able data, so what a report shows
can always be checked against the file beside it.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec

from ocllm.analysis.compare import (
    ScoredRun,
    ScoredTask,
    compare_runs,
    load_run,
    load_scored,
    resources_of,
    run_label,
    scored_task,
)
from ocllm.analysis.metrics import chance_level, tally_categories
from ocllm.analysis.notices import incomplete_notice
from ocllm.analysis.rescore import PolicyOverrides, policy_of, rescore_run
from ocllm.analysis.run_settings import run_settings
from ocllm.analysis.sampled import SampledTally, accuracy_interval, interval_method, vote
from ocllm.documents import Estimate, Matrix, MatrixLane, RunReport
from ocllm.errors import InputError
from ocllm.models import Task
from ocllm.scoring import task_types
from ocllm.server_facts import simulated
from ocllm.summary_words import scored


def _with_interval(figures: dict[str, Any]) -> dict[str, Any]:
    """The figures with the 95% interval of their accuracy: Wilson's, or with repeated samples the t interval of
    the task-clustered standard error (sampled.accuracy_interval), and which of them it is (`ci_method`: None where
    nothing was scored, and the pages then show no accuracy and no interval). No interval: `ci_low` and `ci_high`
    null."""
    k, stderr = figures.get("samples_per_task", 1), figures.get("accuracy_stderr")
    ci = accuracy_interval(figures["correct"], scored(figures), k, stderr, figures.get("tasks_scored", 0))
    low, high = (None, None) if ci is None else ci
    return {**figures, "ci_low": low, "ci_high": high, "ci_method": interval_method(scored(figures), k, stderr)}


def _sampled_figures(tasks: list[ScoredTask], key: Callable[[ScoredTask], str] | None = None) -> dict[str, Any]:
    """Counts over a lane's samples and their sampled figures: of them all (under "all"), or per `key` (category,
    task type)."""
    tally = SampledTally()
    for t in tasks:
        cast = vote(t.correct, t.extracted, task_types.extracts_answer(t.task_type))
        tally.add(t.task_id, t.category, t.task_type, t.correct, t.error is not None, cast)
    counts = tally_categories(tasks, key=key or (lambda _: "all"))
    return {name: {**figures, **tally.figures(_ids(tasks, key, name))} for name, figures in counts.items()}


def _ids(tasks: list[ScoredTask], key: Callable[[ScoredTask], str] | None, name: str) -> list[str]:
    return list(dict.fromkeys(t.task_id for t in tasks if key is None or key(t) == name))


def run_report_doc(
    path: Path,
    overrides: PolicyOverrides | None = None,
    from_format: str | None = None,
    filter_name: str | None = None,
) -> RunReport:
    """One run re-scored with the current scorer (the lane's policy for run directories), with
    intervals, resource figures, and every task's evidence (prompt, content, reasoning, statements).
    Another tool's results (read with `from_format`, or a document rescored from them) keep that tool's
    verdicts beside this scorer's: its name, the paired figures of the two, and the decisions that changed."""
    loaded = load_run(path, from_format, filter_name)
    saved = loaded.saved
    result = rescore_run(saved, policy_of(saved, overrides))
    metrics = result.document
    summary = _with_interval(msgspec.to_builtins(metrics.summary))
    summary["by_category"] = {k: _with_interval(v) for k, v in summary["by_category"].items()}
    summary["by_type"] = {k: _with_interval(v) for k, v in summary.get("by_type", {}).items()}
    # The accuracy of answering at random, drawn on the accuracy charts.
    summary["chance"] = chance_level(_options(r.task) for r in saved.records)
    # The other tool's verdicts against ours (per task type and the tool's task, as rescore --from gives them): what
    # the pages draw; none for this project's own runs.
    verdicts = metrics.summary.input_verdicts if loaded.harness is not None else None
    if verdicts is None:
        summary.pop("input_verdicts", None)
    return RunReport(
        harness_version=metrics.harness_version,
        label=run_label(saved.meta, path),
        source=metrics.source,
        summary=summary,
        notices=[*loaded.notices, *metrics.notices],
        # From the decisions just made: scoring every task a second time to reach the same figures cost double.
        resources=resources_of([scored_task(r, d) for r, d in zip(saved.records, result.decisions, strict=True)]),
        tasks=metrics.tasks,
        tool=loaded.harness,
        tool_verdicts=verdicts.pooled if verdicts is not None else None,  # over every type (the pages say so)
        settings=run_settings(path, metrics.source, {r.task.type for r in saved.records}),
        simulated=simulated(metrics.source.get("server")),
    )


def _by_type(tasks: list[ScoredTask]) -> dict[str, Estimate]:
    """A lane's figures per task type, when its tasks are of several (else the lane's own figures again)."""
    by_type = _sampled_figures(tasks, key=lambda t: t.task_type)
    return {k: Estimate(**_with_interval(v)) for k, v in by_type.items()} if len(by_type) > 1 else {}


def _options(task: Task) -> int | None:
    return task_types.of(task.type).option_count(task)


def find_runs(folder: Path) -> list[Path]:
    """Run directories directly inside `folder` (a matrix's output), in name order."""
    if not folder.is_dir():
        raise InputError(f"{folder}: not a folder of runs")
    runs = sorted(p for p in folder.iterdir() if (p / "samples.jsonl").exists() and (p / "suite.jsonl").exists())
    if not runs:
        raise InputError(f"{folder}: holds no run directories (folders with samples.jsonl and suite.jsonl)")
    return runs


def _finished(tasks: list[ScoredTask]) -> tuple[int | None, int | None]:
    """A lane's scored answers that finished and the correct among them (None when its answers recorded no finish
    reason: whether any was cut off is not known)."""
    answered = [t for t in tasks if t.error is None]
    if answered and not all(t.finish_reason for t in answered):
        return None, None
    finished = [t for t in answered if t.correct is not None and not t.truncated]
    return len(finished), sum(t.correct is True for t in finished)


def matrix_doc(folder: Path, baseline: str | None = None, overrides: PolicyOverrides | None = None) -> Matrix:
    """A leaderboard of the lanes in `folder` and each lane compared with the baseline lane."""
    runs: list[ScoredRun] = [load_scored(p, rescore=True, overrides=overrides) for p in find_runs(folder)]
    labels = [r.label for r in runs]
    if baseline is None:
        baseline = next((lab for lab in labels if "baseline" in lab.lower()), labels[0])
    if baseline not in labels:
        raise InputError(f"{folder}: no lane named {baseline!r} (lanes: {', '.join(labels)})")
    base = runs[labels.index(baseline)]
    lanes = []
    for run in runs:
        tasks = [t for samples in run.tasks.values() for t in samples]  # every sample of every task
        figures = _sampled_figures(tasks)["all"] if tasks else {"total": 0, "correct": 0, "scored": 0, "accuracy": None}
        finished = _finished(tasks)
        lanes.append(
            MatrixLane(
                label=run.label,
                path=str(run.path),
                **_with_interval(figures),
                truncated=sum(t.truncated for t in tasks),
                finished_scored=finished[0],
                finished_correct=finished[1],
                missing=run.missing,
                complete=not run.missing,
                by_category={
                    k: Estimate(**_with_interval(v)) for k, v in _sampled_figures(tasks, lambda t: t.category).items()
                },
                by_type=_by_type(tasks),
                resources=resources_of(tasks),
                serving=run.serving,
                chance=chance_level(t.n_options for t in tasks),
                settings=run.settings or {},
                type_details=run.type_details or {},
                suite=_suite_name(run),
                simulated=run.simulated,
            )
        )
    lanes = _ranked(lanes, runs, base)
    notices = [f"{run.label}: {note}" for run in runs if (note := incomplete_notice(run.missing, run.in_suite))]
    notices += [f"{lane.label}: {lane.errors} task(s) failed and are not scored" for lane in lanes if lane.errors]
    notices += [f"{lane.label}: not ranked: {lane.not_ranked}" for lane in lanes if lane.not_ranked]
    return Matrix(
        folder=str(folder),
        baseline=baseline,
        notices=notices,
        lanes=lanes,
        comparisons=[compare_runs(base, run, flip_sides=False) for run in runs if run is not base],
    )


def _suite_name(run: ScoredRun) -> str | None:
    return (run.settings or {}).get("suite") or None


def _suite_ids(run: ScoredRun) -> frozenset[str]:
    """The task ids of the suite a run directory ran (its suite.jsonl, one id a line), whether or not each ran."""
    ids = set()
    with (run.path / "suite.jsonl").open("rb") as fh:
        for line in fh:
            if line.strip():
                ids.add(str(_SUITE_ID.decode(line).id))
    return frozenset(ids)


class _SuiteId(msgspec.Struct):
    id: str | int


_SUITE_ID = msgspec.json.Decoder(_SuiteId)


def _ranked(lanes: list[MatrixLane], runs: list[ScoredRun], base: ScoredRun) -> list[MatrixLane]:
    """The lanes best first, each with its rank; not ranked, last and in name order, a lane with nothing scored
    (its accuracy would be 0 of 0, a figure of nothing) and a lane whose suite is not the baseline's (its accuracy is
    over other tasks: ranking it with the others would compare different exams). Each says why."""
    suites = {run.label: _suite_ids(run) for run in runs}
    base_ids = suites[base.label]
    for lane in lanes:
        ids = suites[lane.label]
        if not lane.scored:
            lane.not_ranked = "nothing scored (every request failed, or none ran): no accuracy to rank"
        elif ids != base_ids:
            common = len(ids & base_ids)
            lane.not_ranked = (
                f"it ran another suite ({_suite_words(lane.suite, len(ids))}) than the baseline {base.label} "
                f"({_suite_words(_suite_name(base), len(base_ids))}), so its accuracy is over other tasks and not "
                "comparable; "
                + (
                    f"it is compared with the baseline only on the {common} tasks both suites hold"
                    if common
                    else "no task is in both suites, so it is not compared with the baseline"
                )
            )
    ranked = sorted((lane for lane in lanes if lane.not_ranked is None), key=_ranked_accuracy, reverse=True)
    for rank, lane in enumerate(ranked, start=1):
        lane.rank = rank
    return ranked + sorted((lane for lane in lanes if lane.not_ranked is not None), key=lambda lane: lane.label)


def _ranked_accuracy(lane: MatrixLane) -> float:
    """A ranked lane's accuracy: it scored something (a lane that did not is not ranked), so it has one."""
    assert lane.accuracy is not None
    return lane.accuracy


def _suite_words(name: str | None, tasks: int) -> str:
    return f"{name}, {tasks} tasks" if name else f"{tasks} tasks"
