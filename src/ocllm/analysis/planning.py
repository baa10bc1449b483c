"""`ocllm plan`: its flags checked, and with `--from A B` two saved pilot runs read into each task's verdicts;
the sizes themselves are `analysis/power.py`'s.

Each run is decided again here under its own recorded policy, as `compare` does, so that the plan rests on
this scorer's verdicts and not on whatever a file claims. Failed requests are left out: a transport failure is
no verdict, right or wrong."""

from __future__ import annotations

from pathlib import Path

from ocllm.analysis.power import McNemarPlan, PilotPlan, check_difference, check_level, mcnemar_tasks, pilot_plan
from ocllm.analysis.rescore import policy_of_meta
from ocllm.errors import OcllmError
from ocllm.formats import stream_saved_run
from ocllm.scoring import decide


def plan_paired(difference: float, discordance: float, alpha: float, power: float) -> McNemarPlan:
    """The McNemar design's tasks for a difference of `difference` at a discordance of `discordance`."""
    try:
        check_difference(difference)
        tasks = mcnemar_tasks(difference, discordance, alpha, power)
    except ValueError as exc:
        raise OcllmError(str(exc)) from None
    return McNemarPlan(tasks=tasks, difference=difference, discordance=discordance, alpha=alpha, power=power)


def verdicts_of(path: Path) -> dict[str, list[bool]]:
    """Task id -> the verdicts of its scored samples, in the run's order (a task whose every request failed
    has an empty list: it is in the run, with nothing to pair)."""
    meta, records = stream_saved_run(path)
    policy = policy_of_meta(meta)
    verdicts: dict[str, list[bool]] = {}
    for record in records:
        decision = decide(record.task, record.sample, policy)
        scored = verdicts.setdefault(record.task.id, [])
        if decision.error is None:
            scored.append(decision.correct is True)
    return verdicts


def plan_from_runs(a: Path, b: Path, difference: float, alpha: float, power: float) -> PilotPlan:
    """The plan two pilot runs (run directories or metrics files) give for a difference of `difference`."""
    try:  # the flags first: a mistyped one is said before two runs are read and decided
        check_difference(difference)
        check_level(alpha, power)
    except ValueError as exc:
        raise OcllmError(str(exc)) from None
    a_verdicts, b_verdicts = verdicts_of(a), verdicts_of(b)
    try:
        return pilot_plan(a_verdicts, b_verdicts, difference, alpha, power)
    except ValueError as exc:
        raise OcllmError(f"{a} and {b}: {exc}") from None
