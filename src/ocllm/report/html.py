"""The reports as single self-contained HTML pages: inline CSS, inline SVG charts, no request of any kind.

Templates are rendered with autoescaping on for every template, and nothing that came from a model or a
file is ever marked safe: the only `Markup` values handed to a template are the chart SVGs drawn here
(matplotlib escapes the labels in them) and the page's own filter script. A Content-Security-Policy
meta tag forbids every fetch and admits only that script (by hash), so even a mistake in escaping would
leave injected markup inert.
"""

from __future__ import annotations

import base64
import hashlib
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from typing import Any

import jinja2
from markupsafe import Markup
from markupsafe import escape as markupsafe_escape

from ocllm import __version__
from ocllm.models import token_counts
from ocllm.report import charts
from ocllm.report.charts import Difference, Estimate, LaneAccuracy
from ocllm.report.format import (
    AGREEMENT_NOTE,
    ENDPOINT_HEADER,
    PASS_AT_K_NOTE,
    RESOLVED_HEADER,
    RESOLVED_NOTE,
    RESOURCE_FIGURES,
    SAMPLED_INTERVALS,
    SERVING_MISSING,
    SERVING_NOTE,
    accuracy_name,
    agreeing_tasks,
    blank_figures,
    blank_matrix,
    blank_paired,
    category_stderr_larger,
    category_stderr_sentence,
    chance_text,
    comparison_sampled,
    correct_of,
    count,
    diff_interval_name,
    diff_intervals_name,
    difference_counts,
    endpoint_rows,
    evidence_lines,
    expected_text,
    extracted_text,
    in_sample_order,
    interval,
    interval_methods_note,
    interval_name,
    intervals_name,
    is_sampled,
    mde_sentence,
    p_value,
    partly_recorded,
    pass_at_k_rows,
    pct,
    points,
    points_interval,
    pooled_verdicts_note,
    rank_of,
    resolved_rows,
    resolved_sentence,
    resource_rows,
    resource_value,
    samples_per_task,
    says_changed,
    scored,
    seconds,
    serving_cells,
    serving_recorded_by,
    serving_rows,
    settings_rows,
    share_text,
    stderr_points,
    task_shares,
    test_header,
    test_p,
    test_text,
    truncated_kpi,
    type_detail_rows,
    type_rows,
    type_tables,
    verdict_of,
    verdict_scope_rows,
    wrong_answers,
)
from ocllm.scoring import task_types
from ocllm.scoring.mcq.option_letters import option_letter
from ocllm.verdict_words import SCORER_LABEL


@dataclass(frozen=True)
class ChartView:
    """A chart as the template shows it: an SVG, or a short note saying why there is none."""

    key: str  # the figure's data-chart attribute
    title: str
    caption: str = ""
    svg: Markup | None = None
    note: str | None = None
    wide: bool = False  # spans the whole row of the chart grid


@dataclass(frozen=True)
class Segment:
    """A stretch of raw model text; `index` is the candidate statement it belongs to, if any."""

    text: str
    index: int | None = None
    deciding: bool = False


@dataclass(frozen=True)
class Tag:
    text: str
    warn: bool = False


@dataclass(frozen=True)
class CandidateView:
    kind: str
    method: str
    region: str
    letters: list[str]
    text: str
    deciding: bool
    tags: list[Tag] = field(default_factory=list)
    stated: str | None = None  # a statement of a value, not a letter (math): the value, and its normal form


# A few lines of progressive enhancement, shipped as templates/filter.js: the page is complete without them
# (every task is listed, and <details> opens without script). They only filter the list; model text is read
# via dataset, never written as HTML.
@lru_cache(maxsize=1)
def filter_script() -> str:
    """The run page's filter script, read once from the package. It is inlined exactly as returned here, and
    the Content-Security-Policy hash is computed from the same string."""
    return resources.files("ocllm.report").joinpath("templates", "filter.js").read_text(encoding="utf-8")


def _script_hash(script: str) -> str:
    digest = hashlib.sha256(script.encode("utf-8")).digest()
    return "'sha256-" + base64.b64encode(digest).decode("ascii") + "'"


