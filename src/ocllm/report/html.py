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
from ocllm.report.task_views import changed, in_full, index_row, task_view
from ocllm.report.wording import (
    PASS_AT_K_NOTE,
    RESOLVED_HEADER,
    RESOLVED_NOTE,
    RESOURCE_FIGURES,
    accuracy_name,
    agreeing_tasks,
    blank_figures,
    blank_matrix,
    blank_paired,
    category_stderr_larger,
    category_stderr_sentence,
    count,
    difference_counts,
    endpoint_rows,
    in_sample_order,
    interval_methods_note,
    interval_name,
    is_sampled,
    partly_recorded,
    pass_at_k_rows,
    pct,
    pooled_verdicts_note,
    resolved_rows,
    resolved_sentence,
    resource_rows,
    resource_value,
    samples_per_task,
    says_changed,
    scored,
    serving_cells,
    serving_recorded_by,
    serving_rows,
    settings_rows,
    stderr_points,
    task_shares,
    truncated_kpi,
    type_detail_rows,
    type_rows,
    type_tables,
    verdict_of,
    verdict_scope_rows,
    wrong_answers,
)
from ocllm.verdict_words import SCORER_LABEL


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


# Templates render with StrictUndefined, so that a misspelt field fails loudly in the tests; the fields a
# document may leave out (older writers, a run without resources) get their defaults here instead.
_FIGURE_DEFAULTS: dict[str, Any] = {"errors": 0, "truncated": 0, "no_answer": 0, "ci_low": None, "ci_high": None}
_COMPARISON_DEFAULTS: dict[str, Any] = {
    "a_no_answer": 0,
    "b_no_answer": 0,
    "chance": None,
    "scorer_version": None,
    "rescored": False,
    "significant": False,
    "only_in_a": [],
    "only_in_b": [],
    "unpaired_errors": [],
    "by_category": {},
    "by_type": {},
    "flips": [],
    "resources": {},
}


def _with_defaults(figures: Mapping[str, Any], defaults: Mapping[str, Any]) -> dict[str, Any]:
    return {**defaults, **{k: v for k, v in figures.items() if v is not None or k not in defaults}}


def _heat_rows(lanes: Sequence[Mapping[str, Any]], key: str) -> list[tuple[str, list[dict[str, Any] | None]]]:
    """Each scope of `key` (category or task type), with each lane's figures in it (None: the lane has none)."""
    rows = []
    for scope in sorted({c for lane in lanes for c in (lane.get(key) or {})}):
        cells: list[dict[str, Any] | None] = []
        for lane in lanes:
            f = (lane.get(key) or {}).get(scope)
            cells.append(None if f is None else {**_with_defaults(f, _FIGURE_DEFAULTS), "scored": scored(f)})
        rows.append((scope, cells))
    return rows


def _comparison_view(doc: Mapping[str, Any]) -> dict[str, Any]:
    view = _with_defaults(doc, _COMPARISON_DEFAULTS)
    for key in ("by_category", "by_type"):
        view[key] = {k: _with_defaults(v, {"significant": False}) for k, v in view[key].items()}
    return view


