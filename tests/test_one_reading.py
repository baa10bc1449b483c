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


def test_the_closed_sets_are_the_ones_the_rule_book_lists() -> None:
    """ambiguity, rule, extraction_method are typed (issue 10, item 2) and documented in docs/scoring.md,
    rule 7: the two lists are one."""
    import re
    import typing

    from ocllm.models import Ambiguity, Method, Rule

    rule7 = (Path(__file__).resolve().parent.parent / "docs" / "scoring.md").read_text(encoding="utf-8")
    rule7 = rule7.split("### Rule 7: names recorded", 1)[1].split("## Reading real output", 1)[0]

    def listed(field: str) -> set[str]:
        item = re.search(rf"- `{field}`[^:]*:(.*?)(?:\n- |\Z)", rule7, re.S)
        assert item, field
        return set(re.findall(r"`([a-z_]+)`", item.group(1).split(";")[0]))  # what follows ";" is commentary

    assert listed("ambiguity") == set(typing.get_args(Ambiguity))
    assert listed("rule") == set(typing.get_args(Rule))
    assert listed("extraction_method") == set(typing.get_args(Method))


def test_every_decision_made_fits_the_closed_sets() -> None:
    import json

    import msgspec

    from ocllm.models import Decision, Policy, Sample, Task
    from ocllm.scoring import decide

    data = Path(__file__).parent / "data"
    cases = [
        json.loads(line) for name in ("mcq_corpus.jsonl", "review_1_6_probes.jsonl") for line in (data / name).open()
    ]
    for case in cases:
        task = Task(id="t", type="mcq", options=case["options"], answer="A", prompt=case.get("prompt"))
        sample = Sample(task_id="t", content=case["content"], reasoning=case.get("reasoning"))
        for policy in (Policy(), Policy(allow_reasoning_fallback=True, conflict_policy="strict")):
            decision = decide(task, sample, policy)
            msgspec.convert(msgspec.to_builtins(decision), Decision)  # raises on a value outside the sets
