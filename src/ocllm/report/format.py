"""What both renderers say, in the same words: numbers, intervals, verdicts, answers and resource figures as
plain text. Nothing here escapes anything: the Markdown renderer passes these strings through `cell`, the HTML
templates through Jinja2's autoescaping.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ocllm.analysis.metrics import gave_no_answer
from ocllm.scoring import mcq, task_types
from ocllm.scoring.task_type import TaskType

_MCQ = mcq.TASK_TYPE

# --- Numbers and intervals ----------------------------------------------------------------------------


def pct(value: float | None, decimals: int = 1) -> str:
    return "n/a" if value is None else f"{100.0 * value:.{decimals}f}%"


def interval(low: float | None, high: float | None) -> str:
    if low is None or high is None:
        return "n/a"
    return f"{100.0 * low:.1f}–{100.0 * high:.1f}%"


def _signed(value: float) -> str:
    text = f"{100.0 * value:+.1f}"
    return "0.0" if text in ("+0.0", "-0.0") else text


def points(value: float) -> str:
    """A difference in accuracy, in percentage points, signed (zero unsigned)."""
    return f"{_signed(value)} pts"


def points_interval(low: float, high: float) -> str:
    return f"{_signed(low)} to {_signed(high)} pts"


def p_value(p: float | None) -> str:
    """Three significant digits, as the verdict sentences print them."""
    if p is None:
        return "n/a"
    return "< 0.001" if p < 0.001 else f"{p:.3g}"


def count(value: float | None) -> str:
    return "n/a" if value is None else f"{value:,.0f}"


def seconds(value: float | None) -> str:
    """Latency: milliseconds below a second (the simulator's are tiny), seconds otherwise."""
    if value is None:
        return "n/a"
    if value < 1.0:
        return f"{1000.0 * value:.0f} ms"
    return f"{value:.2f} s"


# --- A task's verdict and answers ---------------------------------------------------------------------


def verdict_of(task: Mapping[str, Any]) -> str:
    """correct / wrong / no-answer / error / unscored: a failed request is never a wrong answer, and a
    response with no answer in it is told apart from a wrong answer (both count against the accuracy)."""
    correct = task.get("correct")
    if correct is True:
        return "correct"
    if correct is False:
        no_answer = gave_no_answer(
            error=task.get("error"),
            correct=correct,
            task_type=task.get("task_type"),
            extracted=task.get("extracted_final_answer"),
            source=task.get("extraction_source"),
        )
        return "no-answer" if no_answer else "wrong"
    return "error" if task.get("error") else "unscored"


def wrong_answers(figures: Mapping[str, Any]) -> int:
    """Scored tasks answered, and answered wrong: neither right nor without an answer."""
    return scored(figures) - int(figures.get("correct") or 0) - int(figures.get("no_answer") or 0)


def chance_text(chance: float | None) -> str:
    """How the accuracy charts label the suite's chance level."""
    return "" if chance is None else f"chance {100.0 * chance:.0f}%"


def _task_type(task: Mapping[str, Any]) -> TaskType:
    # A record read back from a document names its type; one of a type this scorer lacks is drawn as MCQ's are.
    name = task.get("task_type")
    return task_types.TASK_TYPES.get(name) if isinstance(name, str) and name in task_types.TASK_TYPES else _MCQ


def expected_text(task: Mapping[str, Any]) -> str:
    """The gold, in the words of the task's type."""
    return _task_type(task).expected_text(task)


def extracted_text(task: Mapping[str, Any]) -> str:
    """The answer found, in the words of the task's type."""
    return _task_type(task).extracted_text(task)


def evidence_lines(task: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The type's own evidence beside the common fields, as (label, text) lines both renderers draw."""
    return _task_type(task).evidence_lines(task)


def type_rows(summary: Mapping[str, Any]) -> list[tuple[str, Mapping[str, Any], str]]:
    """The figures per task type, as (label, figures, the type's own figures in words), when they say more than
    the overall figures: a suite of several types, or a type with figures of its own. Else no rows."""
    by_type = summary.get("by_type") or {}
    if len(by_type) < 2 and not any(figures.get("details") for figures in by_type.values()):
        return []
    rows = []
    for name, figures in sorted(by_type.items()):
        known = task_types.TASK_TYPES.get(name)
        details = "; ".join(_detail(key, value) for key, value in (figures.get("details") or {}).items())
        rows.append((known.label if known else name, figures, details))
    return rows


def _detail(key: str, value: object) -> str:
    """One of a type's own figures in words: `decided by: number 40, symbolic 3`, `undecided 2`."""
    name = key.replace("_", " ")
    if isinstance(value, Mapping):
        return f"{name}: " + (", ".join(f"{k} {v}" for k, v in value.items()) or "none")
    return f"{name} {value}"


# --- Resource figures ---------------------------------------------------------------------------------

# A resource figure: (key in the resources object, label, integer-valued?)
RESOURCE_FIGURES: tuple[tuple[str, str, bool], ...] = (
    ("completion_tokens", "completion tokens", True),
    ("reasoning_tokens", "reasoning tokens", True),
    ("latency_s", "latency", False),
)


def resource_value(dist: Mapping[str, Any] | None, stat: str, integer: bool) -> str:
    if not dist:
        return "not recorded"
    value = dist.get(stat)
    return count(value) if integer else seconds(value)


def resource_rows(columns: Sequence[tuple[str, Mapping[str, Any] | None]]) -> list[list[str]]:
    """Resource figures side by side, one column per run: [figure name, value per run...] (plain text)."""
    rows: list[list[str]] = []
    for key, name in (("tasks", "tasks"), ("errors", "errors (failed requests)"), ("truncated", "truncated")):
        rows.append([name, *[count((res or {}).get(key)) for _, res in columns]])
    for key, name, integer in RESOURCE_FIGURES:
        dists = [(res or {}).get(key) for _, res in columns]
        if not any(dists):
            rows.append([name, *["not recorded"] * len(columns)])
            continue
        for stat in ("mean", "p50", "p95"):
            rows.append(
                [f"{name}, {'median' if stat == 'p50' else stat}", *[resource_value(d, stat, integer) for d in dists]]
            )
    return rows


def partly_recorded(columns: Sequence[tuple[str, Mapping[str, Any] | None]]) -> list[tuple[str, list[str]]]:
    """The resource figures only some runs recorded, with the labels of those that did: side-by-side
    numbers would mislead otherwise, so both renderers say so plainly."""
    partial = []
    for key, name, _ in RESOURCE_FIGURES:
        have = [label for label, res in columns if (res or {}).get(key)]
        if have and len(have) < len(columns):
            partial.append((name, have))
    return partial


# --- Serving figures ----------------------------------------------------------------------------------

SERVING_NOTE = (
    "Over the run's wall time (the time its requests were in flight, summed over every invocation); "
    "time to first token is measured on streamed lanes only."
)
SERVING_MISSING = "Serving figures not recorded: this input did not record its wall time."


def rate(value: float | None) -> str:
    """A throughput per second: two decimals below 10, one below 100, none above."""
    if value is None:
        return "n/a"
    decimals = 2 if value < 10 else 1 if value < 100 else 0
    return f"{value:,.{decimals}f}"


def duration(value: float | None) -> str:
    """A wall time: as latencies below a minute, in minutes and seconds (and hours) above."""
    if value is None or value < 60:
        return seconds(value)
    minutes, secs = divmod(round(value), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes} min {secs} s" if hours else f"{minutes} min {secs} s"


def _number(value: object) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _recorded(value: object, form: Callable[[float], str]) -> str:
    number = _number(value)
    return "not recorded" if number is None else form(number)


# A serving figure: (label, the figure as text from a run's `serving` object)
SERVING_FIGURES: tuple[tuple[str, Callable[[Mapping[str, Any]], str]], ...] = (
    ("requests/s", lambda s: _recorded(s.get("requests_per_s"), rate)),
    ("output tokens/s", lambda s: _recorded(s.get("output_tokens_per_s"), rate)),
    ("time to first token, median", lambda s: _recorded(s.get("ttft_p50_s"), seconds)),
    ("time to first token, 95th percentile", lambda s: _recorded(s.get("ttft_p95_s"), seconds)),
    ("wall time", lambda s: _recorded(s.get("wall_s"), duration)),
    ("requests (retries included)", lambda s: _recorded(s.get("requests"), count)),
    ("answers", lambda s: _recorded(s.get("answers"), count)),
    ("output tokens", lambda s: _recorded(s.get("output_tokens"), count)),
)


def serving_rows(columns: Sequence[tuple[str, Mapping[str, Any] | None]]) -> list[list[str]]:
    """Serving figures side by side, one column per run: [figure name, value per run...] (plain text); a run
    that recorded none shows "not recorded" throughout."""
    return [
        [name, *[figure(serving) if serving else "not recorded" for _, serving in columns]]
        for name, figure in SERVING_FIGURES
    ]


def serving_cells(serving: Mapping[str, Any] | None) -> dict[str, str]:
    """The leaderboard's serving columns for one lane: requests/s, output tokens/s, median time to first token."""
    if not serving:
        return {"requests_per_s": "not recorded", "output_tokens_per_s": "not recorded", "ttft_p50": "not recorded"}
    return {
        "requests_per_s": _recorded(serving.get("requests_per_s"), rate),
        "output_tokens_per_s": _recorded(serving.get("output_tokens_per_s"), rate),
        "ttft_p50": _recorded(serving.get("ttft_p50_s"), seconds),
    }


def serving_recorded_by(columns: Sequence[tuple[str, Mapping[str, Any] | None]]) -> list[str]:
    """The labels of the runs that recorded serving figures."""
    return [label for label, serving in columns if serving]


ENDPOINT_HEADER = ("endpoint", "requests", "errors", "latency, median", "latency, 95th percentile")


def endpoint_rows(serving: Mapping[str, Any] | None) -> list[list[str]]:
    """One row per replica of a lane served by several (empty otherwise), as ENDPOINT_HEADER names them."""
    rows = []
    for endpoint in (serving or {}).get("endpoints") or []:
        if not isinstance(endpoint, Mapping):
            continue
        rows.append(
            [
                str(endpoint.get("base_url") or "—"),
                _recorded(endpoint.get("requests"), count),
                _recorded(endpoint.get("errors"), count),
                _recorded(endpoint.get("latency_p50_s"), seconds),
                _recorded(endpoint.get("latency_p95_s"), seconds),
            ]
        )
    return rows


def scored(figures: Mapping[str, Any]) -> int:
    """Tasks scored: all of them but the failed requests. Documents carry it (`scored`); one made by an
    earlier version may not, and this is the one place that knows what it means."""
    value = figures.get("scored")
    return int(value) if isinstance(value, int) else int(figures["total"]) - int(figures.get("errors") or 0)


# --- Settings -----------------------------------------------------------------------------------------


def settings_rows(columns: Sequence[tuple[str, Mapping[str, str]]]) -> list[tuple[str, list[str], bool]]:
    """The runs' settings side by side: (setting, value per run, whether they differ), the differing ones first
    (what sets the runs apart is what a reader looks for), each group in the settings' own order. A run that
    does not say a setting shows "—"."""
    names: list[str] = []
    for _, settings in columns:
        names += [name for name in settings if name not in names]
    rows = []
    for name in names:
        values = [settings.get(name, "—") for _, settings in columns]
        rows.append((name, values, len(set(values)) > 1))
    return [row for row in rows if row[2]] + [row for row in rows if not row[2]]
