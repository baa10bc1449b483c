"""What the command line prints: tables, notices and verdicts, on the terminal or into a pipe.

Everything a model or a file supplied (labels, categories, notices) is printed as text, never as markup, and its
control characters as visible text (`visible_text`): a task id holding ESC or a right-to-left override is printed
`\\x1b`, `U+202E`, never sent to the terminal as it is."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Collection
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec
from rich.console import Console
from rich.table import Table
from rich.text import Text

from ocllm import simulated_words, verdict_words
from ocllm.documents import (
    Comparison,
    InputVerdicts,
    Matrix,
    Paired,
    PromptTokens,
    RunReport,
    Serving,
    Summary,
    as_summary,
)
from ocllm.report.wording import interval_methods_note, rank_of, rate
from ocllm.scoring import task_types
from ocllm.summary_words import censoring_rows, censoring_words, serving_rate, truncation_words
from ocllm.verdict_words import CHANGES_LISTED, SCORER_LABEL
from ocllm.visible_text import visible

if TYPE_CHECKING:  # the runner pulls in aiohttp: `ocllm --help` should not wait for it
    from ocllm.analysis.power import McNemarPlan, PilotPlan
    from ocllm.analysis.rescore import RescoredFile
    from ocllm.importers import Imported
    from ocllm.models import Preflight
    from ocllm.run.runner import RunResult

class VisibleConsole(Console):
    """rich's console, every string it is given made visible first (`visible_text`): rich prints ESC, NUL and a
    right-to-left override as they are. A string printed, a table's cells and titles all pass through `render_str`;
    a Text built here is made of visible strings (`print_notice`, `ServerWait`)."""

    def render_str(self, text: str, **kwargs: Any) -> Text:
        return super().render_str(visible(text), **kwargs)


# Piped or redirected output gets a fixed wide page instead of rich's 80 columns, so that tables are
# not wrapped in the middle of a figure or an interval (COLUMNS, when set, still wins).
# Markup is off: every string printed (paths, labels, categories, notices, a server's error text) is text;
# the few styled words are built as Text.
console = VisibleConsole(width=None if sys.stdout.isatty() or os.environ.get("COLUMNS") else 160, markup=False)


def print_simulated(banner: str | None) -> None:
    """The banner of figures the ocllm simulator answered (simulated_words.py), before them; nothing for real ones."""
    if banner is not None:
        console.print(Text(banner, style="bold reverse"), soft_wrap=True)


def console_comparison(doc: Comparison) -> None:
    print_simulated(simulated_words.lanes_banner([(doc.a.label, doc.a.simulated), (doc.b.label, doc.b.simulated)]))
    print_notices(doc.notices)
    sampled = doc.test != "exact McNemar"
    per_task = f", {doc.samples_per_task_a} and {doc.samples_per_task_b} samples per task" if sampled else ""
    table = Table(title=f"{doc.a.label} vs {doc.b.label} ({doc.n_paired} paired tasks{per_task})")
    for column in ("scope", "A", "B", "A wins", "B wins", f"{doc.test} p", "B - A (95% CI)"):
        table.add_column(column, justify="left" if column == "scope" else "right", no_wrap=column != "scope")
    scopes: list[tuple[str, Paired]] = [("all", doc), *doc.by_category.items()]
    for name, f in scopes:
        table.add_row(
            name,
            # With samples, each side's mean share of correct samples (avg@k on the paired tasks).
            # No paired task: nothing measured on either side (0/0 would read as a measured zero).
            "n/a" if not f.n_paired else _share(f.a_accuracy) if sampled else f"{f.a_correct}/{f.n_paired}",
            "n/a" if not f.n_paired else _share(f.b_accuracy) if sampled else f"{f.b_correct}/{f.n_paired}",
            str(f.a_wins),
            str(f.b_wins),
            # No paired task in a scope: no statistic on nothing (nor, with samples, on one task).
            f"{f.p_value:.3g}" if f.p_value is not None else "-",
            _difference_cell(f),
        )
    console.print(table)
    if doc.diff_stderr is not None:
        console.print(spread_line(doc), soft_wrap=True, highlight=False)
    from ocllm.report.wording import type_detail_rows  # each lane's own figures per type (a tool lane's dropped calls)

    for label, kind, words in type_detail_rows([(doc.a.label, doc.a.type_details), (doc.b.label, doc.b.type_details)]):
        console.print(f"{label}, {kind}: {words}", soft_wrap=True, highlight=False)
    console.print(f"no answer: A {doc.a_no_answer}, B {doc.b_no_answer} (of the paired tasks each got wrong)")
    console.print(doc.verdict, soft_wrap=True, highlight=False)
    for label, said in censoring_rows(doc.censoring, [doc.a.label, doc.b.label]):
        console.print(f"{label}: {said}", soft_wrap=True, highlight=False)
    if doc.server_paths is not None:
        console.print(f"servers: {doc.server_paths.said}", soft_wrap=True, highlight=False)
    if doc.only_in_a or doc.only_in_b:
        console.print(f"left out: {len(doc.only_in_a)} task(s) only in A, {len(doc.only_in_b)} only in B")


def console_matrix(doc: Matrix, folder: Path) -> None:
    print_simulated(simulated_words.lanes_banner([(lane.label, lane.simulated) for lane in doc.lanes]))
    print_notices(doc.notices)
    table = Table(title=f"Lanes in {folder} (baseline {doc.baseline})")
    speed = any(lane.serving is not None for lane in doc.lanes)  # runs that recorded their wall time
    columns = ("#", "lane", "correct", "wrong", "no answer", "errors", "total", "accuracy", "95% CI")
    for column in (*columns, *(("req/s", "output tok/s", "TTFT p50") if speed else ())):
        table.add_column(column, justify="left" if column == "lane" else "right", no_wrap=column != "lane")
    for position, lane in enumerate(doc.lanes, start=1):
        # Nothing scored: no accuracy and no interval, never 0.0% (0.0-100.0%); not ranked (the notices say why).
        table.add_row(
            rank_of({"rank": lane.rank, "not_ranked": lane.not_ranked}, position),
            lane.label,
            str(lane.correct),
            str(lane.scored - lane.correct - lane.no_answer),
            str(lane.no_answer),
            str(lane.errors),
            str(lane.total),
            f"{100 * lane.accuracy:.1f}%" if lane.accuracy is not None else "n/a",
            _percent_range(None if lane.ci_low is None or lane.ci_high is None else (lane.ci_low, lane.ci_high)),
            *(_speed_cells(lane.serving) if speed else ()),
        )
    console.print(table)
    if methods := interval_methods_note([msgspec.to_builtins(lane) for lane in doc.lanes]):
        console.print(methods, soft_wrap=True, highlight=False)
    for comparison in doc.comparisons:
        console.print(comparison.verdict, soft_wrap=True, highlight=False)


def print_run_result(result: RunResult) -> None:
    summary = result.summary
    print_simulated(simulated_words.run_banner() if any(s.simulated for s in result.servers) else None)
    console.print(summary_table(result.lane.name, summary))
    asked = "" if result.model == result.lane.model else f" (asked for as {result.lane.model})"
    console.print(f"model: {result.model}{asked}", highlight=False, markup=False)
    console.print(server_line(result), highlight=False)
    if result.shard is not None:
        from ocllm.run.shards import shard_line

        console.print(shard_line(result.shard), highlight=False)
    # Why the retries were made is a notice (below); free re-sends are no retries, so they are said apart.
    resent = f", {result.resends} re-sent on a new connection" if result.resends else ""
    sent = "samples" if result.lane.samples_per_task > 1 else "tasks"
    # Counted as they were made: requests less tasks would go negative when tasks fail unsent (a stopped lane).
    retries = sum(result.retries.values())
    console.print(
        f"{answers_line(summary)}   truncated: {truncated_words(summary)}   missing: {summary.missing} (never ran)"
        f"   {sent} this run: {result.ran} ({result.requests} requests, {retries} retries{resent})",
        soft_wrap=True,  # one line to grep in a log, however narrow the terminal
    )
    if (censored := censoring_words(msgspec.to_builtins(summary))) is not None:
        console.print(censored, soft_wrap=True, highlight=False)
    if summary.samples_per_task > 1:
        console.print(samples_line(summary), soft_wrap=True, highlight=False)
    if summary.serving is not None:
        console.print(serving_line(summary.serving), highlight=False)
    if not isinstance(summary.prompt_tokens, msgspec.UnsetType):
        console.print(prompt_tokens_line(summary.prompt_tokens), highlight=False)
    print_notices(result.notices)
    for name in ("manifest.json", "suite.jsonl", "samples.jsonl", "metrics.json"):
        console.print(f"wrote {result.out_dir / name}")


def _difference_cell(f: Paired) -> str:
    """`-100.0 (-100.0 to +95.0)`; a dash for what was not measured (None)."""
    if f.diff is None:
        return "-"
    low, high = f.diff_ci_low, f.diff_ci_high
    interval = "n/a" if low is None or high is None else f"{100 * low:+.1f} to {100 * high:+.1f}"
    return f"{100 * f.diff:+.1f} ({interval})"


def _percent_range(interval: tuple[float, float] | None) -> str:
    """`43.6-97.0%`; n/a where there is no interval (nothing scored, or one task of several samples)."""
    return "n/a" if interval is None else f"{100 * interval[0]:.1f}-{100 * interval[1]:.1f}%"


def samples_line(summary: Summary) -> str:
    """avg@k with its interval clustered on tasks, pass@k and maj@k: what k samples per task measure."""
    from ocllm.analysis.sampled import interval_method, summary_interval

    k = summary.samples_per_task
    # The interval named as it was computed: the Wilson fallback is not "clustered on tasks" (issue 30).
    method = interval_method(summary.scored, k, summary.accuracy_stderr)
    ci = _percent_range(summary_interval(summary))
    measured = method is not None and summary.accuracy is not None
    figure = f"{_share(summary.accuracy)} (95% CI {ci}, {method})" if measured else "n/a"
    line = (
        f"samples: up to {k} per task, {summary.tasks_scored} tasks   avg@{k}: {figure}   "
        f"pass@{k}: {_share(summary.pass_at_k.get(str(k)))}   pass^{k}: {_share(summary.pass_hat_k.get(str(k)))}   "
        f"maj@{k}: {_share(summary.majority_at_k)}"
    )
    task_level, category_level = summary.accuracy_stderr, summary.accuracy_stderr_category
    if task_level is not None and category_level is not None and category_level > task_level:
        line += (
            f"\n  standard error clustered on the {summary.categories} categories: {100 * category_level:.2f} points "
            f"(on tasks: {100 * task_level:.2f}); tasks of one category vary together, so read the wider one"
        )
    return line


def _share(value: float | None, digits: int = 1) -> str:
    """A figure that may be absent (pass@k where no task has k scored samples): n/a, never 0%."""
    return "n/a" if value is None else f"{100 * value:.{digits}f}%"


def spread_line(doc: Paired) -> str:
    """The difference's standard errors (on tasks, on categories where larger) and the smallest difference the
    comparison could detect."""
    assert doc.diff_stderr is not None
    line = f"standard error of B - A: {100 * doc.diff_stderr:.2f} points, clustered on tasks"
    if doc.diff_stderr_category is not None and doc.diff_stderr_category > doc.diff_stderr:
        line += f"; {100 * doc.diff_stderr_category:.2f} clustered on the {doc.categories} categories"
    mde, low, high = doc.minimum_detectable_effect, doc.diff_ci_low, doc.diff_ci_high
    if verdict_words.detectable_may_be_said(mde, low, high, doc.significant) and mde is not None:
        line += (
            f"   smallest difference detectable with 80% power: {100 * mde:.1f} points"
        )
    return line


def truncated_words(summary: Summary | dict[str, Any]) -> str:
    """The summary's truncated answers, or "not recorded" where no answer recorded a finish_reason."""
    summary = as_summary(summary)
    return truncation_words(summary.truncated, summary.finish_reasons, summary.scored)


