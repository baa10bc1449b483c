"""The reports as single self-contained HTML pages: inline CSS, inline SVG charts, no request of any kind.

Each document is turned into its template's context here (the fields a document may leave out given their
defaults, its charts, its tasks' views) and rendered by `html_rendering`, which escapes everything.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from ocllm.analysis.audit import SCORER_LABEL
from ocllm.report import charts
from ocllm.report.chart_views import comparison_charts, matrix_charts, run_charts
from ocllm.report.html_rendering import filter_script, render
from ocllm.report.page_views import (
    FIGURE_DEFAULTS,
    comparison_page,
    matrix_page,
    with_defaults,
)
from ocllm.report.task_views import changed, in_full, index_row, task_view
from ocllm.report.wording import (
    PASS_AT_K_NOTE,
    RESOLVED_HEADER,
    RESOLVED_NOTE,
    RESOURCE_FIGURES,
    accuracy_name,
    agreeing_tasks,
    blank_figures,
    category_stderr_larger,
    category_stderr_sentence,
    count,
    endpoint_rows,
    in_sample_order,
    interval_name,
    is_sampled,
    pass_at_k_rows,
    pct,
    pooled_verdicts_note,
    resource_value,
    samples_per_task,
    says_changed,
    scored,
    serving_rows,
    settings_rows,
    stderr_points,
    task_shares,
    truncated_kpi,
    type_rows,
    type_tables,
    verdict_of,
    verdict_scope_rows,
)


def _run_resource_rows(resources: Mapping[str, Any] | None) -> list[list[str]]:
    """One run's distributions as rows: figure, tasks that recorded it, mean, median, 95th percentile."""
    rows = []
    for key, name, integer in RESOURCE_FIGURES:
        dist = (resources or {}).get(key)
        if not dist:
            rows.append([name, "not recorded", "", "", ""])
            continue
        rows.append(
            [name, count(dist.get("n")), *[resource_value(dist, stat, integer) for stat in ("mean", "p50", "p95")]]
        )
    return rows


def _breakdown(counts: Mapping[str, int]) -> list[tuple[str, int, float]]:
    total = sum(counts.values()) or 1
    return [(name, n, n / total) for name, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))]


def _sampled_view(summary: Mapping[str, Any]) -> dict[str, Any]:
    """What the run page says of repeated samples: k, the pass@k rows and maj@k, the clustered standard errors
    (the category one where it is larger), and the tasks whose samples agree."""
    k = samples_per_task(summary)
    figures = [
        ("samples per task", str(k)),
        ("tasks scored", str(summary.get("tasks_scored", 0))),
        ("standard error, clustered on tasks", stderr_points(summary.get("accuracy_stderr"))),
    ]
    if category_stderr_larger(summary, "accuracy_stderr", "accuracy_stderr_category"):
        figures.append(("standard error, clustered on categories", stderr_points(summary["accuracy_stderr_category"])))
    figures.append(("tasks whose samples all agree", f"{agreeing_tasks(summary)} of {len(task_shares(summary))}"))
    return {
        "k": k,
        "name": accuracy_name(summary),
        "curve": [
            *((f"pass@{j}", pct(v)) for j, v in pass_at_k_rows(summary)),
            (f"maj@{k}", pct(summary.get("majority_at_k"))),
        ],
        "figures": figures,
        "note": PASS_AT_K_NOTE,
        "category_note": category_stderr_sentence(summary, "accuracy_stderr", "accuracy_stderr_category"),
        # What was computed: the clustered t interval, or the Wilson fallback where every task's share is the same.
        "interval_name": summary.get("ci_method") or interval_name(True),
    }


def run_report_html(doc: Mapping[str, Any]) -> str:
    summary = with_defaults(blank_figures(doc["summary"]), {**FIGURE_DEFAULTS, "complete": True, "by_category": {}})
    summary["by_category"] = {k: with_defaults(v, FIGURE_DEFAULTS) for k, v in summary["by_category"].items()}
    scorer = with_defaults(
        summary.get("scorer") or {},
        {"version": None, "conflict_policy": None, "allow_reasoning_fallback": False, "think_prefilled": False},
    )
    tool = doc.get("tool")
    sampled = is_sampled(summary)
    all_tasks = doc.get("tasks") or []
    if sampled:  # each record is one sample: listed under its task, sample 0 first
        all_tasks = in_sample_order(all_tasks)
    full = in_full(all_tasks)
    tasks = [task_view(t, tool, sampled) for i, t in enumerate(all_tasks) if i in full]
    index_rows = [index_row(t, sampled) for i, t in enumerate(all_tasks) if i not in full]
    verdicts = Counter(verdict_of(t) for t in all_tasks)
    serving = summary.get("serving")
    return render(
        "run.html.j2",
        script=filter_script(),
        doc=with_defaults(doc, {"label": "run", "tool": None, "tool_verdicts": None}),
        scorer_label=SCORER_LABEL,
        # From the summary as written: the defaults below would turn a truncation not recorded (None) into 0.
        truncated=truncated_kpi(doc["summary"]),
        verdict_scopes=verdict_scope_rows(doc["summary"]),
        pooled_note=pooled_verdicts_note(doc["summary"]),
        changed_tasks=[index_row(t) for t in all_tasks if changed(t)],
        says_changed=says_changed(doc),
        index_rows=index_rows,
        task_total=len(all_tasks),
        summary=summary,
        source=with_defaults(
            doc.get("source") or {}, {"path": None, "model": None, "requested_model": None, "origin": None}
        ),
        notices=doc.get("notices") or [],
        scorer=scorer,
        scored=scored(summary),
        sampled=_sampled_view(summary) if sampled else None,
        charts=run_charts(doc),
        type_rows=type_rows(summary),
        type_tables=type_tables(summary),
        breakdowns=[
            ("extraction method", "method", _breakdown(summary.get("by_method") or {})),
            ("found in", "source", _breakdown(summary.get("by_source") or {})),
            ("ambiguity class", "ambiguity", _breakdown(summary.get("by_ambiguity") or {})),
        ],
        resource_rows=_run_resource_rows(doc.get("resources")),
        serving_rows=serving_rows([(str(doc.get("label", "run")), serving)]) if serving else [],
        endpoint_rows=endpoint_rows(serving),
        tasks=tasks,
        settings_rows=settings_rows([(str(doc.get("label", "run")), doc.get("settings") or {})])
        if doc.get("settings")
        else [],
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
