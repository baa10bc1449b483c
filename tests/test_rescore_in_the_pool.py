"""A rescore's decisions in the run's decision pool (run/ordered_decisions.py): past its first second of deciding in
process (none here: the tests set it to nothing) they are taken in worker processes, in order, and the document is
the one a rescore deciding in its own process writes; an error of the input met while the workers decide ends the
command in one line, as before; a reader that stops early leaves no worker running."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from helpers import lm_eval_samples, one_error
from processes import gone

from ocllm.analysis.rescore import rescore_tool_files
from ocllm.cli import main
from ocllm.models import Policy, Sample
from ocllm.run import ordered_decisions
from ocllm.scoring.mcq.fields import McqTask

pytestmark = pytest.mark.slow  # worker processes started

ANSWERS = [
    ("Betty still needs 100 - 95 = 5 dollars.\n#### 5", "5", "5"),
    ("The robe takes 2 + 2 / 2 = 3 bolts in all.\n#### 4", "4", "3"),
    ("She makes 9 * 2 = $18 a day, so the answer is 18 dollars.", "18", "18"),
    ("x = 7/2, that is 3.5.", "3.5", "7/2"),
]


def lines(docs: int, start: int = 0) -> list[dict[str, Any]]:
    out = []
    for filter_name in ("strict-match", "flexible-extract"):
        for doc_id in range(start, start + docs):
            response, last, gold = ANSWERS[doc_id % len(ANSWERS)]
            doc = {"question": f"Question {doc_id}?", "answer": f"Working.\n#### {gold}"}
            filtered = last if filter_name == "flexible-extract" or "####" in response else "[invalid]"
            out.append({
                "doc_id": doc_id, "doc": doc, "target": doc["answer"],
                "arguments": {"gen_args_0": {"arg_0": [f"Question: {doc['question']}"], "arg_1": {"until": []}}},
                "resps": [[response]], "filtered_resps": [filtered], "filter": filter_name,
                "metrics": ["exact_match"], "exact_match": float(filtered == gold),
            })  # fmt: skip
    return out


def test_decisions_taken_in_the_workers_make_the_document_deciding_here_makes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(ordered_decisions, "IN_PROCESS_CPU_S", 0.0)
    monkeypatch.setattr(ordered_decisions, "POOL_FROM_S", 0.0)  # all but the first decided in the workers
    docs = 96
    path = lm_eval_samples(tmp_path, "gsm8k", lines(docs))
    assert main(["rescore", str(path), "--from", "lm-eval", "-o", str(tmp_path / "pooled.json")]) in (0, 1)
    rescore_tool_files("lm-eval", [path], tmp_path / "here.json")  # decided in this process, one at a time
    pooled, here = (json.loads((tmp_path / name).read_text()) for name in ("pooled.json", "here.json"))
    assert [t["task_id"] for t in pooled["tasks"]] == [f"gsm8k/{i}" for i in range(docs)]
    assert pooled["tasks"] == here["tasks"] and pooled["summary"] == here["summary"]
    assert {t["correct"] for t in pooled["tasks"]} == {True, False}


def test_an_input_error_met_while_the_workers_decide_ends_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(ordered_decisions, "IN_PROCESS_CPU_S", 0.0)
    monkeypatch.setattr(ordered_decisions, "POOL_FROM_S", 0.0)
    first = lm_eval_samples(tmp_path / "a", "gsm8k", lines(64))
    again = lm_eval_samples(tmp_path / "b", "gsm8k", lines(3, start=5))  # gsm8k/5 again: refused when it is met
    code = main(["rescore", str(first), str(again), "--from", "lm-eval", "-o", str(tmp_path / "out.json")])
    assert code == 2
    assert "task 'gsm8k/5' appears in" in one_error(capsys)
    assert not (tmp_path / "out.json").exists()


def test_a_reader_that_stops_early_leaves_no_worker_running(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(ordered_decisions, "IN_PROCESS_CPU_S", 0.0)
    monkeypatch.setattr(ordered_decisions, "POOL_FROM_S", 0.0)
    items = list(range(400))
    task = McqTask(id="t", question="Which?", options=["1", "2"], answer="B", category="c")
    decisions = ordered_decisions.OrderedDecisions(items, lambda _i: (task, Sample(task_id="t", content="FINAL: B")),
                                                   Policy())  # fmt: skip
    taken = decisions.records()
    for _ in range(40):  # into the workers' part, then the reader stops
        item = next(taken)
        assert decisions.decided(item) is not None and decisions.decided(item).correct is True  # type: ignore[union-attr]
    taken.close()
    assert decisions.worker_pids and all(gone(pid) for pid in decisions.worker_pids)