def answers_line(summary: Summary) -> str:
    """The scored tasks apart: right, a wrong answer, no answer at all; then the failed requests."""
    wrong = summary.scored - summary.correct - summary.no_answer
    return (
        f"correct: {summary.correct}   wrong: {wrong}   no answer: {summary.no_answer}   errors: {summary.errors}"
    )


def server_line(result: RunResult) -> str:
    """What answered (kind and version, per endpoint) and what was added to every request for it."""
    kinds = ", ".join(_server_words(i.kind, i.version, i.simulated) for i in result.servers) or "unknown"
    added = ", ".join(f"{key}={json.dumps(value)}" for key, value in result.request_settings.items())
    return f"server: {kinds}" + (f" (sent with every request: {added})" if added else "")


def _server_words(kind: str, version: str | None, simulated: bool) -> str:
    """One endpoint as the `server:` line says it: the simulator by name (it mimics a kind when asked to: said too),
    a real server by its kind and version."""
    if simulated:
        return simulated_words.SERVER_WORDS + (f", answering as {kind}" if kind != "unknown" else "")
    return f"{kind} {version}" if version else kind


def prompt_tokens_line(figures: PromptTokens) -> str:
    """The prompt tokens of the run's requests, as the server counted them: what an agent's context costs."""
    return (
        f"prompt tokens a request: mean {figures.mean:,.1f}, largest {figures.max:,} (over {figures.requests:,} "
        "requests, as the server counted them)"
    )


