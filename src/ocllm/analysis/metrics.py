"""Aggregate decisions into the summary figures every output shares."""

from __future__ import annotations

from array import array
from collections import Counter
from collections.abc import Callable, Iterable
from typing import Any, Protocol, TypeVar

import msgspec

from ocllm.analysis.sampled import SampledTally, vote
from ocllm.documents import Figures, PromptTokens, Serving, Summary, TypeFigures
from ocllm.models import Decision, Sample, token_counts
from ocllm.retry_rule import refused_for_context
from ocllm.scoring import task_types
from ocllm.scoring.no_answer import gave_no_answer
from ocllm.summary_words import MIN_RATE_WALL_S


class Verdict(Protocol):
    """What tallying needs of a scored task (a comparison's ScoredTask)."""

    @property
    def category(self) -> str: ...
    @property
    def correct(self) -> bool | None: ...
    @property
    def error(self) -> str | None: ...
    @property
    def no_answer(self) -> bool: ...


def decision_gave_no_answer(d: Decision) -> bool:
    return gave_no_answer(
        error=d.error,
        correct=d.correct,
        task_type=d.task_type,
        extracted=d.extracted_final_answer,
        source=d.extraction_source,
    )


def chance_level(option_counts: Iterable[int | None]) -> float | None:
    """The accuracy of answering at random: the mean of 1/options over the MCQ tasks (None where a task is not
    one); None when there is no MCQ task."""
    shares = [1 / n for n in option_counts if n]
    return sum(shares) / len(shares) if shares else None


def _counts() -> dict[str, int]:
    """A scope's counts: `unscored` are answers decided without a verdict (a code task no sandbox could run: its
    `correct` None beside no error), neither right nor wrong, left out of `scored` as failed requests are."""
    return {"total": 0, "correct": 0, "errors": 0, "unscored": 0, "no_answer": 0}


def tally_categories(items: Iterable[Verdict], key: Callable[[Any], str] | None = None) -> dict[str, dict[str, Any]]:
    """total, correct, errors, no answer and accuracy per category (or per `key` of an item), in name order."""
    by_category: dict[str, dict[str, Any]] = {}
    for item in items:
        name = item.category if key is None else key(item)
        cat = by_category.setdefault(name, _counts())
        cat["total"] += 1
        cat["correct"] += item.correct is True
        cat["errors"] += item.error is not None
        cat["unscored"] += item.correct is None and item.error is None
        cat["no_answer"] += item.no_answer
    for cat in by_category.values():
        cat["scored"] = cat["total"] - cat["errors"] - cat["unscored"]  # failed requests and unscored: not scored
        cat["accuracy"] = accuracy(cat["correct"], cat["scored"])
    return dict(sorted(by_category.items()))


_F = TypeVar("_F", bound=Figures)


class Tally:
    """The summary figures, kept as decisions arrive one by one: a rescore of any size holds these
    counters, not its decisions."""

    def __init__(self) -> None:
        self.total = self.correct = self.errors = self.truncated = self.no_answer = self.unscored = 0
        # Answered samples seen, and those of them that recorded a finish_reason: truncation is known only there.
        self.answered = self.finish_reasons = 0
        self._saw_samples = False
        self._categories: dict[str, dict[str, Any]] = {}
        self._types: dict[str, dict[str, Any]] = {}
        self._type_tallies = task_types.TypeTallies()
        self._ambiguity: Counter[str] = Counter()
        self._method: Counter[str] = Counter()
        self._source: Counter[str] = Counter()
        self._sampled = SampledTally()
        self._prompts = PromptTally()
        self.refused_context = 0  # failed requests refused as too long for the server's context
        self.finished_scored = self.finished_correct = 0  # scored answers not cut off, and the correct among them

    def add(self, d: Decision, sample: Sample | None = None) -> None:
        """Count one decision; with its `sample`, also whether the answer recorded a finish_reason, the prompt tokens
        of its requests, and whether it was refused as too long for the server's context."""
        self.total += 1
        if sample is not None:
            self._saw_samples = True
            if sample.error is None:
                self.answered += 1
                self.finish_reasons += sample.finish_reason is not None
            self._prompts.add(sample)
            self.refused_context += refused_for_context(sample)
        self.correct += d.correct is True
        self.errors += d.error is not None
        unscored = d.correct is None and d.error is None
        self.unscored += unscored
        self.truncated += d.truncated
        if not d.truncated and d.error is None and d.correct is not None:
            self.finished_scored += 1
            self.finished_correct += d.correct is True
        no_answer = decision_gave_no_answer(d)
        self.no_answer += no_answer
        for counts in (
            self._categories.setdefault(d.category, _counts()),
            self._types.setdefault(d.task_type, _counts()),
        ):
            counts["total"] += 1
            counts["correct"] += d.correct is True
            counts["errors"] += d.error is not None
            counts["unscored"] += unscored
            counts["no_answer"] += no_answer
        self._type_tallies.add(d)
        cast = vote(d.correct, d.extracted_final_answer, task_types.extracts_answer(d.task_type))
        self._sampled.add(d.task_id, d.category, d.task_type, d.correct, d.error is not None, cast)
        self._ambiguity[d.ambiguity] += 1
        self._method[d.extraction_method] += 1
        self._source[d.extraction_source] += 1

    def summary(self) -> Summary:
        """Totals overall and per category. Errors are counted apart and left out of the accuracy."""
        by_category = {
            name: _figures(Figures, cat, self._sampled.figures(category=name))
            for name, cat in sorted(self._categories.items())
        }
        by_type = {
            name: _figures(TypeFigures, counts, self._sampled.figures(task_type=name))
            for name, counts in sorted(self._types.items())
        }
        for name, figures in self._type_tallies.figures().items():
            by_type[name].details = figures
        return Summary(
            **self._sampled.figures(by_task=True),
            total=self.total,
            correct=self.correct,
            errors=self.errors,
            unscored=self.unscored,
            scored=self.total - self.errors - self.unscored,
            accuracy=accuracy(self.correct, self.total - self.errors - self.unscored),
            no_answer=self.no_answer,
            by_category=by_category,
            by_type=by_type,
            by_ambiguity=dict(self._ambiguity.most_common()),
            by_method=dict(self._method.most_common()),
            by_source=dict(self._source.most_common()),
            truncated=None if self._truncation_unknown() else self.truncated,
            finished_scored=None if self._truncation_unknown() else self.finished_scored,
            finished_correct=None if self._truncation_unknown() else self.finished_correct,
            finish_reasons=self.finish_reasons if self._saw_samples else None,
            prompt_tokens=self._prompts.figures(),
            refused_context=self.refused_context,
        )


    def _truncation_unknown(self) -> bool:
        # No answer recorded a finish_reason: whether any was cut off is unknown, not none.
        return self._saw_samples and bool(self.answered) and not self.finish_reasons


