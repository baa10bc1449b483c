"""The reports as Markdown: readable in a terminal as plain text, and rendered as tables on GitHub.

Each report is its template (`templates/run.md.j2`, `comparison.md.j2`, `matrix.md.j2`) drawing the same view as
its HTML page (`page_views`), so each figure is computed once and written by two templates. Any text that came
from a model or a file (task ids, categories, labels, answers) goes through the `cell` filter before it reaches a
table, so it can neither break the table (`|`, newlines) nor become markup (`<`, `>`, `&`, emphasis, links, code
spans).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ocllm.report.markdown_escaping import cell, fenced
from ocllm.report.markdown_rendering import render, render_macro
from ocllm.report.page_views import comparison_page, matrix_page, run_page
from ocllm.report.wording import blank_paired, evidence_lines, task_evidence
from ocllm.verdict_words import SCORER_LABEL

__all__ = ["cell", "comparison_core", "comparison_markdown", "matrix_markdown", "run_report_markdown"]


def run_report_markdown(doc: Mapping[str, Any]) -> str:
    view = run_page(doc)
    # Only the Markdown report lists each task's evidence in words (the HTML page draws each task's view): one
    # item a task, the tasks that were not correct first, the suite's order within each group (sort is stable).
    checked = [(t, evidence, _listings(t)) for t in view["tasks"] if (evidence := evidence_lines(t))]
    checked.sort(key=lambda item: item[0].get("correct") is True)
    return render("run.md.j2", **view, checked=checked, scorer_label=SCORER_LABEL)


# A listing drawn under a task's evidence (a program, what it printed) shows at most this many lines: the Markdown
# report is read in a terminal; the HTML page and the run's JSON hold the whole text.
LISTING_LINES = 120


def _listings(task: Mapping[str, Any]) -> list[tuple[str, list[str]]]:
    """The texts a task's room draws verbatim (`TaskView.listings`), each as its title (escaped) and the lines of a
    fenced block under the task's list item, for the tasks not answered correctly: a failed program's evidence is
    the program. Cut at LISTING_LINES, saying so."""
    if task.get("correct") is True:
        return []
    drawn = []
    for listing in task_evidence(task).listings:
        lines = listing.text.split("\n")
        text, note = listing.text, listing.note
        if len(lines) > LISTING_LINES:
            text = "\n".join(lines[:LISTING_LINES])
            note = f"the first {LISTING_LINES} of {len(lines)} lines shown; the HTML report and the JSON hold them all"
        title = cell(listing.title, 200) + (f" ({cell(note, 300)})" if note else "")
        drawn.append((title, fenced(text, listing.language, indent="  ")))
    return drawn


def comparison_core(doc: Mapping[str, Any]) -> list[str]:
    """The headline figures of a comparison, as lines (templates/_comparison_core.md.j2): what a comparison and
    each of a matrix's comparisons lead with."""
    text = render_macro("_comparison_core.md.j2", "comparison_core", blank_paired(doc))
    return text.removesuffix("\n").split("\n")


def comparison_markdown(doc: Mapping[str, Any]) -> str:
    return render("comparison.md.j2", **comparison_page(doc))


def matrix_markdown(doc: Mapping[str, Any]) -> str:
    return render("matrix.md.j2", **matrix_page(doc))