@lru_cache(maxsize=1)
def environment() -> jinja2.Environment:
    # autoescape=True rather than select_autoescape: the templates end in .html.j2, which the
    # extension-based helper would not recognise as HTML.
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("ocllm.report", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
    )
    env.filters.update(
        pct=pct,
        points=points,
        p_value=p_value,
        count=count,
        seconds=seconds,
        breakable=breakable,
        scored=scored,
        share=share_text,
        stderr=stderr_points,
    )
    env.globals.update(
        interval=interval,
        points_interval=points_interval,
        rank_of=rank_of,
        correct_of=correct_of,
        # The words of repeated samples (format.py): which test, which interval, what could not be detected.
        sampled_comparison=comparison_sampled,
        test_text=test_text,
        test_header=test_header,
        test_p=test_p,
        diff_interval_name=diff_interval_name,
        mde_sentence=mde_sentence,
        category_stderr_sentence=category_stderr_sentence,
        version=__version__,
        serving_note=SERVING_NOTE,
        serving_missing=SERVING_MISSING,
        endpoint_header=ENDPOINT_HEADER,
    )
    return env


def breakable(name: object) -> Markup:
    """A snake_case name that may wrap after its underscores (escaped first, so it stays text)."""
    return Markup(str(markupsafe_escape(str(name))).replace("_", "_<wbr>"))


def _render(template: str, *, script: str | None = None, **context: Any) -> str:
    return (
        environment()
        .get_template(template)
        .render(
            script=Markup(script) if script else None,
            script_source=_script_hash(script) if script else "'none'",
            **context,
        )
    )


# --- Charts -------------------------------------------------------------------------------------------