class PromptTally:
    """The prompt tokens of a run's requests, kept as samples arrive: a sum, a largest and a count."""

    def __init__(self) -> None:
        self.requests = self.total = self.largest = 0

    def add(self, sample: Sample) -> None:
        # A conversation's episode sums its requests' usage: each turn's reply holds its own request's.
        usages = [turn.reply.usage for turn in sample.turns] if sample.turns else [sample.usage]
        for usage in usages:
            said = usage.get("prompt_tokens") if isinstance(usage, dict) else None
            if isinstance(said, int) and not isinstance(said, bool) and said >= 0:
                self.requests += 1
                self.total += said
                self.largest = max(self.largest, said)

    def figures(self) -> PromptTokens | msgspec.UnsetType:
        """Mean, max and requests; UNSET (absent from the summary) when no request's usage said."""
        if not self.requests:
            return msgspec.UNSET
        return PromptTokens(mean=round(self.total / self.requests, 1), max=self.largest, requests=self.requests)

    def said(self) -> PromptTokens | None:
        """The figures, or None when no request's usage said (where a document writes null)."""
        figures = self.figures()
        return None if isinstance(figures, msgspec.UnsetType) else figures


def _figures(kind: type[_F], counts: dict[str, Any], sampled: dict[str, Any]) -> _F:
    scored = counts["total"] - counts["errors"] - counts["unscored"]  # failed requests and unscored: not scored
    return kind(
        **sampled,
        total=counts["total"],
        correct=counts["correct"],
        errors=counts["errors"],
        unscored=counts["unscored"],
        scored=scored,
        accuracy=accuracy(counts["correct"], scored),
        no_answer=counts["no_answer"],
    )


class ServingTally:
    """What the serving figures need of each sample, kept as they arrive: output tokens and times to first
    token (eight bytes a task)."""

    def __init__(self) -> None:
        self.answers = 0
        self.output_tokens = 0
        self.reported_tokens = False
        self.ttft = array("d")

    def add(self, sample: Sample) -> None:
        if sample.error is not None:
            return
        self.answers += 1
        completion, _ = token_counts(sample.usage)
        if completion is not None:
            self.output_tokens += completion
            self.reported_tokens = True
        if sample.ttft_s is not None:
            self.ttft.append(sample.ttft_s)

    def serving(self, timing: dict[str, Any] | None) -> Serving | None:
        """The figures over the run's wall time; None when the input did not record it."""
        wall = (timing or {}).get("wall_s")
        if not isinstance(wall, int | float) or isinstance(wall, bool) or wall <= 0:
            return None
        requests = timing.get("requests") if timing else None
        requests = requests if isinstance(requests, int) and not isinstance(requests, bool) else self.answers
        p50 = p95 = None
        if self.ttft:
            import numpy as np

            p50, p95 = (float(v) for v in np.percentile(np.frombuffer(self.ttft, dtype=float), [50, 95]))
        tokens = self.output_tokens if self.reported_tokens else None
        endpoints = (timing or {}).get("endpoints")
        tail = (timing or {}).get("scoring_tail_s")
        # No rate from no answer, or from a wall time too short to measure (issue 41): null, n/a on every page.
        measured = self.answers > 0 and wall >= MIN_RATE_WALL_S
        return Serving(
            wall_s=round(float(wall), 3),
            requests=requests,
            requests_per_s=round(requests / wall, 3) if measured else None,
            answers=self.answers,
            output_tokens=tokens,
            output_tokens_per_s=round(tokens / wall, 3) if tokens is not None and measured else None,
            ttft_p50_s=p50,
            ttft_p95_s=p95,
            ttft_samples=len(self.ttft),
            endpoints=endpoints if isinstance(endpoints, list) else [],
            scoring_tail_s=float(tail) if isinstance(tail, int | float) and not isinstance(tail, bool) else None,
        )


def accuracy(correct: int, scored: int) -> float | None:
    """correct / scored; None where nothing was scored: 0 of 0 is no accuracy, and 0.0 would read as one (null in
    every document, n/a on every page)."""
    return round(correct / scored, 6) if scored else None
