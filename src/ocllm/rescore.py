"""Re-score a saved run from its raw model output alone, without calling any model."""

from __future__ import annotations

from pathlib import Path
from typing import Any, NamedTuple

import msgspec

from ocllm import __version__
from ocllm.audit import render_audit
from ocllm.formats import SavedRecord, SavedRun, load_saved_run
from ocllm.metrics import summarize
from ocllm.models import Decision, Policy
from ocllm.rundir import atomic_write_bytes, atomic_write_text, refuse_overwrite
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
    summary["scorer"] = scorer_settings(policy)
    document = {
        "format": OUTPUT_FORMAT,
        "harness_version": __version__,
        "source": {"path": str(saved.path), **saved.meta},
        "summary": summary,
        "tasks": [task_record(r, d) for r, d in zip(saved.records, decisions, strict=True)],
    }
    return Rescored(saved, decisions, document)


def policy_of(saved: SavedRun, override: Policy | None) -> Policy:
    """The policy to score a run with: the one asked for, else the lane's own (run directories), else default."""
    if override is not None:
        return override
    lane = saved.meta.get("lane_settings")
    if isinstance(lane, dict):
        return Policy(
            conflict_policy="strict" if lane.get("conflict_policy") == "strict" else "last",
            allow_reasoning_fallback=bool(lane.get("allow_reasoning_fallback", False)),
            think_prefilled=bool(lane.get("think_prefilled", False)),
        )
    return Policy()


def rescore_file(
    input_path: Path, output_path: Path, policy: Policy | None, report_path: Path | None = None
) -> Rescored:
    refuse_overwrite(output_path, input_path)
    if report_path is not None:
        refuse_overwrite(report_path, input_path)
    saved = load_saved_run(input_path)
    result = rescore_run(saved, policy_of(saved, policy))
    # Both files are rendered in memory first, so a failure leaves neither half-written.
    payload = msgspec.json.format(msgspec.json.encode(result.document), indent=2) + b"\n"
    audit_text = render_audit(result) if report_path is not None else None
    atomic_write_bytes(output_path, payload)
    if report_path is not None and audit_text is not None:
        atomic_write_text(report_path, audit_text)
    return result
