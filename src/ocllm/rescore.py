"""Re-score a saved run from its raw model output alone, without calling any model."""

from __future__ import annotations

from pathlib import Path
from typing import Any, NamedTuple

import msgspec

from ocllm import __version__
from ocllm.audit import render_audit
from ocllm.errors import OcllmError
from ocllm.formats import SavedRecord, SavedRun, load_saved_run
from ocllm.metrics import summarize
from ocllm.models import Decision, Policy
from ocllm.notices import Scored, run_notices
from ocllm.rundir import atomic_write_bytes, atomic_write_text, pretty_json, refuse_overwrite
from ocllm.scoring import SCORER_VERSION, decide

OUTPUT_FORMAT = "ocllm-metrics/1"


class Rescored(NamedTuple):
    source: SavedRun
    decisions: list[Decision]
    document: dict[str, Any]  # what is written to OUTPUT


def scorer_settings(policy: Policy) -> dict[str, Any]:
    return {"version": SCORER_VERSION, **msgspec.structs.asdict(policy)}


def task_record(record: SavedRecord, decision: Decision) -> dict[str, Any]:
    """The per-task output record: the decision with its evidence, the raw output it was taken
    from (so the output can itself be re-scored), and the input's own decision under `previous`."""
    out = msgspec.to_builtins(decision)
    task, sample = record.task, record.sample
    out["subset"] = task.subset
    out["options"] = task.options
    out["required_substrings"] = task.required_substrings
    out["case_sensitive"] = task.case_sensitive
    out["prompt"] = task.prompt
    out["raw_content"] = sample.content
    out["raw_reasoning"] = sample.reasoning
    out["finish_reason"] = sample.finish_reason
    out["usage"] = sample.usage
    out["latency_s"] = sample.latency_s
    out["ttft_s"] = sample.ttft_s
    out["attempts"] = sample.attempts
    out["previous"] = record.previous
    return out


def changed(record: SavedRecord, decision: Decision) -> bool:
    old = record.previous.get("correct")
    return isinstance(old, bool) and old != decision.correct


def rescore_run(saved: SavedRun, policy: Policy) -> Rescored:
    decisions = [decide(r.task, r.sample, policy) for r in saved.records]
    summary = summarize(decisions)
    summary["changed"] = sum(changed(r, d) for r, d in zip(saved.records, decisions, strict=True))
    expected = saved.meta.tasks_in_suite
    in_suite = expected if expected is not None and expected >= len(saved.records) else len(saved.records)
    summary["tasks_in_suite"] = in_suite
    summary["missing"] = in_suite - len(saved.records)
    # Complete: every task of the suite ran. A run can be complete with failed requests (counted in
    # `errors`), and incomplete without any (interrupted).
    summary["complete"] = not summary["missing"]
    summary["scorer"] = scorer_settings(policy)
    settings = saved.meta.lane_settings or {}
    notices = run_notices(
        [Scored(r.sample, d) for r, d in zip(saved.records, decisions, strict=True)],
        missing=summary["missing"],
        in_suite=in_suite,
        requested_model=saved.meta.requested_model,
        reasoning=settings.get("reasoning"),
        think_prefilled=policy.think_prefilled,
    )
    document = {
        "format": OUTPUT_FORMAT,
        "harness_version": __version__,
        "source": saved.meta.source(saved.path),
        "summary": summary,
        "notices": notices,
        "tasks": [task_record(r, d) for r, d in zip(saved.records, decisions, strict=True)],
    }
    return Rescored(saved, decisions, document)


# Scoring switches asked for on the command line; each replaces the run's own setting, the rest stay.
PolicyOverrides = dict[str, Any]


def policy_of(saved: SavedRun, overrides: PolicyOverrides | None = None) -> Policy:
    """The run's own policy (recorded by this project's metrics, or the lane of a run directory), else the
    default; then the overrides asked for."""
    base = Policy()
    for recorded in (saved.meta.scorer, saved.meta.lane_settings):
        if recorded is not None:
            base = Policy(
                conflict_policy="strict" if recorded.get("conflict_policy") == "strict" else "last",
                allow_reasoning_fallback=recorded.get("allow_reasoning_fallback") is True,
                think_prefilled=recorded.get("think_prefilled") is True,
            )
            break
    return msgspec.structs.replace(base, **overrides) if overrides else base


def rescore_file(
    input_path: Path, output_path: Path, overrides: PolicyOverrides | None = None, report_path: Path | None = None
) -> Rescored:
    refuse_overwrite(output_path, input_path)
    if report_path is not None:
        refuse_overwrite(report_path, input_path)
        if report_path.resolve() == output_path.resolve():
            raise OcllmError(f"{report_path}: the audit report and the output cannot be the same file")
    saved = load_saved_run(input_path)
    result = rescore_run(saved, policy_of(saved, overrides))
    # Both files are rendered in memory first, so a failure leaves neither half-written.
    payload = pretty_json(result.document)
    audit_text = render_audit(result) if report_path is not None else None
    atomic_write_bytes(output_path, payload)
    if report_path is not None and audit_text is not None:
        atomic_write_text(report_path, audit_text)
    return result