def serving_line(serving: Serving) -> str:
    """requests/s, output tokens/s and time to first token, over the lane's wall time."""
    figures = msgspec.to_builtins(serving)
    requests, tokens = serving_rate(figures, "requests_per_s"), serving_rate(figures, "output_tokens_per_s")
    # n/a: no request was answered, or the wall time rounds to 0 (no rate is measured over either).
    parts = [f"{requests:,.2f} requests/s" if requests is not None else "requests/s n/a"]
    if tokens is not None:
        parts.append(f"{tokens:,.1f} output tokens/s")
    if serving.ttft_p50_s is not None and serving.ttft_p95_s is not None:
        parts.append(f"time to first token p50 {serving.ttft_p50_s:.3f} s, p95 {serving.ttft_p95_s:.3f} s")
    line = f"serving: {', '.join(parts)} (over {serving.wall_s:,.1f} s)"
    if serving.scoring_tail_s:
        line += f"; scoring finished {serving.scoring_tail_s:,.1f} s after the last response"
    for endpoint in serving.endpoints:
        line += (
            f"\n  {endpoint.get('base_url')}: {endpoint.get('requests', 0)} requests, "
            f"{endpoint.get('errors', 0)} errors, latency p50 {_seconds(endpoint.get('latency_p50_s'))}"
        )
    return line


