"""A summary's figures in words, said alike on the console, in the rescore audit and in both reports: how many
tasks were scored, the truncated count with what it is of, and the records a reader left out. Pure words of a
document, at the bottom beside `documents.py`, so that the report draws them without importing the analysis that
counted them."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ocllm.documents import UnscorableRecord

NOT_RECORDED = "not recorded"


def truncation_parts(truncated: int | None, recorded: int | None, answered: int) -> tuple[str, str | None]:
    """The truncated count as every page and the console says it, and what it is of: "not recorded" where no
    answer recorded a finish_reason, the count of those that did where only some did, else the count. `recorded`
    None: a document written before finish reasons were counted (its count stands as it was written)."""
    if truncated is None or (recorded is not None and answered and not recorded):
        return NOT_RECORDED, "no response in the input records a finish_reason"
    if recorded is not None and recorded < answered:
        return str(truncated), (
            f"of the {recorded} responses that record a finish_reason; for the other {answered - recorded}, "
            f"{NOT_RECORDED}"
        )
    return str(truncated), None


def truncation_words(truncated: int | None, recorded: int | None, answered: int) -> str:
    """`not recorded (no response in the input records a finish_reason)`, `3 (of the 40 responses ...)`, `3`."""
    value, of = truncation_parts(truncated, recorded, answered)
    return f"{value} ({of})" if of else value


def scored(figures: Mapping[str, Any]) -> int:
    """Tasks scored: all of them but the failed requests and the unscored (decided without a verdict). Documents
    carry it (`scored`); one made by an earlier version may not, and this is the one place that knows what it
    means."""
    value = figures.get("scored")
    if isinstance(value, int):
        return value
    return int(figures["total"]) - int(figures.get("errors") or 0) - int(figures.get("unscored") or 0)


# A wall time under this prints as "0.0 s": too short to measure a rate over (issue 41: "166.67 requests/s (over
# 0.0 s)" for a lane whose every request was refused at once).
MIN_RATE_WALL_S = 0.05


def serving_rate(serving: Mapping[str, Any], key: str) -> float | None:
    """A serving rate (`requests_per_s`, `output_tokens_per_s`) as documents are read: None (n/a) where it rests on
    no answered request or on a wall time that rounds to 0, whatever a document written before said of it."""
    value, wall, answers = serving.get(key), serving.get("wall_s"), serving.get("answers")
    if not isinstance(value, int | float) or isinstance(value, bool):
        return None
    if not isinstance(wall, int | float) or wall < MIN_RATE_WALL_S:
        return None
    if isinstance(answers, int) and not isinstance(answers, bool) and answers <= 0:
        return None
    return float(value)


# Said where the input recorded no verdict (a `correct` of true or false) on any task: nothing to count as changed.
NO_EARLIER_VERDICT = "no earlier verdict was read from the input"

LEFT_OUT_SHOWN = 10  # unscorable records named in the one sentence; the audit's table and the document list all


def left_out_sentence(records: list[UnscorableRecord], shown: int = LEFT_OUT_SHOWN) -> str:
    """What the console, the notices and the audit say of the records a reader could not make tasks of."""
    named = ", ".join(f"{r.task_id} ({r.reason})" for r in records[:shown])
    more = ""
    if len(records) > shown:
        more = f", and {len(records) - shown} more (summary.unscorable_records lists them all)"
    noun = "record" if len(records) == 1 else "records"
    return (
        f"left out {len(records)} {noun} this scorer cannot score: {named}{more}; they are in no figure, "
        "neither the input's nor this scorer's"
    )


def censoring_words(figures: Mapping[str, Any]) -> str | None:
    """A scope's accuracy on the answers that finished (not cut off at max_tokens) and the share cut off: what a
    score is worth beside its censoring. None where truncation is not known, or nothing was scored."""
    finished, correct = figures.get("finished_scored"), figures.get("finished_correct")
    answered = scored(figures)
    if not isinstance(finished, int) or not isinstance(correct, int) or not answered:
        return None
    cut = answered - finished
    on_finished = f"{100 * correct / finished:.1f}% ({correct} of {finished})" if finished else "n/a (none finished)"
    # A count first, its share after: "cut off: none of 6", never a 0.0% a reader takes for a figure of nothing.
    cut_off = f"{cut} of {answered} ({100 * cut / answered:.1f}%)" if cut else f"none of {answered}"
    return f"accuracy on the answers that finished: {on_finished}; cut off: {cut_off}"


# A cause's tasks named in a row: the first few, then how many more.
_TASKS_NAMED = 6


def server_path_rows(paths: Mapping[str, Any] | None) -> list[tuple[str, str, str]]:
    """Where two lanes on different server kinds answer differently (analysis/server_paths.py): a row a cause, its
    count and the first of its tasks."""
    if not paths:
        return []
    rows = []
    for cause, ids in (paths.get("differ") or {}).items():
        more = f" and {len(ids) - _TASKS_NAMED} more" if len(ids) > _TASKS_NAMED else ""
        rows.append((str(cause), str(len(ids)), ", ".join(map(str, ids[:_TASKS_NAMED])) + more))
    return rows


def censoring_rows(censoring: Mapping[str, Any] | None, labels: list[str]) -> list[tuple[str, str]]:
    """A comparison's scores beside their censoring, a line a side, then the difference in words (compare.py)."""
    if not censoring:
        return []
    rows = []
    for key, label in zip(("a", "b"), labels, strict=True):
        side = censoring.get(key) or {}
        said = censoring_words({"scored": side.get("scored"), "total": side.get("scored"), **side})
        overall = side.get("correct", 0) / side["scored"] if side.get("scored") else None
        rows.append((label, f"accuracy {100 * overall:.1f}%; {said}" if overall is not None else (said or "n/a")))
    rows.append(("difference", str(censoring.get("said", ""))))
    return rows


def short_duration(seconds: float) -> str:
    """3s, 4m05s, 2h03m: short enough for a progress line or a table's cell (the run's and the watch's)."""
    s = round(seconds)
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s // 3600}h{s % 3600 // 60:02d}m"
