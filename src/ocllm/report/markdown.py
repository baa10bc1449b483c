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

from ocllm.report.markdown_escaping import cell
from ocllm.report.markdown_rendering import render, render_macro
from ocllm.report.page_views import comparison_page, matrix_page, run_page
from ocllm.report.wording import blank_paired, evidence_lines
from ocllm.verdict_words import SCORER_LABEL

__all__ = ["cell", "comparison_core", "comparison_markdown", "matrix_markdown", "run_report_markdown"]


def run_report_markdown(doc: Mapping[str, Any]) -> str:
    view = run_page(doc)
    # Only the Markdown report lists each task's evidence in words (the HTML page draws each task's view): one
    # item a task, the tasks that were not correct first, the suite's order within each group (sort is stable).
    checked = [(t, evidence) for t in view["tasks"] if (evidence := evidence_lines(t))]
    checked.sort(key=lambda item: item[0].get("correct") is True)
    return render("run.md.j2", **view, checked=checked, scorer_label=SCORER_LABEL)


def comparison_core(doc: Mapping[str, Any]) -> list[str]:
    """The headline figures of a comparison, as lines (templates/_comparison_core.md.j2): what a comparison and
    each of a matrix's comparisons lead with."""
    text = render_macro("_comparison_core.md.j2", "comparison_core", blank_paired(doc))
    return text.removesuffix("\n").split("\n")


def comparison_markdown(doc: Mapping[str, Any]) -> str:
    return render("comparison.md.j2", **comparison_page(doc))


def matrix_markdown(doc: Mapping[str, Any]) -> str:
    return render("matrix.md.j2", **matrix_page(doc))
