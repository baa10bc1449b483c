"""Each report page's view: a document's figures computed once, for the HTML and the Markdown templates alike.

A view holds figures and the rows of tables (already in the shared words of `wording`), never the words of one
format: each template says them its own way (the HTML page as cards and badges, the Markdown as tables and
lists). What only one format draws is added by its renderer: the charts, the lanes' colours, the tasks' views and
the page script by `html`; each task's evidence in words by `markdown`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ocllm import simulated_words
from ocllm.report.task_views import changed
from ocllm.report.wording import (
    PASS_AT_K_NOTE,
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
    drawn,
    endpoint_rows,
    in_sample_order,
    interval_methods_note,
    interval_name,
    is_sampled,
    partly_recorded,
    pass_at_k_rows,
    pct,
    pooled_verdicts_note,
    prompt_token_rows,
    resolved_rows,
    resolved_sentence,
    resource_rows,
    resource_value,
    samples_per_task,
    says_changed,
    serving_cells,
    serving_recorded_by,
    serving_rows,
    settings_rows,
    share_counts,
    stderr_points,
    task_shares,
    truncated_kpi,
    truncated_text,
    type_detail_rows,
    type_rows,
    type_tables,
    verdict_scope_rows,
    wrong_answers,
)
from ocllm.summary_words import censoring_rows, censoring_words, scored, server_path_rows

# Templates render with StrictUndefined, so that a misspelt field fails loudly in the tests; the fields a
# document may leave out (older writers, a run without resources) get their defaults here instead.
FIGURE_DEFAULTS: dict[str, Any] = {"errors": 0, "truncated": 0, "no_answer": 0, "ci_low": None, "ci_high": None}
COMPARISON_DEFAULTS: dict[str, Any] = {
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
    "pair_tables": [],
}


def with_defaults(figures: Mapping[str, Any], defaults: Mapping[str, Any]) -> dict[str, Any]:
    """`figures` with each of `defaults` it leaves out, or holds as None, filled in."""
    return {**defaults, **{k: v for k, v in figures.items() if v is not None or k not in defaults}}


def comparison_figures(doc: Mapping[str, Any]) -> dict[str, Any]:
    """A comparison document (a whole one, or one of a matrix's) with its defaults, its scopes' too."""
    view = with_defaults(doc, COMPARISON_DEFAULTS)
    for key in ("by_category", "by_type"):
        view[key] = {k: with_defaults(v, {"significant": False}) for k, v in view[key].items()}
    return view


def settings_table(columns: Sequence[tuple[str, Mapping[str, str] | None]]) -> list[tuple[str, list[str], bool]]:
    """The settings table of several runs (wording.settings_rows); none when no run says what it ran with."""
    if not any(settings for _, settings in columns):
        return []
    return settings_rows([(label, settings or {}) for label, settings in columns])


def comparison_page(doc: Mapping[str, Any]) -> dict[str, Any]:
    """A comparison page's view: the document blanked where nothing was paired, and its tables' rows."""
    doc = blank_paired(comparison_figures(doc))
    sides = (doc["a"], doc["b"])
    resources = doc["resources"]
    columns = [(doc["a"]["label"], resources.get("a")), (doc["b"]["label"], resources.get("b"))]
    speed = [(side["label"], side.get("serving")) for side in sides]
    serving_by = serving_recorded_by(speed)
    return {
        "doc": doc,
        "simulated_banner": simulated_words.lanes_banner(
            [(side["label"], side.get("simulated") is True) for side in sides]
        ),
        "notices": doc.get("notices") or [],
        "difference_rows": difference_counts(doc),
        "resource_rows": resource_rows(columns),
        # (figure, the sides that recorded it) for the figures only one side recorded: each template says so.
        "resources_partly_recorded": partly_recorded(columns),
        "serving_recorded_by": serving_by,
        "serving_rows": serving_rows(speed) if serving_by else [],
        "endpoint_tables": [(label, rows) for label, serving in speed if (rows := endpoint_rows(serving))],
        "prompt_token_rows": prompt_token_rows([(side["label"], side.get("prompt_tokens")) for side in sides]),
        "censoring_rows": censoring_rows(doc.get("censoring"), [side["label"] for side in sides]),
        "server_paths_said": (doc.get("server_paths") or {}).get("said"),
        "server_path_rows": server_path_rows(doc.get("server_paths")),
        "settings_rows": settings_table([(side["label"], side.get("settings")) for side in sides]),
        "type_details_rows": type_detail_rows([(side["label"], side.get("type_details")) for side in sides]),
    }


def _heat_rows(lanes: Sequence[Mapping[str, Any]], key: str) -> list[tuple[str, list[dict[str, Any] | None]]]:
    """Each scope of `key` (category or task type), with each lane's figures in it (None: the lane has none)."""
    rows = []
    for scope in sorted({c for lane in lanes for c in (lane.get(key) or {})}):
        cells: list[dict[str, Any] | None] = []
        for lane in lanes:
            f = (lane.get(key) or {}).get(scope)
            cells.append(None if f is None else {**with_defaults(f, FIGURE_DEFAULTS), "scored": scored(f)})
        rows.append((scope, cells))
    return rows


def matrix_page(doc: Mapping[str, Any]) -> dict[str, Any]:
    """A matrix page's view: each lane's figures (blanked where nothing was scored) in leaderboard order, the
    accuracy per category and per task type, and each comparison against the baseline."""
    doc = blank_matrix(doc)
    lanes_in = doc["lanes"]
    lanes = []
    for lane in lanes_in:
        res = lane.get("resources") or {}
        lanes.append(
            {
                **with_defaults(lane, FIGURE_DEFAULTS),
                "k": samples_per_task(lane),
                "wrong": wrong_answers(lane),
                "tokens_p50": resource_value(res.get("completion_tokens"), "p50", True),
                "latency_p50": resource_value(res.get("latency_s"), "p50", False),
                "speed": serving_cells(lane.get("serving")),
                "endpoint_rows": endpoint_rows(lane.get("serving")),
                "simulated": lane.get("simulated") is True,
            }
        )
    comparisons = [
        {
            "doc": comparison_figures(c),
            # Not paired: the tasks only one side ran, and apart from them the requests that failed on either.
            "one_side_only": len(c.get("only_in_a") or []) + len(c.get("only_in_b") or []),
            "failed": len(c.get("unpaired_errors") or []),
            "significant_categories": [
                name for name, f in sorted((c.get("by_category") or {}).items()) if f.get("significant")
            ],
        }
        for c in doc["comparisons"]
    ]
    versions = {c.get("scorer_version") for c in doc["comparisons"]} - {None}
    return {
        "doc": with_defaults(doc, {"folder": "", "baseline": None}),
        "simulated_banner": simulated_words.lanes_banner(
            [(lane["label"], lane.get("simulated") is True) for lane in lanes_in]
        ),
        "notices": doc.get("notices") or [],
        "lanes": lanes,
        "censoring": [(lane["label"], said) for lane in lanes_in if (said := censoring_words(lane))],
        "serving_columns": bool(serving_recorded_by([(lane["label"], lane.get("serving")) for lane in lanes_in])),
        "heat_rows": _heat_rows(lanes_in, "by_category"),
        "type_heat_rows": _heat_rows(lanes_in, "by_type"),
        "comparisons": comparisons,
        "sampled": any(is_sampled(lane) for lane in lanes_in),
        "interval_methods": interval_methods_note(lanes_in),
        "resolved_sentence": resolved_sentence(doc) if comparisons else "",
        "resolved_rows": resolved_rows(doc),
        "scorer_version": ", ".join(sorted(versions)),
        "settings_rows": settings_table([(lane["label"], lane.get("settings")) for lane in lanes_in]),
        "type_details_rows": type_detail_rows([(lane["label"], lane.get("type_details")) for lane in lanes_in]),
    }


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


def _breakdown(counts: Mapping[str, int], by_name: bool) -> list[tuple[str, int, float]]:
    """(name, count, share) by count, most first; ties by name, or in the order recorded (sorted is stable)."""
    total = sum(counts.values()) or 1
    if by_name:
        return [(name, n, n / total) for name, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))]
    return [(name, n, n / total) for name, n in sorted(counts.items(), key=lambda kv: -kv[1])]


