"""Required-substring tasks: every listed substring must appear in the visible answer."""

from __future__ import annotations

from ocllm.models import Policy, Sample
from ocllm.scoring.regions import split_regions
from ocllm.scoring.substrings.decision import SubstringsDecision
from ocllm.scoring.substrings.fields import SubstringsTask


def decide_substrings(task: SubstringsTask, sample: Sample, policy: Policy) -> SubstringsDecision:
    visible = split_regions(sample.content, None, think_prefilled=policy.think_prefilled).visible_text()
    required = task.required_substrings or []
    if task.case_sensitive:
        missing = [s for s in required if s not in visible]
    else:
        haystack = visible.casefold()
        missing = [s for s in required if s.casefold() not in haystack]
    how = "case-sensitive" if task.case_sensitive else "case-insensitive"
    if missing:
        reason = f"visible content lacks {len(missing)} of {len(required)} required substring(s) ({how})"
    else:
        reason = f"visible content holds all {len(required)} required substring(s) ({how})"
    return SubstringsDecision(
        task_id=task.id,
        task_type=task.type,
        category=task.category,
        expected_answer=None,
        extracted_final_answer=None,
        extraction_source="content" if visible.strip() else "none",
        extraction_method="required_substrings",
        ambiguity="none",
        correct=not missing,
        rule="required_substrings",
        reason=reason,
        missing_substrings=missing,
        truncated=sample.finish_reason == "length",
    )
