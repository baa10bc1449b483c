"""The reports as Markdown: readable in a terminal as plain text, and rendered as tables on GitHub.

Any text that came from a model or a file (task ids, categories, labels, answers) goes through `cell`
before it reaches a table, so it can neither break the table (`|`, newlines) nor become markup
(`<`, `>`, `&`, emphasis, links, code spans).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ocllm.analysis.audit import SCORER_LABEL
from ocllm.report.markdown_escaping import cell
from ocllm.report.markdown_escaping import table as _table
from ocllm.report.markdown_rendering import render, render_macro
from ocllm.report.page_views import comparison_page, matrix_page
from ocllm.report.wording import (
    AGREEMENT_NOTE,
    ENDPOINT_HEADER,
    PASS_AT_K_NOTE,
    SERVING_MISSING,
    SERVING_NOTE,
    accuracy_name,
    agreeing_tasks,
    blank_figures,
    blank_paired,
    category_stderr_larger,
    category_stderr_sentence,
    comparison_sampled,
    endpoint_rows,
    evidence_lines,
    expected_text,
    extracted_text,
    in_sample_order,
    interval,
    interval_name,
    is_sampled,
    pass_at_k_rows,
    pct,
    pooled_verdicts_note,
    resource_rows,
    samples_per_task,
    says_changed,
    scored,
    serving_recorded_by,
    serving_rows,
    settings_rows,
    share_counts,
    stderr_points,
    test_text,
    truncated_text,
    type_detail_rows,
    type_rows,
    type_tables,
    verdict_of,
    verdict_scope_rows,
    wrong_answers,
)


def notices_md(doc: Mapping[str, Any]) -> list[str]:
    """The document's notices (a run never finished, requests failed, every answer cut off...), as the
    first thing under the title: a reader must see them before any figure."""
    notices = doc.get("notices") or []
    if not notices:
        return []
    # Long enough for a notice with its advice (a dropped-calls notice is ~800 characters); a server's error text
    # quoted in one is still cut.
    return [*(f"> **⚠ {cell(n, 1200)}**  " for n in notices), ""]


def _completeness(summary: Mapping[str, Any]) -> str:
    if summary.get("complete", True):
        return "yes"
    missing, in_suite = summary.get("missing"), summary.get("tasks_in_suite")
    return f"**no: {missing} of {in_suite} tasks never ran**" if missing else "**no**"


def _on_off(flag: object) -> str:
    return "on" if flag else "off"


def _verdict_md(verdict: str) -> str:
    return {
        "correct": "✓ correct",
        "wrong": "**✗ wrong**",
        "no-answer": "**∅ no answer**",
        "error": "⚠ error",
        "unscored": "· unscored",
    }[verdict]


def _counts_table(title: str, key: str, counts: Mapping[str, int]) -> list[str]:
    total = sum(counts.values()) or 1
    rows = [[cell(name), str(n), pct(n / total)] for name, n in sorted(counts.items(), key=lambda kv: -kv[1])]
    return [f"### {title}", "", *_table([key, "tasks", "share"], rows, "lrr"), ""]


def _resources_table(columns: Sequence[tuple[str, Mapping[str, Any] | None]]) -> list[str]:
    header = ["figure", *[cell(label) for label, _ in columns]]
    return _table(header, resource_rows(columns), "l" + "r" * len(columns))


def _serving_table(columns: Sequence[tuple[str, Mapping[str, Any] | None]]) -> list[str]:
    header = ["figure", *[cell(label) for label, _ in columns]]
    return _table(header, serving_rows(columns), "l" + "r" * len(columns))


def _endpoints_table(serving: Mapping[str, Any] | None) -> list[str]:
    """Each replica of a lane served by several; nothing for a lane with one."""
    rows = [[cell(row[0], 200), *row[1:]] for row in endpoint_rows(serving)]
    return _table(list(ENDPOINT_HEADER), rows, "lrrrr") if rows else []


def _serving_section(columns: Sequence[tuple[str, Mapping[str, Any] | None]]) -> list[str]:
    """How fast each run was served, side by side, then each one's replicas; nothing when none recorded it."""
    have = serving_recorded_by(columns)
    if not have:
        return []
    lines = ["## Serving", "", SERVING_NOTE, "", *_serving_table(columns), ""]
    if len(columns) > 1 and len(have) < len(columns):
        lines += [f"- Only {', '.join(cell(h) for h in have)} recorded serving figures.", ""]
    for label, serving in columns:
        endpoints = _endpoints_table(serving)
        if endpoints:
            title = "Per endpoint" if len(columns) == 1 else f"Per endpoint: {cell(label)}"
            lines += [f"### {title}", "", *endpoints, ""]
    return lines


