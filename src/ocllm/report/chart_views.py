"""Each report's charts as its page shows them (`ChartView`): an inline SVG drawn by `charts`, with its title and
caption, or a note saying why it was not drawn.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from markupsafe import Markup

from ocllm.errors import MissingExtra
from ocllm.report import charts
from ocllm.report.charts import Difference, Estimate, LaneAccuracy
from ocllm.report.wording import (
    AGREEMENT_NOTE,
    SAMPLED_INTERVALS,
    agreeing_tasks,
    blank_figures,
    chance_text,
    comparison_sampled,
    diff_intervals_name,
    interval_methods_note,
    intervals_name,
    is_sampled,
    pass_at_k_rows,
    samples_per_task,
    task_shares,
)


@dataclass(frozen=True)
class ChartView:
    """A chart as the template shows it: an SVG, or a short note saying why there is none."""

    key: str  # the figure's data-chart attribute
    title: str
    caption: str = ""
    svg: Markup | None = None
    note: str | None = None
    wide: bool = False  # spans the whole row of the chart grid


def _drawn(key: str, title: str, caption: str, draw: Callable[[], str], *, wide: bool = False) -> ChartView:
    """The chart `draw` makes; where matplotlib (the extra ocllm[charts]) is not installed, a one-line note in its
    place saying how to install it, so that a lean install still writes every report, with its tables."""
    try:
        svg = draw()
    except MissingExtra as exc:
        return ChartView(key, title, note=f"Not drawn: {exc}", wide=wide)
    return ChartView(key, title, caption, Markup(svg), wide=wide)


def _estimate(figures: Mapping[str, Any], prefix: str = "") -> Estimate | None:
    """The accuracy and interval to draw; None where nothing was measured (wording.blank_figures): no bar."""
    if figures.get(f"{prefix}accuracy") is None:
        return None
    value = float(figures[f"{prefix}accuracy"])
    low = figures.get(f"{prefix}ci_low")
    high = figures.get(f"{prefix}ci_high")
    return Estimate(value, float(low) if low is not None else value, float(high) if high is not None else value)


def _difference(scope: Mapping[str, Any]) -> Estimate | None:
    """A comparison scope's difference to draw; None where none was measured. An interval that is null (one task's
    samples: no interval) is drawn as none, a point without whiskers, as `_estimate` draws an accuracy."""
    if scope.get("diff") is None:
        return None
    value = float(scope["diff"])
    low, high = scope.get("diff_ci_low"), scope.get("diff_ci_high")
    return Estimate(value, float(low) if low is not None else value, float(high) if high is not None else value)


def _values(resources: Mapping[str, Any] | None, key: str) -> list[float]:
    dist = (resources or {}).get(key)
    if not dist:
        return []
    return [float(v) for v in dist.get("values") or []]


_DIST_CHARTS = (
    ("latency", "latency_s", "Latency per task", "latency", False),
    ("completion-tokens", "completion_tokens", "Completion tokens per task", "completion tokens", True),
)


def _distribution_charts(
    lanes: Sequence[tuple[str, Mapping[str, Any] | None]],
    *,
    width: float = charts.WIDTH,
    colours: Mapping[str, str] | None = None,
) -> list[ChartView]:
    views = []
    for key, res_key, title, noun, integer in _DIST_CHARTS:
        series = [(label, _values(res, res_key)) for label, res in lanes]
        xlabel = noun
        if res_key == "latency_s":
            # Sub-second latencies (a simulator, a tiny model) read better in milliseconds.
            if all(v < 1.0 for _, values in series for v in values):
                series = [(label, [1000.0 * v for v in values]) for label, values in series]
                xlabel, integer = "latency (ms)", True
            else:
                xlabel = "latency (s)"
        try:
            svg = charts.distribution_chart(
                series, xlabel=xlabel, integer=integer, key=key, width=width, colours=colours
            )
        except MissingExtra as exc:
            views.append(ChartView(key, title, note=f"Not drawn: {exc}"))
            continue
        if svg is None:
            who = "this run" if len(lanes) == 1 else "any of these runs"
            views.append(ChartView(key, title, note=f"Not drawn: {who} recorded no {noun}."))
            continue
        missing = [label for label, values in series if not values]
        drawn = len(series) - len(missing)
        if drawn == 1:
            caption = "Histogram over the tasks that recorded it, with the median and the 95th percentile."
        else:
            caption = (
                "One box per lane, over the tasks that recorded it: box from the 25th to the 75th "
                "percentile, line at the median, ◇ the mean, whiskers to the 5th and 95th."
            )
        if missing:
            caption += " Not recorded by " + ", ".join(missing) + "."
        views.append(ChartView(key, title, caption, Markup(svg)))
    return views


def _chance_caption(chance: object) -> str:
    """What the dotted line of an accuracy chart is."""
    if not isinstance(chance, int | float):
        return ""
    return f" Dotted line: {chance_text(float(chance))}, the suite's mean of 1/options (answering at random)."


def _chance(value: object) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _category_view(
    categories: Sequence[str],
    series: Sequence[tuple[str, dict[str, Estimate]]],
    caption: str,
    width: float = charts.WIDTH,
    chance: float | None = None,
    colours: Mapping[str, str] | None = None,
) -> ChartView:
    title = "Accuracy per category"
    if not categories:
        return ChartView("category-accuracy", title, note="Not drawn: no scored task in any category.")
    return _drawn(
        "category-accuracy",
        title,
        caption + _chance_caption(chance),
        lambda: charts.category_chart(categories, series, width=width, chance=chance, colours=colours),
        wide=width > charts.WIDTH,
    )


def run_charts(doc: Mapping[str, Any]) -> list[ChartView]:
    summary = blank_figures(doc["summary"])
    by_cat = {name: f for name, f in (summary.get("by_category") or {}).items() if f.get("accuracy") is not None}
    categories = sorted(by_cat)
    label = str(doc.get("label", "run"))
    colours = charts.lane_colours([label])
    series = [(label, _estimates(by_cat))]
    sampled = is_sampled(summary)
    what = "scored samples" if sampled else "scored tasks"
    views = [
        _category_view(
            categories,
            series,
            f"Share of {what} answered correctly; bars are 95% {intervals_name(sampled)}.",
            width=charts.WIDE,
            chance=_chance(summary.get("chance")),
            colours=colours,
        )
    ]
    if sampled:
        views += _sampled_charts(summary, colours[label])
    views += _distribution_charts([(label, doc.get("resources"))], colours=colours)
    return views


def _sampled_charts(summary: Mapping[str, Any], fill: str) -> list[ChartView]:
    """A sampled run's pass@k curve with maj@k beside it, and the histogram of its tasks' shares correct."""
    k = samples_per_task(summary)
    curve = pass_at_k_rows(summary)
    majority = summary.get("majority_at_k")
    views = []
    if curve:
        views.append(
            _drawn(
                "pass-at-k",
                "pass@k and maj@k",
                f" pass@j for j = 1 to {k}: the chance that one of j samples of a task is right; ◆ maj@{k}, the share "
                f"of tasks whose gold answer is strictly the most frequent of their {k} samples.",
                lambda: charts.pass_at_k_chart(curve, majority, k, fill=fill),
            )
        )
    else:
        views.append(ChartView("pass-at-k", "pass@k and maj@k", note="Not drawn: no task has a scored sample."))
    shares = task_shares(summary)
    if shares:
        views.append(
            _drawn(
                "task-agreement",
                "Share of samples correct per task",
                f" {agreeing_tasks(summary)} of {len(shares)} tasks gave the same answer in every sample. "
                f"{AGREEMENT_NOTE} Dashed line: the mean share over tasks (pass@1).",
                lambda: charts.share_histogram(
                    shares,
                    steps=k,
                    low=0.0,
                    xlabel="share of a task's samples correct (%)",
                    key="task-agreement",
                    fill=fill,
                    mean=sum(shares) / len(shares),
                ),
            )
        )
    else:
        views.append(ChartView("task-agreement", "Share of samples correct per task", note="Not drawn: no task."))
    return views


def comparison_charts(doc: Mapping[str, Any]) -> list[ChartView]:
    a, b = doc["a"]["label"], doc["b"]["label"]
    n = doc["n_paired"]
    colours = charts.lane_colours([a, b])
    resources = doc.get("resources") or {}
    distributions = _distribution_charts([(a, resources.get("a")), (b, resources.get("b"))], colours=colours)
    a_estimate, b_estimate = _estimate(doc, "a_"), _estimate(doc, "b_")
    if not n or a_estimate is None or b_estimate is None:
        return [ChartView("accuracy", "Accuracy per lane", note="Not drawn: no paired task."), *distributions]
    lanes = [LaneAccuracy(a, a_estimate, colours[a]), LaneAccuracy(b, b_estimate, colours[b])]
    chance = _chance(doc.get("chance"))
    sampled = comparison_sampled(doc)
    views = [
        _drawn(
            "accuracy",
            "Accuracy per lane",
            f"On the {n} tasks both lanes answered; bars are 95% {intervals_name(sampled)}." + _chance_caption(chance),
            lambda: charts.accuracy_chart(lanes, chance=chance),
        )
    ]
    by_cat = {name: c for name, c in (doc.get("by_category") or {}).items() if c.get("n_paired")}
    scopes = [(f"all tasks ({n})", doc), *((f"{name} ({c['n_paired']})", c) for name, c in sorted(by_cat.items()))]
    rows = [
        Difference(label, e, bool(scope.get("significant")))
        for label, scope in scopes
        if (e := _difference(scope)) is not None
    ]
    views.append(
        _drawn(
            "difference",
            f"Difference, {b} − {a}",
            f"In percentage points, with 95% {diff_intervals_name(doc)}; coloured where significant.",
            lambda: charts.difference_chart(rows, xlabel=f"accuracy difference (points; > 0: {b} better)"),
        )
    )
    categories = sorted(by_cat)
    series = [
        (label, _estimates({c: by_cat[c] for c in categories}, prefix)) for label, prefix in ((a, "a_"), (b, "b_"))
    ]
    views.append(
        _category_view(
            categories,
            series,
            f"On paired tasks; bars are 95% {intervals_name(sampled)}.",
            width=charts.WIDE,
            chance=chance,
            colours=colours,
        )
    )
    differences = doc.get("task_differences") or []
    if sampled and differences:
        k = max(int(doc.get("samples_per_task_a") or 1), int(doc.get("samples_per_task_b") or 1))
        views.append(
            _drawn(
                "task-differences",
                f"Per-task difference, {b} − {a}",
                f" Each of the {len(differences)} paired tasks' share of correct samples on {b} minus {a}'s, in "
                "percentage points; dashed line: their mean, the difference the t test is of.",
                lambda: charts.share_histogram(
                    differences,
                    steps=k,
                    low=-1.0,
                    xlabel=f"difference of shares correct (points; > 0: {b} better)",
                    key="task-differences",
                    fill=colours[b],
                    mean=float(doc["diff"]),
                ),
            )
        )
    return views + distributions


def _estimates(scopes: Mapping[str, Mapping[str, Any]], prefix: str = "") -> dict[str, Estimate]:
    """Each scope's estimate to draw, leaving out those with nothing measured."""
    return {name: e for name, f in scopes.items() if (e := _estimate(f, prefix)) is not None}