def _speed_cells(serving: Serving | None) -> tuple[str, str, str]:
    """A matrix lane's requests/s, output tokens/s and median time to first token ("-" where not recorded)."""
    if serving is None:
        return ("-", "-", "-")
    figures = msgspec.to_builtins(serving)
    requests, tokens = serving_rate(figures, "requests_per_s"), serving_rate(figures, "output_tokens_per_s")
    unmeasured = serving.output_tokens is not None  # reported, but over no answer or no time
    return (rate(requests), rate(tokens) if tokens is not None else "n/a" if unmeasured else "-",
            _seconds(serving.ttft_p50_s))  # fmt: skip


def _seconds(value: object) -> str:
    return f"{value:.3f} s" if isinstance(value, int | float) else "-"


def all_answered(summary: Summary) -> bool:
    """Exit code 0 means every task of the suite ran and has an answer."""
    return summary.all_answered


def print_notice(notice: str) -> None:
    console.print(Text.assemble(("note:", "yellow"), " ", visible(notice)), highlight=False, soft_wrap=True)


def print_preflight(lane: str, found: Preflight) -> None:
    """`ocllm probe`: each probe's finding, then what to change for each problem."""
    table = Table(title=f"preflight of lane {lane} ({found.requests} requests, {found.seconds:g} s)")
    for column in ("probe", "outcome", "what it found"):
        table.add_column(column)
    styles = {"ok": "green", "problem": "red", "inconclusive": "yellow"}
    for finding in found.findings:
        said = finding.outcome + (" (distorts the run)" if finding.distorts else "")
        table.add_row(finding.probe, Text(said, style=styles[finding.outcome]), Text(visible(finding.said)))
    console.print(table)
    for finding in found.findings:
        if finding.outcome == "problem" and finding.change:
            print_notice(f"{finding.probe}: {finding.change}")