def _settings_section(columns: Sequence[tuple[str, Mapping[str, str] | None]]) -> list[str]:
    """What each run ran with, the settings that differ first; nothing when no run says."""
    if not any(settings for _, settings in columns):
        return []
    rows = [
        [f"**{cell(name)}** (differs)" if differs else cell(name), *[cell(v, 200) for v in values]]
        for name, values, differs in settings_rows([(label, settings or {}) for label, settings in columns])
    ]
    header = ["setting", *[cell(label) for label, _ in columns]]
    return ["## Settings", "", *_table(header, rows), ""]


# --- Run report ---------------------------------------------------------------------------------------


def run_report_markdown(doc: Mapping[str, Any]) -> str:
    summary = blank_figures(doc["summary"])
    scorer = summary.get("scorer") or {}
    source = doc.get("source") or {}
    n_scored = scored(summary)
    lines = [f"# Run report: {cell(doc.get('label'))}", "", *notices_md(doc)]
    facts = []
    if source.get("model"):
        facts.append(f"Model: {cell(source['model'])}")
        requested = source.get("requested_model")
        if requested and requested != source["model"]:
            facts.append(f"the lane asked for {cell(requested)}")
    if source.get("path"):
        facts.append(f"source: {cell(source['path'], 200)}")
    tool = doc.get("tool")
    if tool and source.get("origin") and source.get("origin") != source.get("path"):
        facts.append(f"{cell(tool)} results read from {cell(source['origin'], 200)}")
    if facts:
        lines += ["; ".join(facts) + ".", ""]
    ci = interval(summary.get("ci_low"), summary.get("ci_high"))
    if not n_scored:  # nothing scored: no accuracy, no interval (never "0.0% (0/0)")
        headline = f"**Accuracy n/a**: no task was scored ({summary.get('errors', 0)} failed request(s))."
    elif is_sampled(summary):
        headline = (
            f"**{accuracy_name(summary)} {pct(summary['accuracy'])}** ({summary['correct']}/{n_scored} scored "
            f"samples of {summary.get('tasks_scored', 0)} tasks, {samples_per_task(summary)} per task; "
            f"95% {summary.get('ci_method') or interval_name(True)} {ci})."
        )
    else:
        headline = (
            f"**Accuracy {pct(summary['accuracy'])}** ({summary['correct']}/{n_scored} scored tasks; "
            f"95% Wilson interval {ci})."
        )
    lines += [
        headline,
        "",
        *_table(
            ["figure", "value"],
            [
                # With k samples per task each record is a sample: counted as such.
                ["samples" if summary.get("samples_per_task", 1) > 1 else "tasks", str(summary["total"])],
                ["correct", str(summary["correct"])],
                ["wrong", str(wrong_answers(summary))],
                ["no answer (nothing extracted)", str(summary.get("no_answer", 0))],
                ["errors (failed requests, not scored)", str(summary.get("errors", 0))],
                ["truncated (finish_reason: length)", truncated_text(summary)],
                ["run complete", _completeness(summary)],
                *(
                    [[f"decisions changed from {_whose(doc)}", str(summary["changed"])]]
                    if "changed" in summary and says_changed(doc)
                    else []
                ),
                ["scorer", cell(scorer.get("version", "n/a"))],
                ["conflict policy", cell(scorer.get("conflict_policy", "n/a"))],
                ["reasoning fallback", _on_off(scorer.get("allow_reasoning_fallback"))],
                ["think prefilled", _on_off(scorer.get("think_prefilled"))],
            ],
            "lr",
        ),
        "",
        *_samples_md(summary),
        *_tool_verdicts_md(doc),
        *_settings_section([(str(doc.get("label", "run")), doc.get("settings"))]),
        "## By category",
        "",
    ]
    cats = summary.get("by_category") or {}
    header = ["category", "correct", "scored", "errors", "accuracy", "95% interval", "no answer"]
    rows = [_scope_row(name, c) for name, c in sorted(cats.items())]
    if is_sampled(summary):  # each category's pass@k at the run's k, and its maj@k
        k = samples_per_task(summary)
        header += [f"pass@{k}", f"maj@{k}"]
        rows = [
            [*row, pct(_pass_at(c, k)), pct(c.get("majority_at_k"))]
            for row, (_, c) in zip(rows, sorted(cats.items()), strict=True)
        ]
    lines += _table(header, rows, "l" + "r" * (len(header) - 1))
    if types := type_rows(summary):
        rows = [[*_scope_row(label, c), cell(details or "—", 300)] for label, c, details in types]
        base = header[1:7]  # the scope columns _scope_row fills (a sampled run's pass@k columns are the categories')
        lines += ["", "## By task type", "", *_table(["task type", *base, "its own figures"], rows, "lrrrrrrl")]
    for table in type_tables(summary):
        rows = [[cell(value, 200) for value in row] for row in table.rows]
        header = [cell(name) for name in table.header]  # a room's words, escaped as any text it draws
        lines += ["", f"### {cell(table.title)}", "", *_table(header, rows, "l" + "r" * (len(header) - 1))]
    lines += ["", "## How answers were found", ""]
    lines += _counts_table("Extraction method", "method", summary.get("by_method") or {})
    lines += _counts_table("Extraction source", "source", summary.get("by_source") or {})
    lines += _counts_table("Ambiguity class", "ambiguity", summary.get("by_ambiguity") or {})
    resources = doc.get("resources")
    if resources:
        lines += ["## Tokens and latency", "", *_resources_table([(str(doc.get("label", "run")), resources)]), ""]
    serving = _serving_section([(str(doc.get("label", "run")), summary.get("serving"))])
    lines += serving or ["## Serving", "", SERVING_MISSING, ""]
    tasks = doc.get("tasks") or []
    sampled = is_sampled(summary)
    if sampled:  # each record is one sample: listed under its task, sample 0 first
        tasks = in_sample_order(tasks)
    lines += [f"## Tasks ({len(tasks)}{' samples' if sampled else ''})", ""]
    rows = [
        [
            cell(t.get("task_id"), 80),
            *([str(t.get("sample") or 0)] if sampled else []),
            cell(t.get("category")),
            cell(expected_text(t), 60),
            cell(extracted_text(t), 60),
            cell(t.get("extraction_method")),
            cell(t.get("ambiguity")),
            _verdict_md(verdict_of(t)),
        ]
        for t in tasks
    ]
    header = ["task", *(["sample"] if sampled else []), "category", "expected", "extracted", "method", "ambiguity"]
    lines += _table([*header, "verdict"], rows)
    lines += _evidence_md(tasks, sampled)
    failed = [t for t in tasks if t.get("error")]
    if failed:
        # The reason a request failed matters as much as the fact: "HTTP 400 …" is fixed differently from a timeout.
        lines += ["", f"## Failed requests ({len(failed)})", ""]
        lines += _table(["task", "reason"], [[cell(t.get("task_id"), 80), cell(t.get("error"), 300)] for t in failed])
    return "\n".join(lines).rstrip() + "\n"


