"""Code tasks: take the program from the visible answer (C1-C5), run it in a sandbox against the task's tests
(C7-C9), and record every step (docs/scoring/code.md)."""

from __future__ import annotations

import hashlib
from typing import Any

import msgspec

from ocllm.models import Policy, Sample
from ocllm.scoring.code.decision import CodeDecision, CodeLimits, EntryPointOnly
from ocllm.scoring.code.defects import dataset_defect, defect_reason
from ocllm.scoring.code.docstring_echo import repeated_docstring
from ocllm.scoring.code.entry_point_only import entry_point_only, runs_of
from ocllm.scoring.code.execution import refusal, run_task
from ocllm.scoring.code.extract import extract_code
from ocllm.scoring.code.fields import CodeTask
from ocllm.scoring.code.limits import limits_of
from ocllm.scoring.code.outside import failed_outside


def decide_code(task: CodeTask, sample: Sample, policy: Policy, limits: CodeLimits | None = None) -> CodeDecision:
    """The decision on one answer; `limits` (for tests) replaces the lane's (`code_limits`, else the defaults)."""
    limits = limits or limits_of(policy)
    extraction = extract_code(task, sample, policy)
    cut = sample.finish_reason == "length"
    base: dict[str, Any] = {
        "task_id": task.id,
        "task_type": task.type,
        "category": task.category,
        "expected_answer": None,
        "extraction_source": extraction.source,
        "extraction_method": extraction.method,
        "ambiguity": extraction.ambiguity,
        "candidates": extraction.blocks,
        "decided_by": extraction.chosen,
        "truncated": cut,
        "task_kind": task.kind,
        "chosen_why": extraction.why,
        "prepended": extraction.prepended,
        "left_out": list(extraction.left_out),
        "quoted": extraction.quoted,
        "entry_point_from": extraction.entry_point_from,
        "prefix_stub_left_out": extraction.prefix_stub_left_out,
        "code": extraction.code,
        "repeated_docstring": repeated_docstring(task, extraction.code),
    }
    if extraction.code is None:
        refused = refusal(limits)
        if refused is not None:  # C10: without a sandbox every code task is refused, whatever its answer holds
            return CodeDecision(
                **base, extracted_final_answer=None, correct=None, rule="sandbox_refused", outcome="sandbox_refused",
                reason=refused.reason, no_code_reason=extraction.no_code_reason, sandbox=refused.sandbox,
            )  # fmt: skip
        reason = f"no code to run ({extraction.no_code_reason}): {extraction.why}"
        return CodeDecision(
            **base, extracted_final_answer=None, correct=False, rule="no_code", outcome="no_code", reason=reason,
            no_code_reason=extraction.no_code_reason,
        )  # fmt: skip
    program = extraction.program or ""
    only, only_said = None, ""
    if runs_of(policy) == "entry_point_only" and task.kind == "function" and task.entry_point:
        program, only, only_said = _entry_point_only(program, task.entry_point)
    digest = hashlib.sha256(program.encode()).hexdigest()
    verdict = run_task(task, program, limits, cut=cut)
    outcome, reason = verdict.outcome, verdict.reason
    defect = dataset_defect(task, program, verdict.report)
    if defect is not None:  # the tests' defect, not the model's failure: unscored, as every tests_error
        outcome, reason = "tests_error", defect_reason(defect, (verdict.report or {}).get("calls"))
    outside = failed_outside(program, task.entry_point or "", outcome, verdict.report)
    if outside is not None:
        reason += (
            f"; the entry point {task.entry_point} (program lines {outside.entry_point_first_line}-"
            f"{outside.entry_point_last_line}) was defined, and code outside it failed: line {outside.line}"
            + (f" `{outside.text}`" if outside.text else "")
        )
    reason += only_said
    unjudged = outcome in ("sandbox_refused", "tests_error")  # the harness's or the dataset's side
    correct = True if outcome == "passed" else (None if unjudged else False)
    syntax = verdict.reason if outcome == "syntax_error" else None  # the compiler's words alone
    tests = verdict.tests
    if defect is not None:
        tests = [msgspec.structs.replace(t, result="error", detail=reason) for t in tests]
    return CodeDecision(
        **base, extracted_final_answer=digest, correct=correct, rule=outcome, outcome=outcome, reason=reason,
        program=program, program_sha256=digest, syntax_error=syntax, sandbox=verdict.sandbox, runs=verdict.runs,
        tests=tests, failed_outside_entry_point=outside, dataset_defect=defect, entry_point_only=only,
    )  # fmt: skip


def _entry_point_only(program: str, entry_point: str) -> tuple[str, EntryPointOnly, str]:
    """The program cut to its entry point and what that uses (C7a), the record of it, and the reason's words."""
    kept = entry_point_only(program, entry_point)
    if kept is None:
        said = f"; the lane runs the entry point only, but no part of the program that parses defines {entry_point}: "
        return program, EntryPointOnly(found=False), said + "it ran as written"
    said = f"; run as the entry point and what it uses (code_runs entry_point_only): {', '.join(kept.kept)}"
    if kept.left_out_lines:
        said += f"; {kept.left_out_lines} other line(s) of the program left out"
    return kept.program, EntryPointOnly(found=True, kept=kept.kept, left_out_lines=kept.left_out_lines), said