def print_import(imported: Imported, output: Path) -> None:
    """What an import wrote: tasks per category, and where the gold letters fall (a skewed distribution
    makes a model that always answers one letter look good or bad)."""
    tasks = imported.tasks
    table = Table(title=f"{len(tasks)} tasks of {imported.read} rows")
    for column in ("category", "subset", "tasks"):
        table.add_column(column, justify="right" if column == "tasks" else "left")
    per: dict[tuple[str, str], int] = {}
    for task in tasks:
        key = (task.category, task.subset or "")
        per[key] = per.get(key, 0) + 1
    for (category, subset), count in sorted(per.items()):
        table.add_row(category, subset, str(count))
    console.print(table)
    letters: dict[str, int] = {}
    # Golds that are letters; a type whose room is not registered (yet) has none.
    mcq = [task for task in tasks if task.type in task_types.TASK_TYPES and task_types.of(task.type).option_count(task)]
    for task in mcq:
        letters[task.answer or "?"] = letters.get(task.answer or "?", 0) + 1
    if mcq:
        spread = "  ".join(f"{letter} {count} ({count / len(mcq):.0%})" for letter, count in sorted(letters.items()))
        console.print(f"gold letters: {spread}", highlight=False)
    if imported.skipped:
        console.print(f"skipped {len(imported.skipped)} bad rows, the first: {imported.skipped[0]}", highlight=False)
    console.print(f"wrote {output}", highlight=False)


def print_plan(plan: McNemarPlan | PilotPlan) -> None:
    """`ocllm plan`: the tasks needed, what they were sized for, and (from a pilot) what it measured."""
    from ocllm.analysis.power import McNemarPlan  # (SciPy: loaded when a plan is printed, not for --help)

    wanted = (
        f"a difference of {_points(plan.difference)} points, detected {100 * plan.power:.0f}% of the time by a "
        f"two-sided test at level {plan.alpha:g}"
    )
    if isinstance(plan, McNemarPlan):
        _say(
            f"tasks needed: {plan.tasks} (one sample each), for {wanted}, when the lanes disagree on "
            f"{100 * plan.discordance:.1f}% of the tasks (the McNemar design, Connor 1987)"
        )
    else:
        _print_pilot_plan(plan, wanted)
    _say(
        "A normal approximation: a plan, not a guarantee. A comparison with fewer tasks may well miss a real "
        "difference of this size, so its 'no evidence of a difference' does not say there is none."
    )


def _points(share: float) -> str:
    """A share given by the user in points, as given: 0.0015 is 0.15 points, not a rounded 0.1 (its shortest
    decimal spelling, moved two places, without a float's product noise: 0.07 is 7.0, not 7.000000000000001);
    at least one decimal, as the other figures of points."""
    points = format((Decimal(repr(share)) * 100).normalize(), "f")
    return points if "." in points else f"{points}.0"


def _print_pilot_plan(plan: PilotPlan, wanted: str) -> None:
    same = plan.samples_per_task_a == plan.samples_per_task_b
    samples = (
        f"{plan.samples_per_task_a} sample(s) per task on each side"
        if same
        else f"{plan.samples_per_task_a} sample(s) per task in A, {plan.samples_per_task_b} in B"
    )
    _say(
        f"pilot: {plan.paired_tasks} paired tasks (left out, in one run only or failed: {plan.unpaired_a} of A's, "
        f"{plan.unpaired_b} of B's), {samples} (at most); its own difference, B minus A: "
        f"{100 * plan.observed_difference:+.1f} points"
    )
    if plan.discordance is not None:  # one sample per task: the McNemar design
        _say(
            f"tasks needed: {plan.tasks} (one sample each), for {wanted}, at the pilot's discordance: the lanes "
            f"disagreed on {100 * plan.discordance:.1f}% of the paired tasks (the McNemar design, Connor 1987)"
        )
        return
    _say(
        f"variance of a task's difference: {plan.variance:.4f}, of which sampling noise {plan.within:.4f} and "
        f"between tasks {plan.between:.4f}"
    )
    table = Table(title=f"Tasks needed for {wanted}")
    for column in ("samples per task", "tasks", "variance", "sampling noise", "samples asked per lane"):
        table.add_column(column, justify="right", no_wrap=True)
    for row in plan.table:
        table.add_row(
            str(row.samples_per_task),
            str(row.tasks),
            f"{row.variance:.4f}",
            f"{100 * row.sampling_share:.0f}%",
            str(row.tasks * row.samples_per_task),
        )
    console.print(table)
    own = str(plan.samples_per_task_a) if same else "the pilot's"
    _say(f"tasks needed with {own} samples per task: {plan.tasks}")
    if min(row.tasks for row in plan.table) > plan.paired_tasks:
        _say(
            f"even 16 samples per task need more tasks than the pilot's {plan.paired_tasks}: if the pilot was the "
            "whole suite, this suite cannot resolve a difference of this size at this power"
        )
    if plan.saturates_at is not None:
        _say(
            f"from {plan.saturates_at} samples per task on, more samples no longer help: the true differences "
            "between tasks are most of the variance, and only more tasks shrink it"
        )
    elif plan.between == 0:
        _say(
            "the pilot shows no variance between tasks beyond sampling noise: more samples per task keep helping "
            "(a larger pilot may show otherwise)"
        )