def _pass_at(figures: Mapping[str, Any], k: int) -> float | None:
    value = (figures.get("pass_at_k") or {}).get(str(k))
    return float(value) if isinstance(value, int | float) else None


def _samples_md(summary: Mapping[str, Any]) -> list[str]:
    """A sampled run's own figures: pass@j for every j up to k, maj@k, the clustered standard errors, and how
    many tasks' samples agree, with a table of the tasks per share of correct samples (the histogram's counts)."""
    if not is_sampled(summary):
        return []
    k = samples_per_task(summary)
    by_task = summary.get("by_task") or {}
    rows = [
        ["samples per task", str(k)],
        ["tasks scored", str(summary.get("tasks_scored", 0))],
        [accuracy_name(summary), pct(summary["accuracy"])],
        *([f"pass@{j}", pct(v)] for j, v in pass_at_k_rows(summary)),
        [f"maj@{k}", pct(summary.get("majority_at_k"))],
        ["standard error, clustered on tasks", stderr_points(summary.get("accuracy_stderr"))],
    ]
    if category_stderr_larger(summary, "accuracy_stderr", "accuracy_stderr_category"):
        rows.append(["standard error, clustered on categories", stderr_points(summary["accuracy_stderr_category"])])
    rows.append(["tasks whose samples all agree", f"{agreeing_tasks(summary)} of {len(by_task)}"])
    lines = [
        "## Repeated samples",
        "",
        f"Each task was asked {k} times. The accuracy is {accuracy_name(summary)}, the mean over every scored "
        f"sample; its interval is the {summary.get('ci_method') or interval_name(True)} (a task's samples are not "
        "independent tasks).",
        "",
        *_table(["figure", "value"], rows, "lr"),
        "",
        PASS_AT_K_NOTE,
        "",
    ]
    if said := category_stderr_sentence(summary, "accuracy_stderr", "accuracy_stderr_category"):
        lines += [said, ""]
    lines += [
        "### Share of samples correct per task",
        "",
        f"{agreeing_tasks(summary)} of {len(by_task)} tasks gave the same answer in every sample. "
        + AGREEMENT_NOTE,
        "",
        *_table(["share correct", "tasks"], [[text, str(n)] for text, n in share_counts(summary)], "rr"),
        "",
    ]
    return lines


