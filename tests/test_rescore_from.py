"""`ocllm rescore --from lm-eval | mmlu-pro | inspect` (issue 13): other tools' result files re-scored, their
own decisions kept under `previous` and set against this scorer's.

The files under tests/fixtures/lm_eval and tests/fixtures/inspect were written by the tools themselves (their
READMEs say which version and how); the rest are written here, in the layouts those tools write. Expected
figures are counted from the input files by the tests, never taken from the code under test."""

from __future__ import annotations

import json
import os
import zipfile
from pathlib import Path
from typing import Any

import pytest
from helpers import read_jsonl

from ocllm.cli import main

FIXTURES = Path(__file__).parent / "fixtures"
LM_EVAL = FIXTURES / "lm_eval" / "0.4.13"
INSPECT = FIXTURES / "inspect" / "0.3.285"
INSPECT_EVAL = next(INSPECT.glob("*.eval"))
INSPECT_JSON = next(INSPECT.glob("*.json"))
# Integer ids, three epochs, a system message first, a truncated output, think tags inside the text.
INSPECT_VARIANT = next((INSPECT / "variant").glob("*.eval"))
LM_EVAL_RUNS = sorted(p for p in LM_EVAL.iterdir() if p.is_dir())


def rescore(tmp: Path, *args: str) -> tuple[dict[str, Any], str]:
    out, audit = tmp / "out.json", tmp / "audit.md"
    assert main(["rescore", *args, "-o", str(out), "--report", str(audit)]) == 0
    return json.loads(out.read_text()), audit.read_text()


