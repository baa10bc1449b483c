"""What a user must be told about a run beside its figures, worded once.

The console says these after `ocllm run`; `report`, `compare` and `matrix-report` open with them. A
figure alone does not say that half the suite never ran, that every answer was cut off at max_tokens,
or that the server answered with another model than the lane asked for; these sentences do.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any, NamedTuple

import msgspec

from ocllm import advice
from ocllm.model_names import model_mismatch_notice, same_model
from ocllm.models import Decision, Policy, Sample, Task
from ocllm.retry_rule import can_pass, refused_for_context
from ocllm.scoring import decide, task_types
from ocllm.scoring.regions import split_regions
from ocllm.server_facts import ServerFacts

# The reasons of failed requests listed one by one; the rest are summed up in one line.
_REASONS_LISTED = 3


class Scored(NamedTuple):
    """One finished task: what the server returned and what the scorer decided of it (and the task, without
    which the notices cannot tell what another scoring setting would decide)."""

    sample: Sample
    decision: Decision
    task: Task | None = None


def incomplete_notice(missing: int, in_suite: int | None, command: str | None = None) -> str | None:
    """The first thing said of a run that stopped part-way, or None for a run that ran every task. `command`: the
    ocllm command that ran it ("run", "matrix"), which --resume goes with; None where the run did not record it."""
    if missing <= 0:
        return None
    of = f" of {in_suite}" if in_suite else ""
    again = f"ocllm {command}" if command in ("run", "matrix") else "ocllm run or matrix"
    again = f"the same {again} command"
    return (
        f"INCOMPLETE: {missing}{of} tasks never ran (the run stopped part-way: {again} with --resume finishes it); "
        "every figure covers only the tasks that ran"
    )


def run_notices(
    scored: Iterable[Scored],
    *,
    missing: int = 0,
    in_suite: int | None = None,
    requested_model: str | None = None,
    reasoning: str | None = None,
    think_prefilled: bool | None = None,
    policy: Policy | None = None,
    server: ServerFacts | None = None,
    lane: Mapping[str, Any] | None = None,
) -> list[str]:
    """Every notice a run deserves, the most important first: tasks never run, failed requests, then
    what looks wrong in the answers (truncation, the model served, reasoning asked for and not seen).
    `policy` is what the decisions were taken under (the default when None); `server` and `lane` what the advice
    is made from."""
    tally = NoticeTally(policy)
    for item in scored:
        tally.add(item.sample, item.decision, item.task)
    return tally.notices(
        missing=missing,
        in_suite=in_suite,
        requested_model=requested_model,
        reasoning=reasoning,
        think_prefilled=think_prefilled,
        server=server,
        lane=lane,
    )


class NoticeTally:
    """What the notices need to know, counted as tasks arrive one by one (a rescore of any size keeps
    these counters, not its samples). `policy` is the one the decisions were taken under."""

    def __init__(self, policy: Policy | None = None) -> None:
        self.policy = policy or Policy()
        self.tasks = 0
        self.reasons: Counter[str] = Counter()  # why requests failed
        self.may_pass = 0  # failed requests that may pass when sent again (not refused by the server: refusals.py)
        self.answered = 0
        self.truncated = 0
        # Passes of types whose text is the answer, and those among them from truncated output, per type.
        self.text_passes: Counter[str] = Counter()
        self.cut_passes: Counter[str] = Counter()
        self.models: Counter[str] = Counter()  # the names the server answered as
        self.with_reasoning = 0  # a reasoning field
        self.thinking = 0  # a reasoning field, or think tags in the content
        self.closed_only = 0  # a </think> never opened: prefilled thinking
        self.prefill_changes = 0  # decisions that think_prefilled = true would change
        self.retries: Counter[str] = Counter()  # why attempts failed that were sent again
        self.timed_out = 0  # tasks that failed on a timeout (their last attempt ran past timeout_s)
        self.context_refused = 0  # tasks the server refused: the prompt and max_tokens do not fit its context
        self._type_tallies = task_types.TypeTallies()  # each task type's own counts, for its own notices

    def add(self, sample: Sample, decision: Decision, task: Task | None = None) -> None:
        """Count one finished task. With its `task`, the tally also decides it again as think_prefilled = true
        would, to say whether that setting would change anything (without it, nothing is advised)."""
        self.tasks += 1
        self.retries.update(sample.retry_reasons)
        if sample.error:
            self.reasons[sample.error] += 1
            self.timed_out += sample.error_kind == "timeout"
            self.may_pass += can_pass(sample)
            self.context_refused += refused_for_context(sample)
            return
        self.answered += 1
        self._type_tallies.add(decision)
        self.truncated += decision.truncated
        if decision.correct and not task_types.extracts_answer(decision.task_type):  # passed on the text as it stands
            self.text_passes[decision.task_type] += 1
            self.cut_passes[decision.task_type] += decision.truncated
        if sample.model:
            self.models[sample.model] += 1
        content = (sample.content or "").lower()
        self.with_reasoning += bool(sample.reasoning)
        self.thinking += bool(sample.reasoning or "</think>" in content)
        self.closed_only += "</think>" in content and "<think>" not in content
        if task is not None and not self.policy.think_prefilled:
            self.prefill_changes += _prefill_would_change(task, sample, decision, self.policy)

    def most_served(self) -> str | None:
        """The model name most answers were given as, if any answer said."""
        return self.models.most_common(1)[0][0] if self.models else None

    def notices(
        self,
        *,
        missing: int = 0,
        in_suite: int | None = None,
        requested_model: str | None = None,
        reasoning: str | None = None,
        think_prefilled: bool | None = None,
        rerunnable: bool = True,
        server: ServerFacts | None = None,
        lane: Mapping[str, Any] | None = None,
        command: str | None = None,
    ) -> list[str]:
        """`rerunnable`: the failed tasks can be run again by this project (not another tool's results). `server`
        (what the manifest knew of it) and `lane` (its settings) are what the advice is made from (advice.py)."""
        lane = lane or {}
        notices = [n for n in (incomplete_notice(missing, in_suite, command),) if n]
        notices += self._failures(rerunnable)
        notices += self._failure_advice(server, lane)
        notices += [n for n in (advice.context_refused(self.context_refused, lane),) if n]
        notices += self._type_tallies.notices()
        cut, answers = self._type_tallies.cut_without_call()
        notices += [n for n in (advice.constraint_did_not_take(cut, answers, server, lane),) if n]
        notices += [advice.dropped_calls(calls, server, lane) for calls in self._type_tallies.text_calls()]
        notices += self._retried()
        notices += [n for n in (advice.timeout_advice(self.timed_out, self.retries["timeout"], lane),) if n]
        notices += self._truncation()
        notices += self._model(requested_model)
        notices += self._reasoning(reasoning, server)
        if think_prefilled is False:
            notices += self._prefill()
        return notices

    def _failure_advice(self, server: ServerFacts | None, lane: Mapping[str, Any]) -> list[str]:
        """What to change on the server, for failures whose reason says the server is set up not to serve them
        (each sentence once, however many reasons name it)."""
        said = [advice.failure_advice(reason, server, lane) for reason, _ in self.reasons.most_common()]
        return list(dict.fromkeys(s for s in said if s))

    def _failures(self, rerunnable: bool) -> list[str]:
        if not self.reasons:
            return []
        failed = sum(self.reasons.values())
        # --retry-errors only for errors that can pass: a request the server refused meets the same refusal again.
        advice = ""
        if rerunnable and self.may_pass == failed:
            advice = "; the same run command with --retry-errors re-runs only those"
        elif rerunnable and self.may_pass:
            advice = f"; {self.may_pass} of them may pass when sent again (--retry-errors re-runs every failed task)"
        notices = [f"{failed} of {self.tasks} task(s) failed and are not scored (not counted as wrong){advice}"]
        listed = self.reasons.most_common(_REASONS_LISTED)
        notices += [f"{count} task(s) failed: {reason}" for reason, count in listed]
        if len(self.reasons) > _REASONS_LISTED:
            notices.append(f"... and {failed - sum(count for _, count in listed)} more failures")
        return notices

    def _retried(self) -> list[str]:
        """Retries cost time and say the server struggled, though the answers stand: said, by reason."""
        if not self.retries:
            return []
        reasons = ", ".join(f"{reason} ({count})" for reason, count in self.retries.most_common())
        return [f"{self.retries.total()} retries (a failed attempt sent again): {reasons}"]

    def _truncation(self) -> list[str]:
        if not self.truncated:
            return []
        if self.truncated == self.answered:
            share = f"every response ({self.answered}) was"
        else:
            share = f"{self.truncated} of {self.answered} responses were"
        notices = [f"{share} cut off at max_tokens (finish_reason: length); a larger max_tokens may change the figures"]
        for name, cut in sorted(self.cut_passes.items()):
            if not cut:
                continue
            room = task_types.TASK_TYPES.get(name)  # each type says what its passes are (a pass was decided, so known)
            words, held = (room.passes_word, f" ({room.cut_pass_held})") if room else ("passes", "")
            notices.append(f"{cut} of the {self.text_passes[name]} {words} came from truncated output{held}")
        return notices

    def _model(self, requested: str | None) -> list[str]:
        served = [name for name, _ in self.models.most_common()]
        if requested is None or not served or all(same_model(requested, name) for name in served):
            return []
        return [model_mismatch_notice(requested, served)]

    def _reasoning(self, reasoning: str | None, server: ServerFacts | None) -> list[str]:
        if reasoning == "off" and self.with_reasoning:
            return [
                f"reasoning is off for this lane, yet {self.with_reasoning} response(s) carried reasoning: "
                f"{advice.reasoning_not_off(server)}"
            ]
        # Think tags inside the content count too: the scorer reads them as reasoning.
        if reasoning == "native" and self.answered and not self.thinking:
            return [
                "reasoning is native for this lane, yet no response carried reasoning (no reasoning field, no "
                f"</think>): {advice.reasoning_not_seen(server)}"
            ]
        return []

    def _prefill(self) -> list[str]:
        """Outputs that close a thinking block they never opened: the chat template may open it in the prompt
        (R1-distill and its kin). Those are read the same either way (everything before the last </think> is
        reasoning); what think_prefilled = true changes is the reading of the other outputs (one cut off
        before its </think> is all thinking, not a visible answer). So the setting is advised only when it
        would change a decision, and the count of those is said; when it would change none, nothing is said."""
        if not self.closed_only or not self.prefill_changes:
            return []
        return [
            f"{self.closed_only} of {self.answered} output(s) close a </think> they never opened; with "
            f"think_prefilled = true, {self.prefill_changes} decision(s) would change (output cut off before its "
            f"</think> would be read as thinking, not as a visible answer): {advice.think_prefilled()}"
        ]


def _prefill_would_change(task: Task, sample: Sample, decision: Decision, policy: Policy) -> bool:
    """Whether deciding this output with think_prefilled = true changes its letter or its verdict. Decided
    again only where the regions differ (content with no </think>, or a stray one after a closed block):
    scoring is pure, and the tally keeps the count, not the outputs."""
    if sample.error or not sample.content:
        return False
    prefilled = split_regions(sample.content, sample.reasoning, think_prefilled=True)
    if prefilled == split_regions(sample.content, sample.reasoning):
        return False
    if task_types.extracts_answer(task.type) and not prefilled.visible and not policy.allow_reasoning_fallback:
        # Rule 5, without running the scorer again (most outputs of a model that does not think are this
        # case, and deciding each twice cost half the rescore): nothing visible and no fallback states no answer.
        return decision.extracted_final_answer is not None or decision.correct is True
    other = decide(task, sample, msgspec.structs.replace(policy, think_prefilled=True))
    return (other.extracted_final_answer, other.correct) != (decision.extracted_final_answer, decision.correct)