def _say(text: str) -> None:
    console.print(text, soft_wrap=True, highlight=False)


class ServerWait:
    """The wait for a managed server to load, shown as it goes: elapsed time and its log's last line, at most
    one line every few seconds (a big model takes minutes; a log is not filled with them)."""

    def __init__(self, every_s: float = 5.0) -> None:
        self.every_s = every_s
        self._last = 0.0

    def __call__(self, text: str, *, final: bool = False) -> None:
        import time

        now = time.monotonic()
        if final:  # "ready after N s": always said
            console.print(Text(visible(text)), soft_wrap=True)
        elif now - self._last >= self.every_s:
            self._last = now
            console.print(Text(visible(text), style="dim"), soft_wrap=True)


def print_lane_outcomes(
    outcomes: list[tuple[str, str, Summary | None, str]], simulated: Collection[str] = ()
) -> None:
    """How each lane of a matrix ended, once all have run: its outcome, its accuracy with the 95% interval
    (Wilson's; with repeated samples clustered on tasks), and its scored tasks split into answered and no answer,
    beside the failed requests, and what its preflight found; first, which of them the ocllm simulator answered
    (`simulated`: their names)."""
    from ocllm.analysis.sampled import summary_interval

    print_simulated(simulated_words.lanes_banner([(name, name in simulated) for name, _, _, _ in outcomes]))

    table = Table(title="Lanes")
    table.add_column("lane")
    table.add_column("outcome", overflow="fold")
    for column in ("accuracy", "95% CI", "answered", "no answer", "errors"):
        table.add_column(column, justify="right", no_wrap=True)
    table.add_column("preflight", overflow="fold")
    for name, outcome, summary, preflight in outcomes:
        if summary is None:  # the lane never ran (its server failed, or the preflight stopped it)
            table.add_row(name, outcome, "-", "-", "-", "-", "-", preflight)
            continue
        table.add_row(
            name,
            outcome,
            f"{100 * summary.accuracy:.1f}%" if summary.accuracy is not None else "n/a",
            _percent_range(summary_interval(summary)),
            str(summary.scored - summary.no_answer),
            str(summary.no_answer),
            str(summary.errors),
            preflight,
        )
    console.print(table)


def changed_words(result: RescoredFile) -> str:
    """The count of changed decisions, or, where the input recorded no verdict at all (evalplus's samples, a run
    directory), that none could be counted: a 0 would read as every earlier verdict kept."""
    from ocllm.summary_words import NO_EARLIER_VERDICT

    if result.audit is not None and not result.audit.has_old:
        return f"none counted ({NO_EARLIER_VERDICT})"
    return str(result.summary.changed)




def print_verdicts(result: RescoredFile) -> None:
    """What a rescore of someone's results is for: their own accuracy on these tasks beside this scorer's,
    whether the difference is more than chance, per task type and per the tool's task within a type (each its
    own headline; the pooled figures of several types labelled as pooled, untested), and each task whose
    verdict changed, with the rule."""
    audit = result.audit
    verdicts = audit.scopes(result.input_label) if audit is not None else None
    if audit is None or verdicts is None:
        return
    print_verdict_scopes(verdicts)
    if audit.unpaired:
        sampled = verdicts.pooled is not None and verdict_words.sampled(verdicts.pooled)
        what = "sample(s)" if sampled else "task(s)"
        console.print(f"left out: {audit.unpaired} {what} failed, or have no verdict in the input", highlight=False)
    if not audit.changed:
        return
    changed = Table(title=f"Changed decisions ({len(audit.changed)})")
    for column in ("task", "expected", result.input_label, SCORER_LABEL, "rule"):
        changed.add_column(column, overflow="fold")
    for task_id, expected, old, new, rule, _reason in audit.changed.head[:CHANGES_LISTED]:
        changed.add_row(task_id, expected, old, new, rule)
    console.print(changed)
    if len(audit.changed) > CHANGES_LISTED:
        console.print(f"... and {len(audit.changed) - CHANGES_LISTED} more: the audit (--report) lists them all")