def sampled_view(summary: Mapping[str, Any]) -> dict[str, Any]:
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
    every = (summary.get("pass_hat_k") or {}).get(str(k))
    if every is not None:
        figures.append((f"pass^{k}: all {k} samples right", pct(every)))
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
        "agreeing": agreeing_tasks(summary),
        "tasks": len(task_shares(summary)),
        "share_counts": share_counts(summary),
        # What was computed: the clustered t interval, or the Wilson fallback where every task's share is the same.
        "interval_name": summary.get("ci_method") or interval_name(True),
    }




def run_page(doc: Mapping[str, Any]) -> dict[str, Any]:
    """A run page's view: the summary blanked where nothing was scored, with its defaults; the tasks in the order
    the page lists them; the tables' rows."""
    summary = with_defaults(blank_figures(doc["summary"]), {**FIGURE_DEFAULTS, "complete": True, "by_category": {}})
    summary["by_category"] = {k: with_defaults(v, FIGURE_DEFAULTS) for k, v in summary["by_category"].items()}
    scorer = with_defaults(
        summary.get("scorer") or {},
        {"version": None, "conflict_policy": None, "allow_reasoning_fallback": False, "think_prefilled": False},
    )
    sampled = is_sampled(summary)
    as_recorded = drawn(doc.get("tasks") or [])  # each record read into its room's structs once, for every hook
    tasks: list[Mapping[str, Any]] = list(as_recorded)
    if sampled:  # each record is one sample: listed under its task, sample 0 first
        tasks = in_sample_order(tasks)
    serving = summary.get("serving")
    label = str(doc.get("label", "run"))
    breakdowns = {
        key: {
            # The HTML page breaks ties by name, the Markdown keeps the order the summary recorded them in.
            "by_count_then_name": _breakdown(counts, by_name=True),
            "by_count_as_recorded": _breakdown(counts, by_name=False),
        }
        for key, counts in (
            ("method", summary.get("by_method") or {}),
            ("source", summary.get("by_source") or {}),
            ("ambiguity", summary.get("by_ambiguity") or {}),
        )
    }
    return {
        "doc": with_defaults(doc, {"label": "run", "tool": None, "tool_verdicts": None}),
        # A document written before runs said whether they were simulated has no such field: no banner.
        "simulated_banner": simulated_words.run_banner() if doc.get("simulated") is True else None,
        # The title of the Markdown report: a document without a label shows none there.
        "label_as_given": doc.get("label"),
        "summary": summary,
        "scorer": scorer,
        "scored": scored(summary),
        "source": with_defaults(
            doc.get("source") or {}, {"path": None, "model": None, "requested_model": None, "origin": None}
        ),
        "notices": doc.get("notices") or [],
        # From the summary as written: the defaults above would turn a truncation not recorded (None) into 0.
        "truncated": truncated_kpi(doc["summary"]),
        "truncated_text": truncated_text(doc["summary"]),
        "censoring": censoring_words(doc["summary"]),
        "verdict_scopes": verdict_scope_rows(doc["summary"]),
        "pooled_note": pooled_verdicts_note(doc["summary"]),
        "says_changed": says_changed(doc),
        "tasks": tasks,
        # A decision the scorer changed from the input's verdict: in the order listed, and as the document holds them.
        "changed_tasks": [t for t in tasks if changed(t)],
        "changed_as_recorded": [t for t in as_recorded if changed(t)],
        "failed_tasks": [t for t in tasks if t.get("error")],
        "sampled": sampled_view(summary) if sampled else None,
        "type_rows": type_rows(summary),
        "type_tables": type_tables(summary),
        "breakdowns": breakdowns,
        "resource_distribution_rows": _run_resource_rows(doc.get("resources")),
        "prompt_token_rows": prompt_token_rows([(label, summary.get("prompt_tokens"))]),
        "resource_rows": resource_rows([(label, doc["resources"])]) if doc.get("resources") else [],
        "serving_rows": serving_rows([(label, serving)]) if serving else [],
        "endpoint_rows": endpoint_rows(serving),
        "settings_rows": settings_table([(label, doc.get("settings"))]),
    }
