"""What a user must be told about a run beside its figures, worded once.

The console says these after `ocllm run`; `report`, `compare` and `matrix-report` open with them. A
figure alone does not say that half the suite never ran, that every answer was cut off at max_tokens,
or that the server answered with another model than the lane asked for; these sentences do.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from typing import NamedTuple

from ocllm.models import Decision, Sample

# The reasons of failed requests listed one by one; the rest are summed up in one line.
_REASONS_LISTED = 3


class Scored(NamedTuple):
    """One finished task: what the server returned and what the scorer decided of it."""

    sample: Sample
    decision: Decision


def same_model(wanted: str, served: str) -> bool:
    """Whether a served model name is the one asked for (Ollama lists "qwen3:latest" for "qwen3")."""
    return served in {wanted, f"{wanted}:latest", wanted.removesuffix(":latest")}


def served_models(samples: Iterable[Sample]) -> list[str]:
    """The model names the server answered with, most frequent first."""
    return [name for name, _ in Counter(s.model for s in samples if s.model).most_common()]


def incomplete_notice(missing: int, in_suite: int | None) -> str | None:
    """The first thing said of a run that stopped part-way, or None for a run that ran every task."""
    if missing <= 0:
        return None
    of = f" of {in_suite}" if in_suite else ""
    return (
        f"INCOMPLETE: {missing}{of} tasks never ran (the run stopped part-way: the same run "
        "command with --resume finishes it); every figure covers only the tasks that ran"
    )


def run_notices(
    scored: Sequence[Scored],
    *,
    missing: int = 0,
    in_suite: int | None = None,
    requested_model: str | None = None,
    reasoning: str | None = None,
    think_prefilled: bool | None = None,
) -> list[str]:
    """Every notice a run deserves, the most important first: tasks never run, failed requests, then
    what looks wrong in the answers (truncation, the model served, reasoning asked for and not seen)."""
    notices = [n for n in (incomplete_notice(missing, in_suite),) if n]
    notices += _failure_notices([s.sample for s in scored])
    answered = [s for s in scored if s.sample.error is None]
    notices += _truncation_notices(answered)
    notices += _model_notices([s.sample for s in answered], requested_model)
    notices += _reasoning_notices([s.sample for s in answered], reasoning)
    if think_prefilled is False:
        notices += _prefill_notices([s.sample for s in answered])
    return notices


def _failure_notices(samples: Sequence[Sample]) -> list[str]:
    reasons = Counter(s.error for s in samples if s.error)
    if not reasons:
        return []
    failed = sum(reasons.values())
    notices = [
        f"{failed} of {len(samples)} task(s) failed and are not scored (not counted as wrong); "
        "the same run command with --retry-errors re-runs only those"
    ]
    notices += [f"{count} task(s) failed: {reason}" for reason, count in reasons.most_common(_REASONS_LISTED)]
    if len(reasons) > _REASONS_LISTED:
        rest = failed - sum(count for _, count in reasons.most_common(_REASONS_LISTED))
        notices.append(f"... and {rest} more failures")
    return notices


def _truncation_notices(answered: Sequence[Scored]) -> list[str]:
    truncated = [s for s in answered if s.decision.truncated]
    if not truncated:
        return []
    if len(truncated) == len(answered):
        share = f"every response ({len(answered)}) was"
    else:
        share = f"{len(truncated)} of {len(answered)} responses were"
    notices = [f"{share} cut off at max_tokens (finish_reason: length); a larger max_tokens may change the figures"]
    substring_passes = [s for s in answered if s.decision.task_type == "required_substrings" and s.decision.correct]
    cut_passes = sum(s.decision.truncated for s in substring_passes)
    if cut_passes:
        notices.append(
            f"{cut_passes} of the {len(substring_passes)} required-substring passes came from truncated output "
            "(the text held the substrings, but the answer was not finished)"
        )
    return notices


def _model_notices(answered: Sequence[Sample], requested: str | None) -> list[str]:
    served = served_models(answered)
    if requested is None or not served or all(same_model(requested, name) for name in served):
        return []
    return [f"{_MODEL_MISMATCH} {requested!r}, but the server answered as {', '.join(map(repr, served))}"]


_MODEL_MISMATCH = "the lane asked for model"
_ANSWERS_AS = "it answers, as"


def unlisted_model_notice(requested: str, listed: list[str], answered_as: str | None) -> str:
    """Before a run: the model asked for is not listed, but the server answers a request for it."""
    if answered_as and not same_model(requested, answered_as):
        answered = f"{_ANSWERS_AS} {answered_as!r}: results and reports name the model the server answered as"
    else:
        answered = "but it answers to that name"
    return f"model {requested!r} is not among those the server lists ({', '.join(listed)}); {answered}"


def is_model_mismatch(notice: str) -> bool:
    """Whether a notice says the server answered as another model than asked for, before or after a run:
    it is said once per run."""
    return notice.startswith(_MODEL_MISMATCH) or f"; {_ANSWERS_AS} " in notice


def _reasoning_notices(answered: Sequence[Sample], reasoning: str | None) -> list[str]:
    thinking = sum(1 for s in answered if s.reasoning)
    if reasoning == "off" and thinking:
        return [
            f"reasoning is off for this lane, yet {thinking} response(s) carried reasoning: this server may "
            "ignore chat_template_kwargs (use a system prompt or extra_body to turn thinking off)"
        ]
    # Think tags inside the content count too: the scorer reads them as reasoning.
    if reasoning == "native" and answered and not any(s.reasoning or "</think>" in (s.content or "") for s in answered):
        return [
            "reasoning is native for this lane, yet no response carried reasoning (no reasoning field, no "
            "</think>): the model may not think, or the server needs a reasoning parser "
            "(vLLM --reasoning-parser, llama.cpp --reasoning-format)"
        ]
    return []


def _prefill_notices(answered: Sequence[Sample]) -> list[str]:
    """Outputs that close a thinking block they never opened: the chat template opened it in the prompt
    (R1-distill and its kin). Finished ones are read correctly (everything before the last </think> is
    reasoning), but one cut off before its </think> is all thinking, read as a visible answer."""
    closed_only = sum(1 for s in answered if "</think>" in (low := (s.content or "").lower()) and "<think>" not in low)
    if not closed_only:
        return []
    return [
        f"{closed_only} of {len(answered)} output(s) close a </think> they never opened: the chat template opens "
        "the thinking in the prompt; set think_prefilled = true for this lane (--think-prefilled to rescore), "
        "or an output cut off before its </think> is read as a visible answer"
    ]
