"""Facts that are read in one place only (issue 10, item 4): copies had drifted apart."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import legacy_record, write_json
from test_report_render import run_doc, task

from ocllm.cli import main
from ocllm.report.html import run_report_html


def test_sglang_top_level_reasoning_tokens_reach_the_task_view() -> None:
    # SGLang reports reasoning tokens at the top level of usage; compare read it, the HTML did not.
    t = task("t1", "math")
    t["usage"] = {"prompt_tokens": 10, "completion_tokens": 20, "reasoning_tokens": 17}
    page = run_report_html(run_doc([t]))
    assert "reasoning tokens" in page and ">17<" in page.replace(" ", "")


def test_a_saved_run_with_a_one_option_task_is_refused_as_a_suite_is(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write_json(tmp_path / "old.json", {"tasks": [legacy_record("t1", "FINAL: A", options=["x"], expected="A")]})
    assert main(["rescore", str(path), "-o", str(tmp_path / "out.json")]) == 2
    assert "1 option(s); an MCQ task needs 2 to 26" in capsys.readouterr().err