def matrix_charts(doc: Mapping[str, Any]) -> list[ChartView]:
    lanes = doc.get("lanes") or []
    if not lanes:
        return [ChartView("accuracy", "Accuracy per lane", note="Not drawn: no lane.")]
    colours = charts.lane_colours(lane["label"] for lane in lanes)
    # Lanes not ranked (nothing scored, or another suite's tasks) are not drawn beside the ranked ones.
    rows = [
        LaneAccuracy(lane["label"], e, colours[lane["label"]])
        for lane in lanes
        if not lane.get("not_ranked") and (e := _estimate(lane))
    ]
    # The lanes of a matrix run one suite: the first lane's chance level is the suite's.
    chance = next((c for lane in lanes if (c := _chance(lane.get("chance"))) is not None), None)
    sampled = any(is_sampled(lane) for lane in lanes)
    # Which interval each bar is: one name where all lanes have the same kind, else the leaderboard's note.
    bars = (
        "each lane's 95% interval (the note under the leaderboard says which)"
        if interval_methods_note(lanes)
        else (f"95% {intervals_name(sampled)}")
    )
    if not rows:
        views = [ChartView("accuracy", "Accuracy per lane", note="Not drawn: no lane has a scored task.")]
    else:
        views = [
            _drawn(
                "accuracy",
                "Accuracy per lane",
                f"Best first; bars are {bars}."
                + (" Lanes not ranked are not drawn." if any(lane.get("not_ranked") for lane in lanes) else "")
                + _chance_caption(chance),
                lambda: charts.accuracy_chart(rows, chance=chance),
            )
        ]
    comparisons = doc.get("comparisons") or []
    diffs = []
    if comparisons:
        diffs = [
            Difference(c["b"]["label"], e, bool(c.get("significant")))
            for c in comparisons
            if (e := _difference(c)) is not None
        ]
    if diffs:
        views.append(
            _drawn(
                "difference",
                f"Difference from the baseline ({doc.get('baseline')})",
                f"In percentage points on paired tasks, with 95% {diff_intervals_name(comparisons[0])}; "
                "coloured where significant.",
                lambda: charts.difference_chart(diffs, xlabel="accuracy difference from the baseline (points)"),
            )
        )
    categories = sorted({c for lane in lanes for c in (lane.get("by_category") or {})})
    series = [(lane["label"], _estimates(lane.get("by_category") or {})) for lane in lanes]
    views.append(
        _category_view(
            categories,
            series,
            "Bars are 95% Wilson intervals." if not sampled else f"Bars are 95% intervals: {SAMPLED_INTERVALS}.",
            width=charts.WIDE,
            chance=chance,
            colours=colours,
        )
    )
    views += _distribution_charts([(lane["label"], lane.get("resources")) for lane in lanes], colours=colours)
    return views
