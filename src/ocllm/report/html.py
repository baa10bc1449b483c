"""The reports as single self-contained HTML pages: inline CSS, inline SVG charts, no request of any kind.

Each document is turned into its template's context here (the fields a document may leave out given their
defaults, its charts, its tasks' views) and rendered by `html_rendering`, which escapes everything.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from ocllm.report import charts
from ocllm.report.chart_views import comparison_charts, matrix_charts, run_charts
from ocllm.report.html_rendering import filter_script, render
from ocllm.report.page_views import (
    comparison_page,
    matrix_page,
    run_page,
)
from ocllm.report.task_views import in_full, index_row, task_view
from ocllm.report.wording import (
    RESOLVED_HEADER,
    RESOLVED_NOTE,
    verdict_of,
)
from ocllm.verdict_words import SCORER_LABEL


def run_report_html(doc: Mapping[str, Any]) -> str:
    view = run_page(doc)
    all_tasks, sampled = view["tasks"], bool(view["sampled"])
    full = in_full(all_tasks)
    verdicts = Counter(verdict_of(t) for t in all_tasks)
    return render(
        "run.html.j2",
        script=filter_script(),
        **{
            **view,
            "changed_tasks": [index_row(t) for t in view["changed_tasks"]],
            # The tasks drawn in full, as their views; the others are rows of the index.
            "tasks": [task_view(t, view["doc"]["tool"], sampled) for i, t in enumerate(all_tasks) if i in full],
        },
        scorer_label=SCORER_LABEL,
        index_rows=[index_row(t, sampled) for i, t in enumerate(all_tasks) if i not in full],
        task_total=len(all_tasks),
        charts=run_charts(doc),
        verdict_counts=[
            (v, verdicts[v]) for v in ("correct", "wrong", "no-answer", "error", "unscored") if verdicts[v]
        ],
    )


# --- Comparison and matrix ----------------------------------------------------------------------------


def _resource_notes(partly: Sequence[tuple[str, Sequence[str]]]) -> list[str]:
    return [f"Only {', '.join(have)} recorded {name}; the other side shows “not recorded”." for name, have in partly]


def _serving_notes(have: Sequence[str], columns: int) -> list[str]:
    if not have or len(have) == columns:
        return []
    return [f"Only {', '.join(have)} recorded serving figures; the other side shows “not recorded”."]


def comparison_html(doc: Mapping[str, Any]) -> str:
    view = comparison_page(doc)
    labels = [view["doc"]["a"]["label"], view["doc"]["b"]["label"]]
    lane_colours = charts.lane_colours(labels)
    return render(
        "comparison.html.j2",
        **view,
        colours=[lane_colours[label] for label in labels],
        charts=comparison_charts(view["doc"]),
        resource_notes=_resource_notes(view["resources_partly_recorded"]),
        serving_notes=_serving_notes(view["serving_recorded_by"], len(labels)),
    )


def matrix_html(doc: Mapping[str, Any]) -> str:
    view = matrix_page(doc)
    # By name, not rank: the colour a lane has on its run and comparison pages (charts.lane_colours).
    colours = charts.lane_colours(lane["label"] for lane in view["lanes"])
    return render(
        "matrix.html.j2",
        **{
            **view,
            "lanes": [{**lane, "colour": colours[lane["label"]]} for lane in view["lanes"]],
            "comparisons": [
                {
                    **c,
                    "colour_a": colours.get(c["doc"]["a"]["label"], charts.colour(0)),
                    "colour_b": colours.get(c["doc"]["b"]["label"], charts.colour(1)),
                }
                for c in view["comparisons"]
            ],
        },
        charts=matrix_charts(view["doc"]),
        resolved_header=RESOLVED_HEADER,
        resolved_note=RESOLVED_NOTE,
    )
