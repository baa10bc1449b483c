"""Issue 30, item 6: a run's page shows only what applies to it: the prompt templates of the task types it holds,
and a "changed" figure only where there is an input verdict to differ from."""

from __future__ import annotations

import json
import re
from pathlib import Path

from test_nothing_measured import run_dir

from ocllm.cli import main

TEMPLATES = {
    "prompt_template": "{question}\n\n{options}\n\nEnd with FINAL: <letter>.",
    "substring_template": "{question}",
    "math_template": "{question} boxed",
    "instructions_template": "{question}",
    "json_template": "{question}",
    "tool_template": "{question}",
}


def test_a_run_page_shows_its_own_types_templates_and_no_changed_card_of_its_own_verdicts(tmp_path: Path) -> None:
    run = run_dir(tmp_path / "run", "L", "mcq3", {"t0": "FINAL: B", "t1": "FINAL: C", "t2": "FINAL: B"})
    manifest = json.loads((run / "manifest.json").read_text())
    manifest["format"] = "ocllm-run/1"
    manifest["lane"].update(TEMPLATES)
    (run / "manifest.json").write_text(json.dumps(manifest))
    # The run's own metrics.json, as `run` writes it: this scorer's verdicts of when it ran are the "input's".
    assert main(["rescore", str(run), "-o", str(run / "metrics.json")]) == 0
    assert main(["report", str(run), "-o", str(tmp_path / "r")]) == 0
    md = (tmp_path / "r" / "report.md").read_text()
    page = (tmp_path / "r" / "report.html").read_text()
    text = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", page))
    # Written under the keys of before (a manifest of before issue 41): read, and shown by the type's key now.
    assert "| templates.mcq |" in md and "templates.mcq" in text
    for other in ("required_substrings", "math", "instructions", "json", "tool_call", "code"):
        assert f"templates.{other}" not in md and f"templates.{other}" not in text, other
    assert "prompt template" not in md and "math template" not in text
    assert "decisions changed" not in md and 'data-figure="changed"' not in page
    # It is the run's own verdicts that are there (and a card would say 0), not the absence of any.
    from ocllm.analysis.report_documents import run_report_doc

    doc = run_report_doc(run)
    assert all(isinstance((t.get("previous") or {}).get("correct"), bool) for t in doc.tasks)
    assert doc.summary["changed"] == 0
