"""The rescore's audit is a document (documents.Audit) drawn by the report's template with the reports' escaping
(issue 42, item 5): a task id holding a backtick or a pipe stays one intact code span in one table cell, text that
would be a link or emphasis stays text, and the audit names no type's fields in its generic sentences."""

from __future__ import annotations

import re
from pathlib import Path

from conftest import legacy_record, write_json

from ocllm.cli import main


def _audit(tmp_path: Path, records: list[dict[str, object]]) -> str:
    saved = write_json(tmp_path / "old.json", {"run_id": "r", "lane": "L", "tasks": records})
    report = tmp_path / "audit.md"
    assert main(["rescore", str(saved), "-o", str(tmp_path / "new.json"), "--report", str(report)]) == 0
    return report.read_text(encoding="utf-8")


def _row(audit: str, starts: str) -> list[str]:
    """A table row's cells, split on the pipes that are not escaped."""
    line = next(line for line in audit.splitlines() if line.startswith(starts))
    return [c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]]


def test_a_task_id_with_a_backtick_and_a_pipe_is_one_code_span_in_one_cell(tmp_path: Path) -> None:
    # The old scorer failed a clean FINAL: B (expected B): the rescore changes it, so the id is in the changed table.
    odd = "q`1|x<b>"
    audit = _audit(tmp_path, [legacy_record(odd, "FINAL: B", correct=False, extracted="B")])
    row = _row(audit, "| ``q`1")
    assert len(row) == 6  # task, expected, old, new, rule, reason: the pipe in the id broke no cell
    assert row[0] == r"``q`1\|x<b>``"  # fenced by two backticks, so its own one cannot close it; no entity in a span
    assert row[1] == "B" and row[4] == "`final_statement`"
    assert "No earlier verdict" not in audit  # the input recorded its verdicts


def test_text_from_the_input_is_escaped_as_every_report_escapes_it(tmp_path: Path) -> None:
    record = legacy_record("t1", "FINAL: B", correct=False, extracted="B", category="[a](http://x) *b*")
    audit = _audit(tmp_path, [record])
    totals = _row(audit, r"| \[a\]")
    assert totals[0] == r"\[a\](http://x) \*b\*"  # neither a link nor emphasis
    assert "`options`" not in audit  # no MCQ field named in the generic sentence of how it was decided


def test_an_input_without_verdicts_says_no_decision_can_be_counted_as_changed(tmp_path: Path) -> None:
    record = legacy_record("t1", "FINAL: B")
    for key in ("correct", "scoring_decision"):
        del record[key]
    audit = _audit(tmp_path, [record])
    assert "No earlier verdict was read from the input, so no decision can be counted as changed." in audit
    assert "| all | n/a | 1/1 (100.00%) | n/a |" in audit