def run_report_html(doc: Mapping[str, Any]) -> str:
    summary = _with_defaults(blank_figures(doc["summary"]), {**_FIGURE_DEFAULTS, "complete": True, "by_category": {}})
    summary["by_category"] = {k: _with_defaults(v, _FIGURE_DEFAULTS) for k, v in summary["by_category"].items()}
    scorer = _with_defaults(
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
        doc=_with_defaults(doc, {"label": "run", "tool": None, "tool_verdicts": None}),
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
        source=_with_defaults(
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


def _resource_notes(columns: Sequence[tuple[str, Mapping[str, Any] | None]]) -> list[str]:
    return [
        f"Only {', '.join(have)} recorded {name}; the other side shows “not recorded”."
        for name, have in partly_recorded(columns)
    ]


def _serving_notes(columns: Sequence[tuple[str, Mapping[str, Any] | None]]) -> list[str]:
    have = serving_recorded_by(columns)
    if not have or len(have) == len(columns):
        return []
    return [f"Only {', '.join(have)} recorded serving figures; the other side shows “not recorded”."]


def _settings_rows(columns: Sequence[tuple[str, Mapping[str, str] | None]]) -> list[tuple[str, list[str], bool]]:
    """The settings table of several runs; none when no run says what it ran with."""
    if not any(settings for _, settings in columns):
        return []
    return settings_rows([(label, settings or {}) for label, settings in columns])


def comparison_html(doc: Mapping[str, Any]) -> str:
    doc = blank_paired(_comparison_view(doc))
    lane_colours = charts.lane_colours([doc["a"]["label"], doc["b"]["label"]])
    resources = doc["resources"]
    columns = [(doc["a"]["label"], resources.get("a")), (doc["b"]["label"], resources.get("b"))]
    sides = (doc["a"], doc["b"])
    speed = [(side["label"], side.get("serving")) for side in sides]
    return render(
        "comparison.html.j2",
        doc=doc,
        difference_rows=difference_counts(doc),
        notices=doc.get("notices") or [],
        colours=[lane_colours[doc["a"]["label"]], lane_colours[doc["b"]["label"]]],
        charts=comparison_charts(doc),
        unpaired=[
            (f"Only in {doc['a']['label']}", doc.get("only_in_a") or []),
            (f"Only in {doc['b']['label']}", doc.get("only_in_b") or []),
            ("Failed on either side", doc.get("unpaired_errors") or []),
        ],
        resource_rows=resource_rows(columns),
        resource_notes=_resource_notes(columns),
        serving_rows=serving_rows(speed) if serving_recorded_by(speed) else [],
        serving_notes=_serving_notes(speed),
        endpoint_tables=[(label, rows) for label, serving in speed if (rows := endpoint_rows(serving))],
        settings_rows=_settings_rows([(side["label"], side.get("settings")) for side in sides]),
        type_details_rows=type_detail_rows([(side["label"], side.get("type_details")) for side in sides]),
    )


def matrix_html(doc: Mapping[str, Any]) -> str:
    doc = blank_matrix(doc)
    lanes_in = doc.get("lanes") or []
    # By name, not rank: the colour a lane has on its run and comparison pages (charts.lane_colours).
    colours = charts.lane_colours(lane["label"] for lane in lanes_in)
    lanes = []
    for lane in lanes_in:
        res = lane.get("resources") or {}
        lanes.append(
            {
                **_with_defaults(lane, _FIGURE_DEFAULTS),
                "k": samples_per_task(lane),
                "colour": colours[lane["label"]],
                "wrong": wrong_answers(lane),
                "tokens_p50": resource_value(res.get("completion_tokens"), "p50", True),
                "latency_p50": resource_value(res.get("latency_s"), "p50", False),
                "speed": serving_cells(lane.get("serving")),
                "endpoint_rows": endpoint_rows(lane.get("serving")),
            }
        )
    heat_rows, type_heat_rows = _heat_rows(lanes_in, "by_category"), _heat_rows(lanes_in, "by_type")
    comparisons = [
        {
            "doc": _comparison_view(c),
            "colour_a": colours.get(c["a"]["label"], charts.colour(0)),
            "colour_b": colours.get(c["b"]["label"], charts.colour(1)),
            "unpaired": sum(len(c.get(key) or []) for key in ("only_in_a", "only_in_b", "unpaired_errors")),
        }
        for c in doc.get("comparisons") or []
    ]
    versions = {c.get("scorer_version") for c in doc.get("comparisons") or []} - {None}
    return render(
        "matrix.html.j2",
        doc=_with_defaults(doc, {"folder": "", "baseline": None}),
        notices=doc.get("notices") or [],
        lanes=lanes,
        serving_columns=bool(serving_recorded_by([(lane["label"], lane.get("serving")) for lane in lanes_in])),
        charts=matrix_charts(doc),
        heat_rows=heat_rows,
        type_heat_rows=type_heat_rows,
        comparisons=comparisons,
        sampled=any(is_sampled(lane) for lane in lanes_in),
        interval_methods=interval_methods_note(lanes_in),
        resolved_sentence=resolved_sentence(doc) if comparisons else "",
        resolved_header=RESOLVED_HEADER,
        resolved_rows=resolved_rows(doc),
        resolved_note=RESOLVED_NOTE,
        scorer_version=", ".join(sorted(versions)),
        settings_rows=_settings_rows([(lane["label"], lane.get("settings")) for lane in lanes_in]),
        type_details_rows=type_detail_rows([(lane["label"], lane.get("type_details")) for lane in lanes_in]),
    )