def print_report_verdicts(doc: RunReport) -> None:
    """`report` of another tool's results: its verdicts beside ours in one line, as rescore --from counts them;
    per task type and task, with each one's sentence, when the tasks are of several."""
    changed = f"changed decisions: {doc.summary.get('changed', 0)}"
    scoped = doc.summary.get("input_verdicts")
    verdicts = msgspec.convert(scoped, InputVerdicts) if scoped else None
    if verdicts is not None and len(verdict_words.scope_lines(verdicts)) > 1:
        print_verdict_scopes(verdicts)
        console.print(changed)
        return
    f = doc.tool_verdicts
    assert f is not None
    a, b = verdict_words.counted(f, "a"), verdict_words.counted(f, "b")
    console.print(f"{doc.tool}: {a}   {SCORER_LABEL}: {b}   {changed}", highlight=False)


def print_verdict_scopes(verdicts: InputVerdicts) -> None:
    """One row per task type and per the tool's task within it, then each one's own sentence: the headlines.
    The pool of several types comes last, named as pooled, with no test and no sentence."""
    label = verdicts.label
    lines = verdict_words.scope_lines(verdicts)
    pooled = verdicts.pooled
    sampled = pooled is not None and verdict_words.sampled(pooled)
    both = "samples" if sampled else "tasks"
    title = f"{label} against {SCORER_LABEL}" + (", per task type" if len(lines) > 1 else f": {lines[0].name}")
    if pooled is not None:
        n = pooled.a_samples if sampled else pooled.n_paired
        title += f" ({n} {both}{f' of {pooled.n_paired} tasks' if sampled else ''} both decided)"
    table = Table(title=title)
    for column in ("scope", both, label, SCORER_LABEL, f"{SCORER_LABEL} minus {label} (95% CI)", "test"):
        table.add_column(column, justify="left" if column == "scope" else "right", no_wrap=column != "scope")
    for line in lines:
        f = line.paired
        if f is None or not f.n_paired:  # nothing paired: no figure, no statistic
            table.add_row(line.name, "0", "-", "-", "-", "no statistic")
            continue
        n = f.a_samples if verdict_words.sampled(f) else f.n_paired
        table.add_row(
            line.name,
            str(n),
            f"{verdict_words.counted(f, 'a')} ({_share(f.a_accuracy, 2)})",
            f"{verdict_words.counted(f, 'b')} ({_share(f.b_accuracy, 2)})",
            verdict_words.difference(f) if line.kind != "pooled" else f"{verdict_words.signed_points(f.diff)} (pooled)",
            verdict_words.test_words(f) if line.kind != "pooled" else "not tested (pooled)",
        )
    console.print(table)
    for line in lines:
        if (said := verdict_words.headline(line, label)) is not None:
            console.print(said, soft_wrap=True, highlight=False)
    if note := verdict_words.pooled_note(verdicts):
        console.print(note, soft_wrap=True, highlight=False)


def print_notices(notices: list[str]) -> None:
    for notice in notices:
        print_notice(notice)


def summary_table(title: str, summary: Summary | dict[str, Any]) -> Table:
    summary = as_summary(summary)
    table = Table(title=title)
    for column in ("scope", "correct", "wrong", "no answer", "errors", "total", "accuracy"):
        table.add_column(column, justify="left" if column == "scope" else "right", no_wrap=column != "scope")
    for name, figures in [("all", summary), *summary.by_category.items()]:
        table.add_row(
            name,
            str(figures.correct),
            str(figures.scored - figures.correct - figures.no_answer),
            str(figures.no_answer),
            str(figures.errors),
            str(figures.total),
            f"{100 * figures.accuracy:.2f}%" if figures.accuracy is not None else "n/a",  # nothing scored
        )
    return table
