"""The figures of a watch: a row per lane (its shards summed) and per shard, each with done of total, rate, ETA,
errors by kind, the running accuracy with its 95% Wilson interval, and, per lane, the paired difference to the
baseline lane on the (task, sample) both have decided, with the exact paired interval and McNemar's exact p."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from ocllm.analysis.paired import paired_by_task
from ocllm.analysis.stats import Interval, wilson
from ocllm.watch.run_state import Key, Outcome, RunState

# What a status is called once shards are summed: the first of these any shard has.
_LANE_STATUS = ("stalled", "interrupted", "running", "waiting", "finished")


@dataclass
class Paired:
    """The lane against the baseline on the (task, sample) both decided: B minus A, B the lane."""

    baseline: str
    n: int
    baseline_only: int  # right on the baseline only
    lane_only: int  # right on this lane only
    difference: float | None  # None: nothing paired yet
    interval: Interval | None
    p: float | None

    @property
    def significant(self) -> bool:
        return (
            self.p is not None and self.interval is not None and self.p < 0.05
            and (self.interval.low > 0 or self.interval.high < 0)
        )  # fmt: skip


@dataclass
class Row:
    """A lane (shard None: its shards summed) or one of its shards."""

    lane: str
    shard: str | None  # "K/N"
    status: str
    done: int
    total: int | None
    rate: float | None
    eta_s: float | None
    errors: Counter[str]
    right: int
    wrong: int
    unscored: int
    deferred: int
    accuracy: float | None
    interval: Interval | None
    idle_s: float | None
    replicas: int = 1
    idle_replicas: list[str] | None = None
    paired: Paired | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def decided(self) -> int:
        return self.right + self.wrong


@dataclass
class Lane:
    row: Row
    shards: list[Row]  # empty: not sharded


@dataclass
class Snapshot:
    lanes: list[Lane]
    baseline: str | None
    notes: list[str]

    @property
    def finished(self) -> bool:
        return bool(self.lanes) and all(lane.row.status == "finished" for lane in self.lanes)


def lane_row(lane: str, states: Sequence[RunState], shard_labels: Sequence[str | None]) -> Lane:
    """A lane's row from its runs (one, or its shards), and a row per shard when there are several or one is a
    shard."""
    shards = [_row(lane, label, [state]) for label, state in zip(shard_labels, states, strict=True)]
    summed = _row(lane, None, states)
    expected = max((s.shard[1] for s in states if s.shard is not None), default=0)
    if expected > len(states):
        summed.notes.append(f"{expected - len(states)} of {expected} shards not started")
        summed.total = None if summed.status != "finished" else summed.total
        summed.status = summed.status if summed.status != "finished" else "running"
    sharded = len(states) > 1 or any(label is not None for label in shard_labels)
    return Lane(summed, shards if sharded else [])


def _row(lane: str, shard: str | None, states: Sequence[RunState]) -> Row:
    counts: Counter[Outcome] = Counter()
    errors: Counter[str] = Counter()
    for state in states:
        counts.update(state.counts)
        errors.update(state.errors)
    right, wrong = counts["right"], counts["wrong"]
    decided = right + wrong
    totals = [s.total for s in states]
    total = None if any(t is None for t in totals) else sum(t for t in totals if t is not None)
    rates = [s.rate for s in states if s.rate is not None and s.status != "finished"]
    rate = sum(rates) if rates else None
    done = sum(s.done for s in states)
    status = next(word for word in _LANE_STATUS if any(s.status == word for s in states) or word == "finished")
    eta = (total - done) / rate if total is not None and rate and status != "finished" else None
    idles = [s.idle_s for s in states if s.idle_s is not None and s.status != "finished"]
    notes = [note for s in states for note in s.notes]
    deferred_types = sorted({t for s in states for t in s.deferred_types})
    if deferred_types:
        notes.append(f"{', '.join(deferred_types)}: scored at the end (costly to decide here)")
    unreadable = sum(s.unreadable for s in states)
    if unreadable:
        notes.append(f"{unreadable} line(s) of samples.jsonl are no sample")
    idle_replicas = None
    if states and all(s.idle_replicas is not None for s in states):
        idle_replicas = sorted({url for s in states for url in s.idle_replicas or []})
    return Row(
        lane=lane,
        shard=shard,
        status=status,
        done=done,
        total=total,
        rate=rate,
        eta_s=eta,
        errors=errors,
        right=right,
        wrong=wrong,
        unscored=counts["unscored"],
        deferred=counts["deferred"],
        accuracy=right / decided if decided else None,
        interval=wilson(right, decided) if decided else None,
        idle_s=min(idles) if idles else None,
        replicas=max((s.replicas for s in states), default=1),
        idle_replicas=idle_replicas,
        notes=notes,
    )


def paired(baseline: str, base: Mapping[Key, Outcome], other: Mapping[Key, Outcome]) -> Paired:
    """The lane (`other`) against the baseline on the (task, sample) both decided right or wrong. With one sample a
    task, the exact McNemar test and its interval; with several, a task's samples are one task (paired_by_task: the
    mean per-task difference, clustered on tasks), never that many independent tasks."""
    decided = ("right", "wrong")
    keys = sorted(key for key, outcome in other.items() if outcome in decided and base.get(key) in decided)
    if not keys:
        return Paired(baseline, 0, 0, 0, None, None, None)
    lane = [other[key] == "right" for key in keys]
    base_right = [base[key] == "right" for key in keys]
    figures = paired_by_task([task for task, _ in keys], base_right, lane, baseline, "lane")
    baseline_only = sum(b and not a for a, b in zip(lane, base_right, strict=True))
    lane_only = sum(a and not b for a, b in zip(lane, base_right, strict=True))
    interval = None
    if figures.diff_ci_low is not None and figures.diff_ci_high is not None:
        interval = Interval(figures.diff_ci_low, figures.diff_ci_high)
    return Paired(baseline, len(keys), baseline_only, lane_only, figures.diff, interval, figures.p_value)


def snapshot(runs: Mapping[str, Sequence[tuple[str | None, RunState]]], baseline: str | None) -> Snapshot:
    """Every lane's rows, in the order given, with the paired figures against `baseline` (default: the first)."""
    notes: list[str] = []
    names = list(runs)
    chosen = baseline if baseline is not None else (names[0] if names else None)
    if chosen is not None and chosen not in runs:
        notes.append(f"baseline {chosen}: no such lane yet")
        chosen = None
    lanes = []
    outcomes = {name: _outcomes([state for _, state in found]) for name, found in runs.items()}
    for name, found in runs.items():
        lane = lane_row(name, [state for _, state in found], [label for label, _ in found])
        if chosen is not None and name != chosen:
            lane.row.paired = paired(chosen, outcomes[chosen], outcomes[name])
        lanes.append(lane)
    return Snapshot(lanes, chosen, notes)


def _outcomes(states: Sequence[RunState]) -> Mapping[Key, Outcome]:
    if len(states) == 1:
        return states[0].outcomes
    joined: dict[Key, Outcome] = {}
    for state in states:
        joined.update(state.outcomes)
    return joined
