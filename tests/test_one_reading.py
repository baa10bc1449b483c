"""Facts that are read in one place only (issue 10, item 4): copies had drifted apart."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import legacy_record, write_json
from test_report_render import run_doc, task

from ocllm.cli import main
from ocllm.report.html import run_report_html
from ocllm.scoring.mcq.fields import McqTask


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
    """ambiguity, rule, extraction_method are typed (issue 10, item 2) and documented in docs/scoring/mcq.md,
    rule 7: the two lists are one."""
    import re
    import typing

    from ocllm.scoring.mcq.decision import Ambiguity, Method, Rule

    rule7 = (Path(__file__).resolve().parent.parent / "docs" / "scoring" / "mcq.md").read_text(encoding="utf-8")
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

    from ocllm.models import Decision, Policy, Sample
    from ocllm.scoring import decide

    data = Path(__file__).parent / "data"
    cases = [
        json.loads(line) for name in ("mcq_corpus.jsonl", "review_1_6_probes.jsonl") for line in (data / name).open()
    ]
    for case in cases:
        task = McqTask(id="t", options=case["options"], answer="A", prompt=case.get("prompt"))
        sample = Sample(task_id="t", content=case["content"], reasoning=case.get("reasoning"))
        for policy in (Policy(), Policy(allow_reasoning_fallback=True, conflict_policy="strict")):
            decision = decide(task, sample, policy)
            msgspec.convert(msgspec.to_builtins(decision), Decision)  # raises on a value outside the sets


def test_a_suite_has_one_canonical_form_and_hash(tmp_path: Path) -> None:
    """Issue 10, item 6: the suite's identity is its tasks, not its file's bytes (an importer writing other
    bytes for the same tasks, or a hand-edited file with other spacing, is the same suite)."""
    from ocllm.suites import load_suite

    a = tmp_path / "a.jsonl"
    b = tmp_path / "b.jsonl"
    a.write_text(
        '{"id": "t1", "type": "mcq", "question": "2+2?", "options": ["3", "4"], "answer": "B", "category": "m"}\n'
    )
    b.write_text('\n{"category":"m","answer":"B","options":["3","4"],"question":"2+2?","type":"mcq","id":"t1"}\n\n')
    sa, sb = load_suite(str(a)), load_suite(str(b))
    assert sa.sha256 == sb.sha256 and sa.file_sha256 != sb.file_sha256
    copy = tmp_path / "copy.jsonl"
    copy.write_bytes(sa.canonical())
    again = load_suite(str(copy))
    assert again.tasks == sa.tasks and again.sha256 == sa.sha256 and copy.read_bytes() == sa.canonical()


def test_a_run_recorded_with_the_file_hash_still_resumes(tmp_path: Path) -> None:
    import json

    from faultserver import FaultServer, Reply

    from ocllm.suites import load_suite

    suite = tmp_path / "s.jsonl"
    suite.write_text(
        "".join(
            json.dumps({"id": f"t{i}", "type": "mcq", "question": "q", "options": ["a", "b"], "answer": "A",
                        "category": "c"}) + "\n"
            for i in range(3)
        )
    )  # fmt: skip
    out = tmp_path / "run"
    answer = {"index": 0, "message": {"role": "assistant", "content": "FINAL: A"}, "finish_reason": "stop"}
    body = {"id": "x", "object": "chat.completion", "model": "m", "choices": [answer]}
    models = Reply(json={"object": "list", "data": [{"id": "m", "object": "model"}]})
    args = ["run", "--suite", str(suite), "--model", "m", "--out", str(out)]
    with FaultServer() as server:
        server.script(models, then=Reply(json=body))
        assert main([*args, "--base-url", server.base_url]) == 0
    manifest = json.loads((out / "manifest.json").read_text())
    manifest["suite"]["sha256"] = load_suite(str(suite)).file_sha256  # as a run of an earlier version recorded it
    (out / "manifest.json").write_text(json.dumps(manifest))
    with FaultServer() as server:
        server.script(models, then=Reply(json=body))
        assert main([*args, "--base-url", server.base_url, "--resume"]) == 0


def test_rescore_streams_the_same_document_the_run_keeps_in_memory(tmp_path: Path) -> None:
    """`ocllm rescore` writes each task as it is decided (issue 10, item 6); what it writes is the document
    the in-memory path builds, for a run directory (here one interrupted mid-write) and a metrics file."""
    import json

    import msgspec
    from conftest import REPO
    from helpers import quiet
    from test_runner import lane

    from ocllm.analysis.rescore import policy_of, rescore_run, score_run_dir
    from ocllm.formats import load_saved_run
    from ocllm.run.runner import run_lane
    from ocllm.sim import SimConfig, SimServer
    from ocllm.suites import shipped_suites

    run = tmp_path / "run"
    with SimServer(SimConfig(suites=tuple(shipped_suites().values()), truncation_rate=0.2)) as sim:
        run_lane(lane(sim.base_url, suite="demo"), run, progress=quiet, score=score_run_dir)
    samples = run / "samples.jsonl"
    samples.write_bytes(samples.read_bytes()[:-40])  # the last line torn, as by a crash
    for source in (run, REPO / "examples" / "old_harness_metrics.json"):
        out = tmp_path / f"{source.stem}.json"
        assert main(["rescore", str(source), "-o", str(out), "--report", str(tmp_path / "audit.md")]) == 0
        saved = load_saved_run(source)
        expected = json.loads(msgspec.json.encode(rescore_run(saved, policy_of(saved)).document))
        assert json.loads(out.read_text()) == expected
    assert json.loads((tmp_path / "run.json").read_text())["summary"]["missing"] == 1


def test_the_typed_documents_round_trip_through_their_files(tmp_path: Path) -> None:
    """comparison.json and a rescore's summary read back into the records that wrote them (issue 10)."""
    import msgspec
    from conftest import legacy_record

    from ocllm.documents import Comparison, Summary

    sides = []
    for name, right in (("a", 3), ("b", 5)):
        records = [legacy_record(f"t{i}", "FINAL: B" if i < right else "FINAL: A") for i in range(6)]
        sides.append(str(write_json(tmp_path / f"{name}.json", {"tasks": records})))
    assert main(["compare", *sides, "-o", str(tmp_path / "c")]) == 0
    comparison = msgspec.json.decode((tmp_path / "c" / "comparison.json").read_bytes(), type=Comparison)
    assert (comparison.a_correct, comparison.b_correct, comparison.b_wins) == (3, 5, 2)
    assert comparison.flips[0].winner == "b" and comparison.by_category["reasoning"].n_paired == 6
    assert main(["rescore", sides[1], "-o", str(tmp_path / "r.json")]) == 0
    summary = msgspec.convert(msgspec.json.decode((tmp_path / "r.json").read_bytes())["summary"], Summary)
    assert (summary.correct, summary.scored, summary.complete) == (5, 6, True)
