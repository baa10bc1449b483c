"""A row's figures in words, the same in the terminal and on the page: the report's own wording of accuracies,
intervals and differences (report/wording.py), and the watch's own of progress."""

from __future__ import annotations

from collections import Counter

from ocllm.report.wording import interval, p_value, pct, points, points_interval
from ocllm.summary_words import short_duration
from ocllm.watch.figures import Paired, Row

NONE = "—"
COLUMNS = (
    "lane", "shard", "status", "done", "rate", "ETA", "errors", "accuracy", "95% interval", "vs baseline",
    "paired 95% interval", "McNemar p", "notes",
)  # fmt: skip


def done(row: Row) -> str:
    if row.total is None:
        return f"{row.done:,} of ?"
    share = f" ({100 * row.done / row.total:.0f}%)" if row.total else ""
    return f"{row.done:,} of {row.total:,}{share}"


def rate(row: Row) -> str:
    return NONE if row.rate is None else f"{row.rate:.2f}/s"


def duration(value: float | None) -> str:
    return NONE if value is None else short_duration(value)


def eta(row: Row) -> str:
    return "done" if row.status == "finished" else duration(row.eta_s)


def errors(kinds: Counter[str]) -> str:
    if not kinds:
        return "0"
    return ", ".join(f"{kind} {n}" for kind, n in sorted(kinds.items(), key=lambda kv: (-kv[1], kv[0])))


def accuracy(row: Row) -> str:
    if row.accuracy is None:
        return NONE
    return f"{pct(row.accuracy)} ({row.right}/{row.decided})"


def accuracy_interval(row: Row) -> str:
    return NONE if row.interval is None else interval(*row.interval)


def difference(paired: Paired | None) -> str:
    if paired is None:
        return NONE
    if paired.difference is None:
        return "nothing paired yet"
    return f"{points(paired.difference)} on {paired.n:,} (+{paired.lane_only}/-{paired.baseline_only})"


def difference_interval(paired: Paired | None) -> str:
    if paired is None or paired.interval is None:
        return NONE
    return points_interval(*paired.interval)


def mcnemar(paired: Paired | None) -> str:
    return NONE if paired is None or paired.p is None else p_value(paired.p)


def status(row: Row) -> str:
    if row.status == "stalled" and row.idle_s is not None:
        return f"stalled {duration(row.idle_s)}"
    return row.status


def notes(row: Row) -> list[str]:
    said = list(row.notes)
    if row.unscored:
        said.append(f"{row.unscored} unscored")
    if row.deferred:
        said.append(f"{row.deferred} scored at the end")
    if row.replicas > 1:
        if row.idle_replicas is None:
            said.append(f"{row.replicas} replicas: too few answers yet to tell an idle one")
        elif row.idle_replicas:
            said.append(f"idle replica(s): {', '.join(row.idle_replicas)}")
        else:
            said.append(f"{row.replicas} replicas, all answered")
    return said


def cells(row: Row) -> list[str]:
    """The row's cells, in COLUMNS' order."""
    return [
        row.lane if row.shard is None else "",
        row.shard or "",
        status(row),
        done(row),
        rate(row),
        eta(row),
        errors(row.errors),
        accuracy(row),
        accuracy_interval(row),
        difference(row.paired),
        difference_interval(row.paired),
        mcnemar(row.paired),
        "; ".join(notes(row)),
    ]