def _scope_row(name: str, c: Mapping[str, Any]) -> list[str]:
    """A category's or a task type's figures, as a row of the run report."""
    return [
        cell(name),
        str(c["correct"]),
        str(scored(c)),
        str(c.get("errors", 0)),
        pct(c["accuracy"]),
        interval(c.get("ci_low"), c.get("ci_high")),
        str(c.get("no_answer", 0)),
    ]


def _evidence_md(tasks: Sequence[Mapping[str, Any]], sampled: bool = False) -> list[str]:
    """Each task's evidence of its type's own (a math answer's normal form and the comparator that decided),
    under the table: one item a task, the tasks that were not correct first."""
    shown = [(t, evidence) for t in tasks if (evidence := evidence_lines(t))]
    if not shown:
        return []
    shown.sort(key=lambda item: item[0].get("correct") is True)  # stable: the suite's order within each group
    lines = ["", f"## How each answer was checked ({len(shown)})", ""]
    for task, evidence in shown:
        # A label holds the model's and the suite's words too (a call's argument names, an instruction's kwargs).
        facts = "; ".join(f"{cell(label, 200)}: {cell(text, 200)}" for label, text in evidence)
        which = f" sample {task.get('sample') or 0}" if sampled else ""
        lines.append(f"- `{cell(task.get('task_id'), 80)}`{which} ({_verdict_md(verdict_of(task))}): {facts}")
    return lines


def _whose(doc: Mapping[str, Any]) -> str:
    """Whose verdicts a run's `previous` holds: another tool's (rescore --from), else the input's."""
    return f"{cell(doc['tool'])}'s" if doc.get("tool") else "the input's"


def _tool_verdicts_md(doc: Mapping[str, Any]) -> list[str]:
    """Another tool's results: its verdicts against this scorer's (the figures the audit of rescore --from
    leads with), then every task whose verdict changed, with the reason."""
    tool, figures = doc.get("tool"), doc.get("tool_verdicts")
    if not tool:
        return []
    lines = [f"## {cell(tool)}'s verdicts against {SCORER_LABEL}", ""]
    if not figures:
        return [*lines, f"{cell(tool)} recorded no verdict for these tasks.", ""]
    if scopes := verdict_scope_rows(doc.get("summary") or {}):  # several types or tasks: each its own headline
        return [*lines, *_verdict_scopes_md(doc, tool, scopes), *_changed_md(doc, tool)]
    n = figures["n_paired"]
    sampled = comparison_sampled(figures)  # epochs of a task: counts of samples, shares of tasks paired

    def of(side: str) -> int:
        return int(figures.get(f"{side}_samples") or n) if sampled else n

    rows = [
        [label, f"{figures[f'{side}_correct']}/{of(side)}", pct(figures[f"{side}_accuracy"]),
         interval(figures[f"{side}_ci_low"], figures[f"{side}_ci_high"])]
        for label, side in ((cell(tool), "a"), (SCORER_LABEL, "b"))
    ]  # fmt: skip
    if sampled:
        pairs = (
            f"- On the {n} tasks both decided ({of('a')} samples): {SCORER_LABEL}'s share of correct samples is "
            f"higher on {figures['b_wins']}, {cell(tool)}'s on {figures['a_wins']}; {test_text(figures)}."
        )
    else:
        pairs = (
            f"- On the {n} tasks both decided: {SCORER_LABEL} right where {cell(tool)} is wrong on "
            f"{figures['b_wins']}, the reverse on {figures['a_wins']}; {test_text(figures)}."
        )
    lines += [
        f"> **{cell(figures['verdict'], 1000)}**",
        "",
        *_table(["", "correct", "accuracy", "95% interval"], rows, "lrrr"),
        "",
        pairs,
        "",
    ]
    return [*lines, *_changed_md(doc, tool)]