def by_id(document: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {t["task_id"]: t for t in document["tasks"]}


def by_sample(document: dict[str, Any]) -> dict[tuple[str, int], dict[str, Any]]:
    """The records by (task, sample): inspect_ai's epochs are samples of one task."""
    return {(t["task_id"], t["sample"]): t for t in document["tasks"]}


# --- lm-eval ------------------------------------------------------------------------------------------------


def test_lm_eval_files_written_by_lm_eval_become_one_task_per_doc(tmp_path: Path) -> None:
    folder = LM_EVAL / "sim-baseline"
    files = sorted(folder.glob("samples_*.jsonl"))
    doc, _ = rescore(tmp_path, "--from", "lm-eval", str(folder))
    tasks = by_id(doc)
    expected_ids = set()
    for path in files:
        task = path.name.removeprefix("samples_").split("_2026-")[0]
        expected_ids |= {f"{task}/{line['doc_id']}" for line in read_jsonl(path)}
    assert set(tasks) == expected_ids
    assert doc["source"]["model"] == "sim-baseline"  # from lm-eval's results file beside the samples
    for path in files:
        task = path.name.removeprefix("samples_").split("_2026-")[0]
        for line in read_jsonl(path):
            record = tasks[f"{task}/{line['doc_id']}"]
            assert record["raw_content"] == line["resps"][0][0]
            chat = json.loads(line["arguments"]["gen_args_0"]["arg_0"][0])
            assert record["prompt"] == [m for m in chat if m["role"] == "user"][-1]["content"]
            assert record["previous"]["filters"][line["filter"]]["answer"] == line["filtered_resps"][0]
            assert record["previous"]["filters"][line["filter"]]["correct"] is (line["exact_match"] == 1.0)
    # The lm-eval notice: no reasoning field in these files.
    assert any("no reasoning field" in n for n in doc["notices"])


@pytest.mark.parametrize("folder", LM_EVAL_RUNS, ids=[p.name for p in LM_EVAL_RUNS])
def test_lm_eval_gold_letters_come_from_each_doc_shape(folder: Path, tmp_path: Path) -> None:
    doc, _ = rescore(tmp_path, "--from", "lm-eval", str(folder))
    tasks = by_id(doc)
    for path in sorted(folder.glob("samples_*.jsonl")):
        task = path.name.removeprefix("samples_").split("_2026-")[0]
        for line in read_jsonl(path):
            record, d = tasks[f"{task}/{line['doc_id']}"], line["doc"]
            if "options" in d:  # MMLU-Pro
                assert record["options"] == d["options"] and record["expected_answer"] == d["answer"]
            elif "choice1" in d:  # GPQA: choice1..choice4 (and the same list as choices), answer "(B)"
                assert record["options"] == [d[f"choice{n}"] for n in range(1, 5)]
                assert f"({record['expected_answer']})" == d["answer"]
            elif isinstance(d.get("choices"), dict):  # ARC: labels may be 1-4; target is the letter already
                assert record["options"] == d["choices"]["text"]
                assert record["expected_answer"] == line["target"]
            else:  # MMLU: choices, and the answer is an index
                assert record["options"] == d["choices"] and record["expected_answer"] == "ABCD"[d["answer"]]
                assert record["category"] == d["subject"]


def test_gpqa_lines_of_two_filters_are_one_task_and_filter_chooses_previous(tmp_path: Path) -> None:
    path = next((LM_EVAL / "sim-baseline").glob("samples_gpqa_*.jsonl"))
    lines = read_jsonl(path)
    assert {line["filter"] for line in lines} == {"strict-match", "flexible-extract"}
    default, _ = rescore(tmp_path, "--from", "lm-eval", str(path))
    assert len(default["tasks"]) == len({line["doc_id"] for line in lines})
    strict_dir = tmp_path / "strict"
    strict_dir.mkdir()
    strict, _ = rescore(strict_dir, "--from", "lm-eval", str(path), "--filter", "strict-match")
    for filter_name, document in (("flexible-extract", default), ("strict-match", strict)):
        tool_correct = sum(line["exact_match"] == 1.0 for line in lines if line["filter"] == filter_name)
        assert sum(t["previous"]["correct"] is True for t in document["tasks"]) == tool_correct
        for task in document["tasks"]:
            assert task["previous"]["filter"] == filter_name
            assert set(task["previous"]["filters"]) == {"strict-match", "flexible-extract"}
    # This scorer's decisions do not depend on whose extraction is kept beside them.
    assert [t["correct"] for t in default["tasks"]] == [t["correct"] for t in strict["tasks"]]


def test_invalid_and_bracketed_extractions_are_normalised(tmp_path: Path) -> None:
    path = next((LM_EVAL / "sim-baseline").glob("samples_gpqa_*.jsonl"))
    doc, _ = rescore(tmp_path, "--from", "lm-eval", str(path))
    for task in doc["tasks"]:
        for outcome in task["previous"]["filters"].values():
            raw = outcome["answer"]
            if raw == "[invalid]":
                assert outcome["extracted"] is None
            else:
                assert f"({outcome['extracted']})" == raw


def test_a_filter_none_response_is_no_letter_and_its_metric_still_decides(tmp_path: Path) -> None:
    path = next((LM_EVAL / "sim-baseline").glob("samples_arc_*.jsonl"))
    doc, _ = rescore(tmp_path, "--from", "lm-eval", str(path))
    for task, line in zip(doc["tasks"], read_jsonl(path), strict=True):
        previous = task["previous"]
        assert previous["filter"] == "none"
        assert previous["extracted_final_answer"] is None  # a whole response is not a letter
        assert previous["tool_answer"] == line["filtered_resps"][0]
        assert previous["correct"] is (line["exact_match"] == 1.0)


def test_first_match_extraction_and_this_scorer_disagree_and_the_audit_says_why(tmp_path: Path) -> None:
    # lm-eval's MMLU-Pro filter takes the FIRST "answer is (X)": here a supposition the model later drops.
    response = (
        "Suppose the answer is (A): then the total would be 12, which contradicts the data.\n"
        "Recomputing with the second rule gives 15.\n\nThe answer is (C)."
    )
    line = lm_eval_line(7, mmlu_pro_doc("C"), "C", response, "custom-extract", "A", 0.0)
    path = write_lines(tmp_path / "samples_mmlu_pro_math_2025-05-19T06-53-12.737541.jsonl", [line])
    doc, audit = rescore(tmp_path, "--from", "lm-eval", str(path))
    task = by_id(doc)["mmlu_pro_math/7"]
    assert task["previous"]["extracted_final_answer"] == "A" and task["previous"]["correct"] is False
    assert task["extracted_final_answer"] == "C" and task["correct"] is True
    row = next(r for r in audit.splitlines() if r.startswith("| `mmlu_pro_math/7`"))
    assert "A via lm-eval filter custom-extract → incorrect" in row
    assert f"`{task['rule']}`" in row and "C via" in row
    lead = audit.split("## Totals")[0]
    assert "| lm-eval | 0/1 |" in lead and "| ocllm's scorer | 1/1 |" in lead and "McNemar p" in lead


def test_think_tags_left_in_an_lm_eval_response_are_split_by_rule_1(tmp_path: Path) -> None:
    response = "<think>Maybe FINAL: A. No.</think>FINAL: B"
    path = write_lines(
        tmp_path / "samples_mmlu_pro_x_2025-05-19T06-53-12.737541.jsonl",
        [lm_eval_line(0, mmlu_pro_doc("B"), "B", response, "custom-extract", "[invalid]", 0.0)],
    )
    doc, _ = rescore(tmp_path, "--from", "lm-eval", str(path))
    task = doc["tasks"][0]
    assert task["extracted_final_answer"] == "B" and task["extraction_source"] == "content"
    assert task["reasoning_statements"] == 1  # the A inside <think> is reasoning, counted, not an ambiguity
    assert task["ambiguity"] == "none"


def test_a_prompt_string_with_lettered_lines_gives_the_options(tmp_path: Path) -> None:
    # A task whose doc has no known shape: the options are the prompt's lettered lines, the gold the target.
    prompt = "Q: 1+1?\nA. 3\nB. 2\nAnswer:\n\nQ: Which is largest?\n(A) 4\n(B) 9\n(C) 7\nAnswer:"
    line = lm_eval_line(3, {"question": "Which is largest?"}, "B", "The answer is (B).", "none", "x", 1.0)
    line["arguments"] = {"gen_args_0": {"arg_0": prompt, "arg_1": {"until": ["\n\n"]}}}
    path = write_lines(tmp_path / "samples_custom_2025-05-19T06-53-12.737541.jsonl", [line])
    doc, _ = rescore(tmp_path, "--from", "lm-eval", str(path))
    task = doc["tasks"][0]
    assert task["options"] == ["4", "9", "7"] and task["expected_answer"] == "B" and task["prompt"] == prompt


# --- mmlu-pro -----------------------------------------------------------------------------------------------


def test_mmlu_pro_result_lists_with_response_or_model_outputs(tmp_path: Path) -> None:
    records = [
        mmlu_pro_result(101, "B", "B", "Step by step... The answer is (B)."),
        mmlu_pro_result(102, "D", None, "I cannot decide between C and D."),
        mmlu_pro_result(103, "A", "C", "The answer is (A). Wait, no: it should be (C)... the answer is (A)."),
    ]
    fork = [{**mmlu_pro_result(201, "C", "C", ""), "model_outputs": "So the answer is (C)."}]
    del fork[0]["response"]
    first = write_json(tmp_path / "math_result.json", records)
    second = write_json(tmp_path / "fork" / "law_result.json", fork)
    doc, audit = rescore(tmp_path, "--from", "mmlu-pro", str(first), str(second))
    tasks = by_id(doc)
    assert list(tasks) == ["101", "102", "103", "201"]
    assert tasks["102"]["previous"]["extracted_final_answer"] is None
    assert tasks["102"]["previous"]["correct"] is False  # a null pred is not the answer
    assert tasks["201"]["raw_content"] == "So the answer is (C)."
    assert tasks["101"]["category"] == "math" and tasks["101"]["subset"] == "ori_mmlu-test"
    tool_correct = sum(r["pred"] == r["answer"] for r in [*records, *fork])
    assert f"| MMLU-Pro script | {tool_correct}/4 |" in audit


MMLU_PRO_SCRIPT = FIXTURES / "mmlu_pro" / "evaluate_from_api-2a7ec7e"


def test_result_files_written_by_the_mmlu_pro_script(tmp_path: Path) -> None:
    files = sorted(MMLU_PRO_SCRIPT.glob("*_result.json"))
    records = [r for path in files for r in json.loads(path.read_text())]
    doc, audit = rescore(tmp_path, "--from", "mmlu-pro", str(MMLU_PRO_SCRIPT))
    tasks = by_id(doc)
    assert set(tasks) == {str(r["question_id"]) for r in records}
    for r in records:
        task = tasks[str(r["question_id"])]
        assert task["raw_content"] == r["model_outputs"] and task["options"] == r["options"]
        assert task["expected_answer"] == r["answer"] and task["category"] == r["category"]
        assert task["previous"]["tool_answer"] == r["pred"]
    tool_correct = sum(r["pred"] == r["answer"] for r in records)
    assert f"| MMLU-Pro script | {tool_correct}/{len(records)} |" in audit
    assert any("random guess" in n for n in doc["notices"])  # the summaries beside the results count guesses


def test_a_folder_of_mmlu_pro_results_named_by_subject_is_read_by_their_shape(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A fork that names its files <subject>.json: every JSON list of MMLU-Pro records in the folder is read;
    # the script's summaries (objects) and other JSON files are skipped and said to be.
    folder = tmp_path / "eval_results"
    write_json(folder / "math.json", [mmlu_pro_result(1, "B", "B", "The answer is (B).")])
    write_json(folder / "nested" / "law.json", [mmlu_pro_result(2, "A", "C", "The answer is (C).")])
    write_json(folder / "math_summary.json", {"math": {"corr": 1.0, "wrong": 0.0, "acc": 1.0}})
    write_json(folder / "config.json", [{"model": "m"}])
    (folder / "notes.json").write_text("not json")
    out = tmp_path / "out.json"
    assert main(["rescore", "--from", "mmlu-pro", str(folder), "-o", str(out)]) == 0
    doc = json.loads(out.read_text())
    assert sorted(by_id(doc)) == ["1", "2"]
    said = " ".join(doc["notices"])
    assert "skipped 3 JSON file(s)" in said
    for name in ("math_summary.json", "config.json", "notes.json"):
        assert name in said
    assert "skipped 3 JSON file(s)" in capsys.readouterr().out


def test_a_folder_without_mmlu_pro_results_says_what_it_looked_for(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_json(tmp_path / "math_summary.json", {"math": {"acc": 1.0}})
    assert main(["rescore", "--from", "mmlu-pro", str(tmp_path), "-o", str(tmp_path / "o.json")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "a folder with no mmlu-pro files in it" in err
    assert "*.json" in err and "question_id" in err and "math_summary.json" in err, err


# --- inspect_ai ---------------------------------------------------------------------------------------------


def inspect_samples(path: Path) -> list[dict[str, Any]]:
    if path.suffix == ".json":
        return json.loads(path.read_text())["samples"]
    from ocllm.formats.zip_members import read_member

    with zipfile.ZipFile(path) as archive:
        return [
            json.loads(read_member(archive, info, path))
            for info in archive.infolist()
            if info.filename.startswith("samples/")
        ]


@pytest.mark.parametrize("log", [INSPECT_EVAL, INSPECT_JSON, INSPECT_VARIANT], ids=["eval", "json", "variant"])
def test_inspect_logs_written_by_inspect_ai(log: Path, tmp_path: Path) -> None:
    samples = inspect_samples(log)
    doc, audit = rescore(tmp_path, "--from", "inspect", str(log))
    tasks = by_sample(doc)
    assert set(tasks) == {(str(s["id"]), s["epoch"] - 1) for s in samples}  # an epoch is a sample of its task
    failed = [s for s in samples if s.get("error")]
    assert doc["summary"]["errors"] == len(failed)
    for sample in samples:
        task = tasks[str(sample["id"]), sample["epoch"] - 1]
        assert task["options"] == sample["choices"] and task["expected_answer"] == sample["target"]
        if sample.get("error"):
            assert task["correct"] is None and task["error"]  # an error, never a wrong answer
            continue
        content = sample["output"]["choices"][0]["message"]["content"]
        if isinstance(content, list):
            assert task["raw_content"] == "\n".join(b["text"] for b in content if b["type"] == "text")
            assert task["raw_reasoning"] == "\n".join(b["reasoning"] for b in content if b["type"] == "reasoning")
        else:
            assert task["raw_content"] == content and task["raw_reasoning"] is None
        score = sample["scores"]["choice"]
        assert task["previous"]["extracted_final_answer"] == (score["answer"] or None)  # "" is no answer
        assert task["previous"]["correct"] is (score["value"] == "C")
        assert task["prompt"] == next(m["content"] for m in sample["messages"] if m["role"] == "user")
        truncated = sample["output"]["choices"][0]["stop_reason"] == "max_tokens"
        assert task["truncated"] is truncated
        assert task["category"] == sample.get("metadata", {}).get("category", "ocllm_fixture_mcq")
    scored = [s for s in samples if not s.get("error")]
    assert f"| inspect_ai | {sum(s['scores']['choice']['value'] == 'C' for s in scored)}/{len(scored)} |" in audit


def test_think_tags_inside_an_inspect_text_are_reasoning(tmp_path: Path) -> None:
    doc, _ = rescore(tmp_path, "--from", "inspect", str(INSPECT_VARIANT))
    for sample in inspect_samples(INSPECT_VARIANT):
        content = sample["output"]["choices"][0]["message"]["content"]
        if isinstance(content, str) and "</think>" in content:
            task = by_sample(doc)[str(sample["id"]), sample["epoch"] - 1]
            visible = content.rsplit("</think>", 1)[1]
            assert task["extraction_source"] == "content" and task["extracted_final_answer"] in visible
            assert task["ambiguity"] == "none"  # "ANSWER: A" inside the tags is reasoning, never a conflict


def test_an_inspect_log_with_deflated_members_reads_the_same(tmp_path: Path) -> None:
    # inspect_ai writes zstd members; an archive re-packed with deflate (or written by an older version) is
    # the same log.
    repacked = tmp_path / "repacked.eval"
    with zipfile.ZipFile(repacked, "w", zipfile.ZIP_DEFLATED) as out:
        for sample in inspect_samples(INSPECT_EVAL):
            out.writestr(f"samples/{sample['id']}_epoch_{sample['epoch']}.json", json.dumps(sample))
        header = json.loads(_member(INSPECT_EVAL, "header.json"))
        out.writestr("header.json", json.dumps(header))
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    original, _ = rescore(tmp_path / "a", "--from", "inspect", str(INSPECT_EVAL))
    again, _ = rescore(tmp_path / "b", "--from", "inspect", str(repacked))
    assert by_sample(original) == by_sample(again)


def _member(path: Path, name: str) -> bytes:
    from ocllm.formats.zip_members import read_member

    with zipfile.ZipFile(path) as archive:
        return read_member(archive, archive.getinfo(name), path)


def test_inspect_reasoning_blocks_never_change_the_visible_answer(tmp_path: Path) -> None:
    sample = inspect_sample(
        "r1",
        [
            {"type": "reasoning", "reasoning": "ANSWER: A looks right. Or ANSWER: B?", "redacted": False},
            {"type": "text", "text": "ANSWER: C"},
        ],
        target="C",
        answer="C",
        value="C",
    )
    redacted = inspect_sample(
        "r2",
        [{"type": "reasoning", "reasoning": "gAAAA-opaque", "redacted": True}, {"type": "text", "text": "ANSWER: D"}],
        target="D",
        answer="D",
        value="C",
    )
    log = write_json(
        tmp_path / "log.json", {"version": 2, "eval": {"task": "t", "model": "m"}, "samples": [sample, redacted]}
    )
    doc, _ = rescore(tmp_path, "--from", "inspect", str(log))
    tasks = by_id(doc)
    assert tasks["r1"]["extracted_final_answer"] == "C" and tasks["r1"]["extraction_source"] == "content"
    assert tasks["r1"]["reasoning_statements"] >= 1 and tasks["r1"]["ambiguity"] == "none"
    assert tasks["r2"]["raw_reasoning"] is None  # a redacted block holds no text to read
    assert doc["source"]["model"] == "m"


def test_inspect_verdicts_no_answer_counts_as_wrong_and_partial_as_none(tmp_path: Path) -> None:
    samples = [
        inspect_sample("n", "I am not sure.", target="A", answer="", value="N"),
        inspect_sample("p", "ANSWER: A", target="A", answer="A", value="P"),
        inspect_sample("f", "ANSWER: A", target="A", answer="A", value=1.0),  # type: ignore[arg-type]
    ]
    log = write_json(tmp_path / "log.json", {"eval": {"task": "t"}, "samples": samples})
    doc, _ = rescore(tmp_path, "--from", "inspect", str(log))
    assert [t["previous"]["correct"] for t in doc["tasks"]] == [False, None, True]


def test_an_inspect_log_with_nan_in_its_results_is_read(tmp_path: Path) -> None:
    text = INSPECT_JSON.read_text()
    log = json.loads(text)
    log["results"]["scores"][0]["metrics"]["stderr"]["value"] = float("nan")  # as pydantic writes an unknown
    path = tmp_path / "nan.json"
    path.write_text(json.dumps(log))  # Python's json writes NaN
    doc, _ = rescore(tmp_path, "--from", "inspect", str(path))
    assert len(doc["tasks"]) == len(log["samples"])


def test_logs_of_two_inspect_tasks_name_their_task_in_the_ids(tmp_path: Path) -> None:
    first = write_json(tmp_path / "a.json", {"eval": {"task": "alpha"}, "samples": [inspect_sample(
        "1", "ANSWER: A", target="A", answer="A", value="C")]})  # fmt: skip
    second = write_json(tmp_path / "b.json", {"eval": {"task": "beta"}, "samples": [inspect_sample(
        "1", "ANSWER: B", target="A", answer="B", value="I")]})  # fmt: skip
    doc, _ = rescore(tmp_path, "--from", "inspect", str(first), str(second))
    assert list(by_id(doc)) == ["alpha/1", "beta/1"]


def test_an_incomplete_inspect_log_is_said_to_be_incomplete(tmp_path: Path) -> None:
    log = json.loads(INSPECT_JSON.read_text())
    log["status"] = "cancelled"
    log["samples"] = log["samples"][:2]
    path = write_json(tmp_path / "cut.json", log)
    doc, _ = rescore(tmp_path, "--from", "inspect", str(path))
    planned = log["results"]["total_samples"]
    assert doc["summary"]["tasks_in_suite"] == planned and doc["summary"]["missing"] == planned - 2
    assert doc["summary"]["complete"] is False


def test_the_mmlu_pro_verdict_is_the_scripts_own_comparison(tmp_path: Path) -> None:
    # The script compares pred with answer as strings: "(B)" is not "B" to it, whatever the letter.
    record = mmlu_pro_result(5, "B", "(B)", "The answer is (B).")
    doc, _ = rescore(tmp_path, "--from", "mmlu-pro", str(write_json(tmp_path / "x_result.json", [record])))
    previous = doc["tasks"][0]["previous"]
    assert previous["extracted_final_answer"] == "B" and previous["correct"] is False
    assert doc["tasks"][0]["correct"] is True and doc["summary"]["changed"] == 1


# --- records this scorer cannot score (issue 19, item 11) ---------------------------------------------------
# A record that cannot be an MCQ task (one option, an answer outside its options, no text) is left out and
# listed with why; the rest of the file is audited, and the paired figures are over the rest alone.


def tiger_lab_results(n: int, single_option: list[int]) -> list[dict[str, Any]]:
    """A result list as TIGER-AI-Lab publishes its models' MMLU-Pro results: every category in one list,
    `model_outputs`, some questions (MMLU-Pro's N/A options dropped) left with a single option."""
    records = []
    for i in range(n):
        qid = 6900 + i
        answer = "ABCD"[i % 4]
        pred = answer if i % 3 else "ABCD"[(i + 1) % 4]
        record = {**mmlu_pro_result(qid, answer, pred, f"Let me think. The answer is ({pred})."), "category": "law"}
        del record["response"]
        record["model_outputs"] = f"Let me think. The answer is ({pred})."
        if qid in single_option:
            record.update(options=["the only option"], answer="A", answer_index=0, pred="A")
            record["model_outputs"] = "The answer is (A)."
        records.append(record)
    return records


def test_single_option_mmlu_pro_records_are_left_out_and_the_rest_audited(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    single = [6921, 6950, 6977, 7003, 7099]
    records = tiger_lab_results(200, single)
    path = write_json(tmp_path / "model_outputs_gpt-4o_5shots.json", records)
    doc, audit = rescore(tmp_path, "--from", "mmlu-pro", str(path))
    out = capsys.readouterr().out
    kept = [r for r in records if r["question_id"] not in single]
    assert sorted(by_id(doc)) == sorted(str(r["question_id"]) for r in kept)
    summary = doc["summary"]
    assert summary["unscorable"] == 5 and summary["total"] == 195 and summary["missing"] == 0
    listed = summary["unscorable_records"]
    assert [r["task_id"] for r in listed] == [str(q) for q in single]
    assert all(r["file"] == str(path) and "1 option(s)" in r["reason"] for r in listed)
    tool_correct = sum(r["pred"] == r["answer"] for r in kept)
    assert f"| MMLU-Pro script | {tool_correct}/195 |" in audit  # the paired figures: the 195 alone
    assert "195 tasks both decided" in " ".join(out.split())
    said = "left out 5 records this scorer cannot score: 6921 (1 option(s)"
    assert said in " ".join(out.split()) and said in audit and said in " ".join(doc["notices"])
    for qid in single:
        assert f"`{qid}`" in audit  # the audit lists every one


def test_an_lm_eval_doc_with_one_option_is_left_out(tmp_path: Path) -> None:
    good = [lm_eval_line(i, mmlu_pro_doc("B"), "B", "The answer is (B).", "custom-extract", "B", 1.0) for i in (0, 2)]
    bad_doc = {**mmlu_pro_doc("A"), "options": ["10"], "answer_index": 0}
    bad = lm_eval_line(1, bad_doc, "A", "The answer is (A).", "custom-extract", "A", 1.0)
    path = write_lines(tmp_path / "samples_mmlu_pro_law_2025-05-19T06-53-12.737541.jsonl", [good[0], bad, good[1]])
    doc, audit = rescore(tmp_path, "--from", "lm-eval", str(path))
    assert sorted(by_id(doc)) == ["mmlu_pro_law/0", "mmlu_pro_law/2"]
    assert doc["summary"]["unscorable"] == 1
    (record,) = doc["summary"]["unscorable_records"]
    assert record["task_id"] == "mmlu_pro_law/1" and "1 option(s)" in record["reason"]
    assert record["where"] == "line 2 (doc 1)" and record["file"] == str(path)
    assert "| lm-eval | 2/2 |" in audit


def test_an_inspect_sample_with_two_targets_or_one_choice_is_left_out(tmp_path: Path) -> None:
    log = json.loads(INSPECT_JSON.read_text())
    samples = log["samples"]
    samples[0]["target"] = ["A", "B"]
    samples[1]["choices"] = samples[1]["choices"][:1]
    bad = {str(samples[0]["id"]), str(samples[1]["id"])}
    path = write_json(tmp_path / "log.json", log)
    doc, audit = rescore(tmp_path, "--from", "inspect", str(path))
    assert set(by_id(doc)) == {str(s["id"]) for s in samples} - bad
    summary = doc["summary"]
    assert summary["unscorable"] == 2 and summary["missing"] == 0  # left out, not "never ran"
    reasons = {r["task_id"]: r["reason"] for r in summary["unscorable_records"]}
    assert set(reasons) == bad
    assert "2 targets" in reasons[str(samples[0]["id"])] and "1 option(s)" in reasons[str(samples[1]["id"])]
    kept = [s for s in samples[2:] if not s.get("error")]
    assert f"| inspect_ai | {sum(s['scores']['choice']['value'] == 'C' for s in kept)}/{len(kept)} |" in audit


def test_a_file_of_which_no_record_can_be_scored_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    records = tiger_lab_results(3, [6900, 6901, 6902])
    path = write_json(tmp_path / "x_result.json", records)
    assert main(["rescore", "--from", "mmlu-pro", str(path), "-o", str(tmp_path / "o.json")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and str(path) in err and "no record this scorer can score" in err, err
    assert "1 option(s)" in err and not (tmp_path / "o.json").exists()


# --- several files, wrong files -----------------------------------------------------------------------------


def test_a_task_in_two_files_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    first = write_json(tmp_path / "a_result.json", [mmlu_pro_result(1, "A", "A", "The answer is (A).")])
    second = write_json(tmp_path / "b_result.json", [mmlu_pro_result(1, "A", "A", "The answer is (A).")])
    assert main(["rescore", "--from", "mmlu-pro", str(first), str(second), "-o", str(tmp_path / "o.json")]) == 2
    err = capsys.readouterr().err
    assert "task '1' appears in" in err and "a_result.json" in err and not (tmp_path / "o.json").exists()


def suite_file(tmp: Path) -> Path:
    path = tmp / "suite.jsonl"
    path.write_text(
        json.dumps({"id": "t1", "type": "mcq", "question": "q", "options": ["a", "b"], "answer": "A"}) + "\n"
    )
    return path


def bad_second_line(tmp: Path) -> Path:
    good = lm_eval_line(0, mmlu_pro_doc("B"), "B", "The answer is (B).", "custom-extract", "B", 1.0)
    path = tmp / "samples_t_2025-05-19T06-53-12.737541.jsonl"
    path.write_text(json.dumps(good) + "\n" + '{"doc_id": 1, "resps": [["x"]' + "\n")
    return path


def foreign_zip(tmp: Path) -> Path:
    path = tmp / "photos.eval"
    with zipfile.ZipFile(path, "w") as out:
        out.writestr("cat.txt", "meow")
    return path


def loglikelihood_file(tmp: Path) -> Path:
    """lm-eval's default MMLU task: one log-likelihood request per option, no generated text."""
    line = {
        "doc_id": 0,
        "doc": {"question": "2+2?", "subject": "x", "choices": ["3", "4", "5", "6"], "answer": 1},
        "target": 1,
        "arguments": {f"gen_args_{i}": {"arg_0": "2+2?\nAnswer:", "arg_1": f" {x}"} for i, x in enumerate("ABCD")},
        "resps": [[["-4.3", "False"]], [["-0.5", "True"]], [["-3.9", "False"]], [["-5.1", "False"]]],
        "filtered_resps": [["-4.3", "False"], ["-0.5", "True"], ["-3.9", "False"], ["-5.1", "False"]],
        "filter": "none",
        "metrics": ["acc"],
        "acc": 1.0,
    }
    return write_lines(tmp / "samples_mmlu_x_2025-05-19T06-53-12.737541.jsonl", [line])


def half_of(tmp: Path, path: Path) -> Path:
    cut = tmp / path.name
    data = path.read_bytes()
    cut.write_bytes(data[: len(data) // 2])
    return cut


def without_samples(tmp: Path) -> Path:
    log = json.loads(INSPECT_JSON.read_text())
    del log["samples"]
    return write_json(tmp / "log.json", log)


def fifo(tmp: Path) -> Path:
    path = tmp / "pipe.json"
    os.mkfifo(path)
    return path


def without_gold(tmp: Path) -> Path:
    line = lm_eval_line(0, {"question": "q"}, "B", "The answer is (B).", "none", "x", 1.0)
    line["arguments"] = {"gen_args_0": {"arg_0": "no options here", "arg_1": {}}}
    return write_lines(tmp / "samples_t_2025-05-19T06-53-12.737541.jsonl", [line])


WRONG: dict[str, tuple[str, Any, str]] = {
    "a suite as lm-eval": ("lm-eval", suite_file, "line 1: not an lm-eval samples file"),
    "lm-eval results json as lm-eval": (
        "lm-eval",
        lambda tmp: next((LM_EVAL / "sim-baseline").glob("results_*.json")),
        "not an lm-eval samples file",
    ),
    "an lm-eval file with a cut line": ("lm-eval", bad_second_line, "line 2: not a JSON line"),
    "an lm-eval doc without options": ("lm-eval", without_gold, "cannot tell the options and the answer"),
    "an inspect log as lm-eval": ("lm-eval", lambda tmp: INSPECT_JSON, "not an lm-eval samples file"),
    "an lm-eval file as mmlu-pro": (
        "mmlu-pro",
        lambda tmp: next((LM_EVAL / "sim-baseline").glob("samples_gpqa_*.jsonl")),
        "not an MMLU-Pro result file",
    ),
    "an object as mmlu-pro": ("mmlu-pro", lambda tmp: write_json(tmp / "x.json", {"a": 1}), "not an MMLU-Pro result"),
    "an inspect log as mmlu-pro": ("mmlu-pro", lambda tmp: INSPECT_JSON, "not an MMLU-Pro result"),
    "an lm-eval file as inspect": (
        "inspect",
        lambda tmp: next((LM_EVAL / "sim-baseline").glob("samples_gpqa_*.jsonl")),
        "not an inspect_ai log (.eval: a zip holding header.json and samples/; .json: an object with a samples "
        "list) (invalid JSON at line 2",
    ),
    "a zip of photos as inspect": ("inspect", foreign_zip, "not an inspect_ai log (.eval"),
    "an mmlu-pro list as inspect": (
        "inspect",
        lambda tmp: write_json(tmp / "m.json", [mmlu_pro_result(1, "A", "A", "x")]),
        "not an inspect_ai log",
    ),
    "a folder without lm-eval files": ("lm-eval", lambda tmp: tmp, "a folder with no lm-eval files"),
    "a log-likelihood lm-eval file": ("lm-eval", lambda tmp: loglikelihood_file(tmp), "a log-likelihood task"),
    "lm-eval 0.4.0's JSON array": (
        "lm-eval",
        lambda tmp: write_json(tmp / "pretrained=m_mmlu.jsonl", [{"doc_id": 0}]),
        "a JSON array, as lm-eval before 0.4.2 wrote its samples",
    ),
    "an inspect .eval cut in half": ("inspect", lambda tmp: half_of(tmp, INSPECT_EVAL), "(a damaged or truncated zip)"),
    "an inspect log without samples": ("inspect", lambda tmp: without_samples(tmp), "holds no samples"),
    "an inspect zip as mmlu-pro": ("mmlu-pro", lambda tmp: INSPECT_EVAL, "response) (not UTF-8 text"),
    "an empty mmlu-pro list": ("mmlu-pro", lambda tmp: write_json(tmp / "x_result.json", []), "an empty list"),
    "a pipe": ("inspect", lambda tmp: fifo(tmp), "not a regular file"),
    "a file that is not there": ("inspect", lambda tmp: tmp / "nope.eval", "no such file"),
}


@pytest.mark.parametrize("case", list(WRONG), ids=list(WRONG))
def test_a_wrong_file_is_one_line_naming_it_and_exit_2(
    case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fmt, build, message = WRONG[case]
    path = build(tmp_path)
    out = tmp_path / "out.json"
    assert main(["rescore", "--from", fmt, str(path), "-o", str(out)]) == 2
    lines = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("ocllm: error: ") and message in lines[0], lines
    assert str(path) in lines[0] or path.is_dir()
    assert not out.exists()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--filter", "strict-match"], "--filter chooses among lm-eval's filters: it needs --from lm-eval"),
        (["--from", "inspect", "--filter", "x"], "--filter chooses among lm-eval's filters; inspect files have none"),
        (["--from", "lm-eval", "--filter", "nope"], "no line has filter 'nope' (its filters: "),
    ],
)
def test_filter_misuse_is_one_line(
    args: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = next((LM_EVAL / "sim-baseline").glob("samples_gpqa_*.jsonl"))
    if "inspect" in args:
        target = INSPECT_JSON
    assert main(["rescore", *args, str(target), "-o", str(tmp_path / "o.json")]) == 2
    assert message in capsys.readouterr().err


def test_several_inputs_need_from(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["rescore", str(INSPECT_JSON), str(INSPECT_EVAL), "-o", str(tmp_path / "o.json")]) == 2
    assert "several files need --from" in capsys.readouterr().err


def test_the_output_is_a_document_every_command_reads(tmp_path: Path) -> None:
    doc, _ = rescore(tmp_path, "--from", "inspect", str(INSPECT_JSON))
    assert main(["report", str(tmp_path / "out.json"), "-o", str(tmp_path / "report")]) == 0
    assert (tmp_path / "report" / "report.md").is_file()
    again = tmp_path / "again.json"
    assert main(["rescore", str(tmp_path / "out.json"), "-o", str(again)]) == 0  # re-scored as a saved run
    assert [t["correct"] for t in json.loads(again.read_text())["tasks"]] == [t["correct"] for t in doc["tasks"]]


# --- files in the tools' layouts, written here --------------------------------------------------------------


def write_json(path: Path, data: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))
    return path


def write_lines(path: Path, lines: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def mmlu_pro_doc(answer: str) -> dict[str, Any]:
    options = [f"{n}" for n in range(10, 20)]
    return {"question_id": 7, "question": "Pick one.", "options": options, "answer": answer,
            "answer_index": "ABCDEFGHIJ".index(answer), "cot_content": "", "category": "math", "src": "x"}  # fmt: skip


def lm_eval_line(
    doc_id: int, doc: dict[str, Any], target: str, response: str, filter_name: str, filtered: str, score: float
) -> dict[str, Any]:
    """One line as lm-eval 0.4 writes it with --log_samples (the keys and shapes of the committed fixtures)."""
    prompt = json.dumps([{"role": "user", "content": f"{doc.get('question', '')}\nA. 10\nB. 11\nC. 12"}])
    return {
        "doc_id": doc_id,
        "doc": doc,
        "target": target,
        "arguments": {"gen_args_0": {"arg_0": [prompt], "arg_1": {"until": ["</s>"]}}},
        "resps": [[response]],
        "filtered_resps": [filtered],
        "filter": filter_name,
        "metrics": ["exact_match"],
        "doc_hash": "0" * 64,
        "prompt_hash": "0" * 64,
        "target_hash": "0" * 64,
        "exact_match": score,
    }


def mmlu_pro_result(question_id: int, answer: str, pred: str | None, response: str) -> dict[str, Any]:
    options = ["one", "two", "three", "four", "five"]
    return {"question_id": question_id, "question": "Which?", "options": options, "answer": answer,
            "answer_index": "ABCDE".index(answer), "cot_content": "", "category": "math", "src": "ori_mmlu-test",
            "pred": pred, "response": response}  # fmt: skip


def inspect_sample(sample_id: str, content: Any, *, target: str, answer: str, value: str) -> dict[str, Any]:
    prompt = "Answer the following multiple choice question.\n\nWhich?\n\nA) w\nB) x\nC) y\nD) z"
    return {
        "id": sample_id,
        "epoch": 1,
        "input": "Which?",
        "choices": ["w", "x", "y", "z"],
        "target": target,
        "messages": [{"role": "user", "content": prompt, "source": "input"}],
        "output": {
            "model": "m",
            "choices": [{"message": {"role": "assistant", "content": content}, "stop_reason": "stop"}],
            "usage": {"input_tokens": 10, "output_tokens": 5, "total_tokens": 15},
            "time": 0.5,
        },
        "scores": {"choice": {"value": value, "answer": answer, "explanation": ""}},
    }


# --- issue 19 item 14: a rescored document stays near its input's size -------------------------------------


def test_a_rescored_document_is_at_most_twice_its_input(tmp_path: Path) -> None:
    """A thinking model's MMLU-Pro results (its thinking left in the output, letters weighed there, as Qwen3
    forks publish them): every statement found is kept as evidence, but the document stays within twice the
    input, the raw output and every candidate still in it."""
    options = [f"{n}.5 units of the quantity asked" for n in range(10)]
    weighed = " ".join(f"So the answer is ({letter}). Wait, let me check that again." for letter in "CDEFGH")
    work = "Computing step by step: the first term gives 86, and the second adds a factor of 5. " * 12
    rows = [
        {"question_id": i, "question": "Which value is closest?", "options": options, "answer": "B",
         "answer_index": 1, "cot_content": "", "category": "physics", "src": "ori_mmlu-x", "pred": "B",
         "model_outputs": f"<think>\n{work}{weighed} {work}\n</think>\n\nThe answer is (B)."}
        for i in range(300)
    ]  # fmt: skip
    source = write_json(tmp_path / "physics_result.json", rows)
    doc, _ = rescore(tmp_path, "--from", "mmlu-pro", str(source))
    assert all(len(t["candidates"]) == 7 and t["raw_content"] for t in doc["tasks"])  # nothing left out
    assert (tmp_path / "out.json").stat().st_size <= 2 * source.stat().st_size


def test_what_a_foreign_file_left_out_stays_left_out_in_report_compare_and_a_second_rescore(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The records this scorer cannot score ran: report, compare and a rescore of the rescored document count them
    as left out, never as tasks that never ran (which would advise --resume for another tool's results)."""
    single = [6921, 6930]
    folder = tmp_path / "results"
    folder.mkdir()
    write_json(folder / "model_outputs_gpt-4o_5shots.json", tiger_lab_results(40, single))
    first, _ = rescore(tmp_path, "--from", "mmlu-pro", str(folder))
    rescored = tmp_path / "out.json"
    assert first["summary"]["unscorable"] == 2
    assert main(["rescore", str(rescored), "-o", str(tmp_path / "again.json")]) == 0
    again = json.loads((tmp_path / "again.json").read_text())["summary"]
    assert (again["unscorable"], again["missing"], again["total"]) == (2, 0, 38)
    for args in (["report", str(rescored)], ["report", "--from", "mmlu-pro", str(folder)]):
        capsys.readouterr()
        assert main([*args, "-o", str(tmp_path / "report")]) == 0, args
        said = " ".join(capsys.readouterr().out.split())
        page = (tmp_path / "report" / "report.md").read_text()
        assert "never ran" not in page and "--resume" not in page, args
        assert "left out 2 records this scorer cannot score" in said, args
    capsys.readouterr()
    assert main(["compare", "--from", "mmlu-pro", str(folder), str(folder), "-o", str(tmp_path / "c")]) == 0
    comparison = json.loads((tmp_path / "c" / "comparison.json").read_text())
    assert (comparison["a"]["missing"], comparison["b"]["missing"]) == (0, 0)
