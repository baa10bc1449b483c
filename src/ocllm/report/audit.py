"""A rescore's audit (documents.Audit) drawn as Markdown by its template (`templates/audit.md.j2`), with the
reports' escaping: text from the input or a model reaches a table cell or a sentence through `cell`, and a code span
through `code`, whose fence no backtick inside it can close."""

from __future__ import annotations

from typing import Any

from ocllm import verdict_words
from ocllm.documents import Audit, Paired
from ocllm.report.markdown_escaping import cell
from ocllm.report.markdown_rendering import render
from ocllm.summary_words import NO_EARLIER_VERDICT, left_out_sentence, truncation_words
from ocllm.verdict_words import SCORER_LABEL

__all__ = ["audit_markdown"]


def audit_markdown(doc: Audit) -> str:
    """The audit as `rescore --report` writes it."""
    return render("audit.md.j2", **_view(doc))


def _view(doc: Audit) -> dict[str, Any]:
    label = doc.input_label
    verdicts = doc.verdicts
    lines = verdict_words.scope_lines(verdicts) if verdicts is not None else []
    sampled = verdicts is not None and verdicts.pooled is not None and verdict_words.sampled(verdicts.pooled)
    return {
        "source_name": doc.source_name,
        "scorer": doc.scorer,
        "scorer_label": SCORER_LABEL,
        "label": label,
        "scopes": [_scope(line, label) for line in lines] if verdicts is not None else None,
        "several": len(lines) > 1,
        "pooled_note": verdict_words.pooled_note(verdicts) if verdicts is not None else None,
        "unpaired": doc.unpaired,
        "unpaired_what": "sample(s)" if sampled else "task(s)",
        "unscorable": doc.unscorable,
        "left_out": left_out_sentence(doc.unscorable) if doc.unscorable else "",
        "totals": doc.totals,
        "fraction": _fraction,
        "failed": doc.failed,
        "has_old": doc.has_old,
        "no_earlier_verdict": NO_EARLIER_VERDICT.capitalize(),
        "changed": doc.changed,
        "inconsistent": doc.inconsistent,
        "extraction_differs": doc.extraction_differs,
        "differs_by_type": ", ".join(f"{kind} {n}" for kind, n in doc.differs_by_type.items()),
        "with_reasoning": doc.with_reasoning,
        "reasoning_statements": doc.reasoning_statements,
        "truncated": truncation_words(doc.truncated, doc.finish_reasons, doc.answered),
        "count_tables": [(title, key, doc.counts.get(key, [])) for title, key in _COUNT_TABLES],
    }


_COUNT_TABLES = (
    ("Ambiguity classes", "ambiguity"), ("Extraction methods", "method"), ("Extraction sources", "source"),
    ("Deciding rules", "rule"),
)  # fmt: skip


def _scope(line: verdict_words.ScopeLine, label: str) -> dict[str, Any]:
    """One scope's sides, difference and verdict (the pool's without a test: it is no headline); `rows` None when
    no sample of it was paired."""
    figures = line.paired
    if figures is None or not figures.n_paired:
        return {"name": line.name, "rows": None, "no_statistic": verdict_words.no_statistic(line.unpaired, label)}
    rows = [
        [cell(label, None), verdict_words.counted(figures, "a"), _percent(figures.a_accuracy),
         _percent_range(figures.a_ci_low, figures.a_ci_high)],
        [SCORER_LABEL, verdict_words.counted(figures, "b"), _percent(figures.b_accuracy),
         _percent_range(figures.b_ci_low, figures.b_ci_high)],
    ]  # fmt: skip
    return {
        "name": line.name,
        "rows": rows,
        "sampled": verdict_words.sampled(figures),
        "n_paired": figures.n_paired,
        "difference": _difference(line, figures, label),
        "verdict": figures.verdict if line.kind != "pooled" else None,
    }


def _difference(line: verdict_words.ScopeLine, figures: Paired, label: str) -> str:
    """The difference's sentence: pooled (not tested), of shares over samples (t interval), or of tasks (exact)."""
    points = verdict_words.signed_points(figures.diff)  # measured wherever a task is paired
    minus = f"({SCORER_LABEL} minus {cell(label, None)})"
    interval = _points_range(figures.diff_ci_low, figures.diff_ci_high)
    if line.kind == "pooled":
        return (
            f"Difference {minus}, pooled: {points} ({figures.b_wins} task(s) right only here, {figures.a_wins} only "
            "in the input); not tested."
        )
    if verdict_words.sampled(figures):  # a task's samples (inspect's epochs) paired as one task, by shares
        return (
            f"Difference {minus}: {points}, the mean of the {figures.n_paired} tasks' differences of shares correct; "
            f"95% t interval clustered on tasks {interval}; {figures.test} p = {_p(figures.p_value)} "
            f"({figures.b_wins} task(s) with a higher share here, {figures.a_wins} in the input)."
        )
    return (
        f"Difference {minus}: {points}, exact 95% CI {interval}; exact McNemar p = {_p(figures.p_value)} "
        f"({figures.b_wins} task(s) right only here, {figures.a_wins} only in the input)."
    )


# A figure that was not measured (None: one task's samples have no interval or test) reads n/a, never a number.
def _percent(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.2f}%"


def _percent_range(low: float | None, high: float | None) -> str:
    return "n/a" if low is None or high is None else f"{100 * low:.1f}-{100 * high:.1f}%"


def _points_range(low: float | None, high: float | None) -> str:
    return "n/a" if low is None or high is None else f"{100 * low:+.2f} to {100 * high:+.2f}"


def _p(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3g}"


def _fraction(correct: int, total: int) -> str:
    pct = 100.0 * correct / total if total else 0.0
    return f"{correct}/{total} ({pct:.2f}%)"