def _verdict_scopes_md(doc: Mapping[str, Any], tool: str, scopes: list[dict[str, str]]) -> list[str]:
    """Each task type and each of the tool's tasks within it: its figures, its test and its sentence; the pool of
    several types last, named as pooled, untested."""
    header = ["scope", "tasks", cell(tool), SCORER_LABEL, f"{SCORER_LABEL} minus {cell(tool)} (95% interval)", "test"]
    rows = [[cell(r["name"]), r["tasks"], r["a"], r["b"], r["difference"], r["test"]] for r in scopes]
    lines = [
        f"Per task type and per {cell(tool)} task: each has its own figures and test, since their rules, golds and "
        "prompts differ.",
        "",
        *_table(header, rows, "lrrrrr"),
        "",
    ]
    lines += [f"- **{cell(r['name'])}**: {cell(r['headline'].removeprefix(r['name'] + ': '), 1000)}"
              for r in scopes if r["headline"]]  # fmt: skip
    if note := pooled_verdicts_note(doc.get("summary") or {}):
        lines += ["", cell(note, 1000)]
    return [*lines, ""]


def _changed_md(doc: Mapping[str, Any], tool: str) -> list[str]:
    changed = [t for t in doc.get("tasks") or [] if _changed_task(t)]
    lines = [f"### Changed decisions ({len(changed)})", ""]
    if not changed:
        return [*lines, "No decision changed.", ""]
    rows = [
        [
            cell(t.get("task_id"), 80),
            cell(expected_text(t), 60),
            _verdict_md("correct" if t["previous"]["correct"] else "wrong")
            + f" ({cell(t['previous'].get('extracted_final_answer'), 40)})",
            _verdict_md(verdict_of(t)) + f" ({cell(extracted_text(t), 40)})",
            cell(t.get("reason"), 200),
        ]
        for t in changed
    ]
    header = ["task", "expected", f"{cell(tool)}'s verdict", f"{SCORER_LABEL}'s verdict", "why"]
    return [*lines, *_table(header, rows), ""]


def _changed_task(task: Mapping[str, Any]) -> bool:
    previous = task.get("previous") or {}
    return isinstance(previous.get("correct"), bool) and previous["correct"] != task.get("correct")


# --- Comparison ---------------------------------------------------------------------------------------


def comparison_core(doc: Mapping[str, Any]) -> list[str]:
    """The headline figures of a comparison, as lines (templates/_comparison_core.md.j2): what a comparison and
    each of a matrix's comparisons lead with."""
    text = render_macro("_comparison_core.md.j2", "comparison_core", blank_paired(doc))
    return text.removesuffix("\n").split("\n")


def comparison_markdown(doc: Mapping[str, Any]) -> str:
    return render("comparison.md.j2", **comparison_page(doc))


def _type_details_md(sides: Sequence[tuple[str, Mapping[str, Any] | None]]) -> list[str]:
    """Each lane's own figures per task type (type_detail_rows), when any lane has some."""
    rows = [[cell(v, 600) for v in row] for row in type_detail_rows(sides)]
    if not rows:
        return []
    return ["", "## Each task type's own figures", "", *_table(["lane", "task type", "figures"], rows, "lll"), ""]


# --- Matrix -------------------------------------------------------------------------------------------


def matrix_markdown(doc: Mapping[str, Any]) -> str:
    return render("matrix.md.j2", **matrix_page(doc))