def _estimate(figures: Mapping[str, Any], prefix: str = "") -> Estimate | None:
    """The accuracy and interval to draw; None where nothing was measured (format.blank_figures): no bar."""
    if figures.get(f"{prefix}accuracy") is None:
        return None
    value = float(figures[f"{prefix}accuracy"])
    low = figures.get(f"{prefix}ci_low")
    high = figures.get(f"{prefix}ci_high")
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
        svg = charts.distribution_chart(
            series, xlabel=xlabel, integer=integer, key=key, width=width, colours=colours
        )
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
    return ChartView(
        "category-accuracy",
        title,
        caption + _chance_caption(chance),
        Markup(charts.category_chart(categories, series, width=width, chance=chance, colours=colours)),
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
            ChartView(
                "pass-at-k",
                "pass@k and maj@k",
                f" pass@j for j = 1 to {k}: the chance that one of j samples of a task is right; ◆ maj@{k}, the share "
                f"of tasks whose gold answer is strictly the most frequent of their {k} samples.",
                Markup(charts.pass_at_k_chart(curve, majority, k, fill=fill)),
            )
        )
    else:
        views.append(ChartView("pass-at-k", "pass@k and maj@k", note="Not drawn: no task has a scored sample."))
    shares = task_shares(summary)
    if shares:
        views.append(
            ChartView(
                "task-agreement",
                "Share of samples correct per task",
                f" {agreeing_tasks(summary)} of {len(shares)} tasks gave the same answer in every sample. "
                f"{AGREEMENT_NOTE} Dashed line: the mean share over tasks (pass@1).",
                Markup(
                    charts.share_histogram(
                        shares,
                        steps=k,
                        low=0.0,
                        xlabel="share of a task's samples correct (%)",
                        key="task-agreement",
                        fill=fill,
                        mean=sum(shares) / len(shares),
                    )
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
        ChartView(
            "accuracy",
            "Accuracy per lane",
            f"On the {n} tasks both lanes answered; bars are 95% {intervals_name(sampled)}." + _chance_caption(chance),
            Markup(charts.accuracy_chart(lanes, chance=chance)),
        )
    ]
    by_cat = {name: c for name, c in (doc.get("by_category") or {}).items() if c.get("n_paired")}
    rows = [
        Difference(
            f"all tasks ({n})",
            Estimate(doc["diff"], doc["diff_ci_low"], doc["diff_ci_high"]),
            bool(doc.get("significant")),
        )
    ]
    rows += [
        Difference(
            f"{name} ({c['n_paired']})",
            Estimate(c["diff"], c["diff_ci_low"], c["diff_ci_high"]),
            bool(c.get("significant")),
        )
        for name, c in sorted(by_cat.items())
    ]
    views.append(
        ChartView(
            "difference",
            f"Difference, {b} − {a}",
            f"In percentage points, with 95% {diff_intervals_name(doc)}; coloured where significant.",
            Markup(charts.difference_chart(rows, xlabel=f"accuracy difference (points; > 0: {b} better)")),
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
            ChartView(
                "task-differences",
                f"Per-task difference, {b} − {a}",
                f" Each of the {len(differences)} paired tasks' share of correct samples on {b} minus {a}'s, in "
                "percentage points; dashed line: their mean, the difference the t test is of.",
                Markup(
                    charts.share_histogram(
                        differences,
                        steps=k,
                        low=-1.0,
                        xlabel=f"difference of shares correct (points; > 0: {b} better)",
                        key="task-differences",
                        fill=colours[b],
                        mean=float(doc["diff"]),
                    )
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
            ChartView(
                "accuracy",
                "Accuracy per lane",
                f"Best first; bars are {bars}."
                + (" Lanes not ranked are not drawn." if any(lane.get("not_ranked") for lane in lanes) else "")
                + _chance_caption(chance),
                Markup(charts.accuracy_chart(rows, chance=chance)),
            )
        ]
    comparisons = doc.get("comparisons") or []
    diffs = []
    if comparisons:
        diffs = [
            Difference(
                c["b"]["label"], Estimate(c["diff"], c["diff_ci_low"], c["diff_ci_high"]), bool(c.get("significant"))
            )
            for c in comparisons
            if c.get("diff") is not None
        ]
    if diffs:
        views.append(
            ChartView(
                "difference",
                f"Difference from the baseline ({doc.get('baseline')})",
                f"In percentage points on paired tasks, with 95% {diff_intervals_name(comparisons[0])}; "
                "coloured where significant.",
                Markup(charts.difference_chart(diffs, xlabel="accuracy difference from the baseline (points)")),
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


# --- Run report ---------------------------------------------------------------------------------------


def segments(text: str, spans: Sequence[tuple[int, int, int]], decided: int | None) -> list[Segment]:
    """Split `text` into plain stretches and the statements found in it (start, end, candidate index).
    Spans that fall outside the text or overlap an earlier one are left unmarked rather than trusted."""
    out: list[Segment] = []
    pos = 0
    for start, end, index in sorted(spans):
        if start < pos or end <= start or end > len(text):
            continue
        if start > pos:
            out.append(Segment(text[pos:start]))
        out.append(Segment(text[start:end], index, index == decided))
        pos = end
    if pos < len(text):
        out.append(Segment(text[pos:]))
    return out


def _candidate_view(c: Mapping[str, Any], deciding: bool) -> CandidateView:
    tags = []
    if c.get("hedged"):
        tags.append(Tag("hedged", warn=True))
    if c.get("out_of_range"):
        tags.append(Tag("out of range", warn=True))
    if c.get("placeholder"):
        tags.append(Tag("placeholder echo", warn=True))
    # A statement names letters (MCQ), or states a value (math: `value`, with its normal form beside it).
    stated = None
    if "letters" not in c and c.get("value") is not None:
        normal = c.get("normalised")
        stated = str(c["value"]) + (f" → {normal}" if normal is not None and normal != c["value"] else "")
    elif c.get("value") is not None:
        tags.append(Tag(f"value {c['value']}"))
    if c.get("field") and c.get("field") != c.get("region"):
        tags.append(Tag(f"in the {c['field']} field"))
    tags += [Tag(str(r)) for r in c.get("reading") or []]
    return CandidateView(
        kind=str(c.get("kind", "?")),
        method=str(c.get("method", "?")),
        region=str(c.get("region", "?")),
        letters=[str(x) for x in c.get("letters") or ([c["letter"]] if c.get("letter") else [])],
        text=str(c.get("text", "")),
        deciding=deciding,
        tags=tags,
        stated=stated,
    )


def _usage_facts(usage: Mapping[str, Any] | None) -> list[tuple[str, str]]:
    if not isinstance(usage, Mapping):
        return []
    facts = []
    for key in ("prompt_tokens", "completion_tokens"):
        if isinstance(usage.get(key), int):
            facts.append((key.replace("_", " "), count(usage[key])))
    _, reasoning = token_counts(dict(usage))
    if reasoning is not None:
        facts.append(("reasoning tokens", count(reasoning)))
    return facts


def _options(task: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The options with their letters; the expected one, and a wrong pick, marked."""
    expected = task.get("expected_answer")
    picked = task.get("extracted_final_answer")
    out = []
    for i, text in enumerate(task.get("options") or []):
        letter = option_letter(i) if i < 26 else str(i + 1)
        out.append(
            {
                "letter": letter,
                "text": str(text),
                "expected": letter == expected,
                "wrong_pick": letter == picked and picked != expected,
            }
        )
    return out


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


def _changed(task: Mapping[str, Any]) -> bool:
    previous = task.get("previous") or {}
    return isinstance(previous.get("correct"), bool) and previous["correct"] != task.get("correct")


def _text_scored_by(task: Mapping[str, Any]) -> str | None:
    name = task.get("task_type")
    known = task_types.TASK_TYPES.get(name) if isinstance(name, str) else None
    return known.label if known is not None and not known.extracts_answer else None


def task_view(task: Mapping[str, Any], tool: str | None = None, sampled: bool = False) -> dict[str, Any]:
    """Everything the per-task view shows, as plain values (the template escapes them). `tool`: the other tool
    whose verdict `previous` holds (rescore --from), else the input's; `sampled`: the run asked each task several
    times, and the record is one sample (its index is shown)."""
    raw_candidates = task.get("candidates") or []
    decided = task.get("decided_by")
    candidates = [_candidate_view(c, i == decided) for i, c in enumerate(raw_candidates)]
    content = task.get("raw_content") or ""
    reasoning = task.get("raw_reasoning") or ""

    def spans(field_name: str) -> list[tuple[int, int, int]]:
        return [
            (int(c["start"]), int(c["end"]), i)
            for i, c in enumerate(raw_candidates)
            if c.get("field") == field_name and isinstance(c.get("start"), int) and isinstance(c.get("end"), int)
        ]

    verdict = verdict_of(task)
    expected, extracted = expected_text(task), extracted_text(task)
    facts: list[tuple[str, str]] = [
        ("expected", expected),
        ("extracted", extracted),
        ("found in", str(task.get("extraction_source") or "—")),
        ("method", str(task.get("extraction_method") or "—")),
        ("ambiguity", str(task.get("ambiguity") or "—")),
        ("finish reason", str(task.get("finish_reason") or "—")),
    ]
    if task.get("missing_substrings"):
        facts.append(("missing substrings", ", ".join(map(str, task["missing_substrings"]))))
    facts += evidence_lines(task)
    facts += _usage_facts(task.get("usage"))
    if isinstance(task.get("latency_s"), int | float):
        facts.append(("latency", seconds(float(task["latency_s"]))))
    previous = task.get("previous") or {}
    if isinstance(previous.get("correct"), bool):
        was = "correct" if previous["correct"] else "wrong"
        whose = f"{tool}'s verdict" if tool else "input's verdict"
        facts.append((whose, f"{was} (extracted {previous.get('extracted_final_answer') or '—'})"))
    task_id = str(task.get("task_id", ""))
    category = str(task.get("category", ""))
    search = " ".join(
        [
            task_id,
            category,
            expected,
            extracted,
            str(task.get("extraction_method") or ""),
            str(task.get("ambiguity") or ""),
            str(task.get("rule") or ""),
            verdict,
        ]
    ).lower()
    return {
        "id": task_id,
        "sample": int(task.get("sample") or 0) if sampled else None,
        "type": task.get("task_type"),
        # A type whose whole text is the answer finds no statements: the page says what scores it instead.
        "scored_by": _text_scored_by(task),
        "category": category,
        "verdict": verdict,
        "expected": expected,
        "extracted": extracted,
        "method": str(task.get("extraction_method") or "—"),
        "ambiguity": str(task.get("ambiguity") or "—"),
        "truncated": bool(task.get("truncated")),
        "changed": _changed(task),
        "rule": str(task.get("rule") or "—"),
        "reason": str(task.get("reason") or ""),
        "error": task.get("error"),
        "facts": facts,
        "prompt": task.get("prompt") or "",
        "options": _options(task),
        "content": segments(content, spans("content"), decided),
        "reasoning": segments(reasoning, spans("reasoning"), decided),
        "reasoning_chars": len(reasoning),
        "reasoning_statements": sum(c.get("field") == "reasoning" for c in raw_candidates),
        "candidates": candidates,
        "search": search,
    }


# A run page shows at most this many tasks with their whole evidence (prompt, output, statements); the rest
# are one row each of a plain table. Every task's evidence was 70 MB of HTML for 12,000 MMLU-Pro tasks, a page
# a browser takes a minute to open; the evidence of every task stays in the run's JSON document.
FULL_EVIDENCE = 300


def _evidence_rank(task: Mapping[str, Any]) -> int:
    """Which tasks a large run's page shows in full first: the decisions that changed, failed requests,
    truncated and ambiguous answers, then the other tasks not answered correctly."""
    if _changed(task):
        return 0
    if task.get("error"):
        return 1
    if task.get("truncated"):
        return 2
    if task.get("ambiguity") not in (None, "none"):
        return 3
    return 4 if task.get("correct") is not True else 5


def _in_full(tasks: Sequence[Mapping[str, Any]]) -> set[int]:
    """The indexes of the tasks shown with their whole evidence: all of a run of FULL_EVIDENCE tasks or fewer."""
    if len(tasks) <= FULL_EVIDENCE:
        return set(range(len(tasks)))
    ranked = sorted(range(len(tasks)), key=lambda i: (_evidence_rank(tasks[i]), i))
    return set(ranked[:FULL_EVIDENCE])


def _index_row(task: Mapping[str, Any], sampled: bool = False) -> dict[str, Any]:
    """A task as one row of the compact table: what it was asked, what was read, how, and the verdict."""
    previous = task.get("previous") or {}
    return {
        "id": str(task.get("task_id", "")),
        "sample": int(task.get("sample") or 0) if sampled else None,
        "category": str(task.get("category", "")),
        "verdict": verdict_of(task),
        "expected": expected_text(task),
        "extracted": extracted_text(task),
        "how": f"{task.get('extraction_method') or '—'} · {task.get('ambiguity') or '—'}",
        "truncated": bool(task.get("truncated")),
        "changed": _changed(task),
        "reason": str(task.get("reason") or ""),
        "previous_verdict": "correct" if previous.get("correct") else "wrong",
        "previous_extracted": str(previous.get("extracted_final_answer") or "—"),
    }


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
    in_full = _in_full(all_tasks)
    tasks = [task_view(t, tool, sampled) for i, t in enumerate(all_tasks) if i in in_full]
    index_rows = [_index_row(t, sampled) for i, t in enumerate(all_tasks) if i not in in_full]
    verdicts = Counter(verdict_of(t) for t in all_tasks)
    serving = summary.get("serving")
    return _render(
        "run.html.j2",
        script=filter_script(),
        doc=_with_defaults(doc, {"label": "run", "tool": None, "tool_verdicts": None}),
        scorer_label=SCORER_LABEL,
        # From the summary as written: the defaults below would turn a truncation not recorded (None) into 0.
        truncated=truncated_kpi(doc["summary"]),
        verdict_scopes=verdict_scope_rows(doc["summary"]),
        pooled_note=pooled_verdicts_note(doc["summary"]),
        changed_tasks=[_index_row(t) for t in all_tasks if _changed(t)],
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
    return _render(
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
    return _render(
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
