"""Other tools' repeated samples read as samples of one task (issue 21): inspect_ai's epochs and lm-eval's
`repeats` become k samples of the task (`Sample.sample` 0 to k-1), never k tasks.

inspect_ai counts epochs from 1 (`EvalSample.epoch`; its readers default to epoch 1) and writes a `.eval` log's
sample members as the samples finish (`samples/<id>_epoch_<n>.json`, epoch by epoch in practice) and a `.json`
log's `samples` sorted by (epoch, id) (`sort_samples` in inspect_ai/log/_log.py). lm-eval asks a request with
`repeats = k` k times and logs the k responses as one line's `resps` ([[r1, ..., rk]]); each filter then reduces
them (`take_first`, `majority_vote`, `take_first_k`) to `filtered_resps`, which its metric scores once per doc.
The files below are written in those layouts; every expected value is written by hand or counted from the
files the test wrote, never taken from the code under test."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path
from typing import Any

import pytest
from helpers import LM_EVAL_STAMP as STAMP
from helpers import lm_eval_samples as samples_file

from ocllm.cli import main
from ocllm.documents import UnscorableRecord
from ocllm.formats.harnesses import read_harness_files
from ocllm.formats.records import SavedRecord

FIXTURES = Path(__file__).parent / "fixtures"
INSPECT_EVAL = next((FIXTURES / "inspect" / "0.3.285").glob("*.eval"))  # epochs = 2, written by inspect_ai


def rescore(tmp: Path, *args: str) -> dict[str, Any]:
    out = tmp / "out.json"
    assert main(["rescore", *args, "-o", str(out), "--report", str(tmp / "audit.md")]) == 0
    return json.loads(out.read_text())


def read(name: str, paths: list[Path]) -> tuple[list[SavedRecord], list[UnscorableRecord]]:
    run = read_harness_files(name, paths)
    return list(run.records), run.unscorable


# --- inspect_ai: epochs ---------------------------------------------------------------------------------

PROMPT = "Answer the following multiple choice question.\n\nWhich?\n\nA) w\nB) x\nC) y\nD) z"


def inspect_sample(sample_id: Any, epoch: int, content: str, value: str, choices: list[str] | None = None) -> dict[
        str, Any]:  # fmt: skip
    """One EvalSample as inspect_ai 0.3 writes it (the fields this reader uses; the transcript left out)."""
    return {
        "id": sample_id,
        "epoch": epoch,
        "input": "Which?",
        "choices": choices or ["w", "x", "y", "z"],
        "target": "B",
        "messages": [{"role": "user", "content": PROMPT, "source": "input"}],
        "output": {
            "model": "m",
            "choices": [{"message": {"role": "assistant", "content": content}, "stop_reason": "stop"}],
            "usage": {"input_tokens": 10, "output_tokens": 5, "total_tokens": 15},
            "time": 0.5,
        },
        "scores": {"choice": {"value": value, "answer": content.removeprefix("ANSWER: "), "explanation": content}},
        "metadata": {},
        "events": [],
    }


# Three epochs of two questions: per (id, epoch) the answer given and inspect's verdict on it.
ANSWERS = {("q1", 1): "B", ("q1", 2): "C", ("q1", 3): "B", ("q2", 1): "A", ("q2", 2): "B", ("q2", 3): "B"}


def epoch_samples() -> list[dict[str, Any]]:
    """Epoch by epoch, as inspect_ai finishes them (and as its .json sort puts them: by epoch, then id)."""
    return [
        inspect_sample(sid, epoch, f"ANSWER: {ANSWERS[sid, epoch]}", "C" if ANSWERS[sid, epoch] == "B" else "I")
        for epoch in (1, 2, 3)
        for sid in ("q1", "q2")
    ]


def header(epochs: int, total: int) -> dict[str, Any]:
    return {
        "version": 2,
        "status": "success",
        "eval": {"task": "mcq", "model": "m", "config": {"epochs": epochs}},
        "results": {"total_samples": total, "completed_samples": total},
    }


def eval_log(path: Path, samples: list[dict[str, Any]], epochs: int) -> Path:
    """A .eval zip: the journal's start, the sample members in the order given, header.json last."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("_journal/start.json", json.dumps({"version": 2, "eval": header(epochs, 0)["eval"]}))
        for sample in samples:
            archive.writestr(f"samples/{sample['id']}_epoch_{sample['epoch']}.json", json.dumps(sample))
        archive.writestr("header.json", json.dumps(header(epochs, len(samples))))
    return path


def json_log(path: Path, samples: list[dict[str, Any]], epochs: int) -> Path:
    path.write_text(json.dumps({**header(epochs, len(samples)), "samples": samples}))
    return path


@pytest.mark.parametrize("kind", ["eval", "json"])
def test_inspect_epochs_are_samples_of_one_task_grouped_in_epoch_order(kind: str, tmp_path: Path) -> None:
    write = eval_log if kind == "eval" else json_log
    log = write(tmp_path / f"log.{kind}", epoch_samples(), 3)
    records, unscorable = read("inspect", [log])
    assert unscorable == []
    # Grouped by task, in epoch order: q1's three epochs, then q2's.
    assert [(r.task.id, r.sample.sample) for r in records] == [
        ("q1", 0), ("q1", 1), ("q1", 2), ("q2", 0), ("q2", 1), ("q2", 2)]  # fmt: skip
    for record in records:
        epoch = record.sample.sample + 1  # inspect counts epochs from 1
        answer = ANSWERS[record.task.id, epoch]
        assert record.sample.task_id == record.task.id
        assert record.sample.content == f"ANSWER: {answer}"
        # Each epoch's own verdict, never another epoch's.
        assert record.previous["tool_answer"] == answer
        assert record.previous["correct"] is (answer == "B")


def test_inspect_epochs_in_the_rescored_document_carry_their_sample_index(tmp_path: Path) -> None:
    """The log inspect_ai wrote itself (epochs = 2): one task per question, two samples each."""
    from ocllm.formats.zip_members import read_member

    with zipfile.ZipFile(INSPECT_EVAL) as archive:
        samples = [
            json.loads(read_member(archive, info, INSPECT_EVAL))
            for info in archive.infolist()
            if info.filename.startswith("samples/")
        ]
    doc = rescore(tmp_path, "--from", "inspect", str(INSPECT_EVAL))
    tasks = doc["tasks"]
    ids = list(dict.fromkeys(str(s["id"]) for s in samples))
    assert [(t["task_id"], t["sample"]) for t in tasks] == [(i, e) for i in ids for e in (0, 1)]
    by_key = {(str(s["id"]), s["epoch"]): s for s in samples}
    for task in tasks:
        sample = by_key[task["task_id"], task["sample"] + 1]
        content = sample["output"]["choices"][0]["message"]["content"] if not sample.get("error") else None
        if isinstance(content, list):  # blocks: the text ones are the content
            content = "\n".join(b["text"] for b in content if b["type"] == "text")
        assert task["raw_content"] == content
        if not sample.get("error"):  # a failed sample has no score
            assert task["previous"]["correct"] is (sample["scores"]["choice"]["value"] == "C")
    assert doc["summary"]["tasks_in_suite"] == len(samples)  # inspect's total_samples counts every epoch


def test_an_unscorable_epoch_names_its_epoch(tmp_path: Path) -> None:
    samples = epoch_samples()
    broken = next(s for s in samples if (s["id"], s["epoch"]) == ("q2", 2))
    broken["choices"] = ["only"]
    for kind, write in (("eval", eval_log), ("json", json_log)):
        log = write(tmp_path / f"log.{kind}", samples, 3)
        records, unscorable = read("inspect", [log])
        assert [(r.task.id, r.sample.sample) for r in records] == [
            ("q1", 0), ("q1", 1), ("q1", 2), ("q2", 0), ("q2", 2)]  # fmt: skip
        assert [u.task_id for u in unscorable] == ["q2"]
        where = unscorable[0].where
        assert ("samples/q2_epoch_2.json" in where) if kind == "eval" else ("epoch 2" in where), where


def test_an_epoch_given_twice_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    samples = epoch_samples()
    again = dict(samples[0])
    log = json_log(tmp_path / "log.json", [*samples, again], 3)
    assert main(["rescore", "--from", "inspect", str(log), "-o", str(tmp_path / "out.json")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("ocllm: error: ") and len(err.splitlines()) == 1
    assert "'q1'" in err and "twice" in err


def test_a_single_epoch_log_keeps_its_ids_and_sample_zero(tmp_path: Path) -> None:
    samples = [s for s in epoch_samples() if s["epoch"] == 1]
    log = eval_log(tmp_path / "log.eval", samples, 1)
    records, _ = read("inspect", [log])
    assert [(r.task.id, r.sample.sample) for r in records] == [("q1", 0), ("q2", 0)]


# --- lm-eval: repeats -----------------------------------------------------------------------------------

GSM8K_DOC = {"question": "Betty needs $100...", "answer": "She needs 100 - 95 = <<100-95=5>>5 more.\n#### 5"}
# Four responses to one doc (repeats: 4): the first says 5, then 6, 5, 5.
GSM8K_RESPONSES = ["The answer is 5.", "The answer is 6.", "So the answer is 5.", "The answer is 5."]


def lm_eval_line(doc_id: int, doc: dict[str, Any], target: Any, responses: list[str], filter_name: str,
                 filtered: Any, metric: float) -> dict[str, Any]:  # fmt: skip
    """One line as lm-eval 0.4 logs a generate_until doc with `repeats: k`: its one request's k responses in
    `resps`, the filter's reduction of them in `filtered_resps`, its metric computed on that."""
    prompt = json.dumps([{"role": "user", "content": f"Q: {doc.get('question', '')}\nA. 5\nB. 6\nC. 7"}])
    return {
        "doc_id": doc_id,
        "doc": doc,
        "target": target,
        "arguments": {"gen_args_0": {"arg_0": [prompt], "arg_1": {"until": ["Q:"], "do_sample": True}}},
        "resps": [responses],
        "filtered_resps": [filtered],
        "filter": filter_name,
        "metrics": ["exact_match"],
        "doc_hash": "0" * 64,
        "prompt_hash": "1" * 64,
        "target_hash": "2" * 64,
        "exact_match": metric,
    }


def self_consistency_lines() -> list[dict[str, Any]]:
    # gsm8k-cot-self-consistency.yaml's filters: score-first (regex, take_first) and maj@4 (regex,
    # majority_vote, take_first), each line's filtered_resps the one string its last take_first left.
    return [
        lm_eval_line(0, GSM8K_DOC, "5", GSM8K_RESPONSES, "score-first", "5", 1.0),
        lm_eval_line(0, GSM8K_DOC, "5", GSM8K_RESPONSES, "maj@4", "5", 1.0),
    ]


def test_lm_eval_repeats_are_samples_of_one_doc(tmp_path: Path) -> None:
    path = samples_file(tmp_path, "gsm8k_cot_self_consistency", self_consistency_lines())
    records, unscorable = read("lm-eval", [path])
    assert unscorable == []
    assert [(r.task.id, r.sample.sample) for r in records] == [("gsm8k_cot_self_consistency/0", i) for i in range(4)]
    assert [r.sample.content for r in records] == GSM8K_RESPONSES  # sample i is the i-th response
    assert all(r.sample.task_id == r.task.id and r.task.answer == "5" for r in records)
    # The filter's verdict is one per doc: the same under every sample, marked as the task's.
    for record in records:
        previous = record.previous
        assert previous["filter"] == "score-first"  # the file's first filter: no flexible-extract here
        assert previous["correct"] is True and previous["verdict_of"] == "task" and previous["repeats"] == 4
        assert set(previous["filters"]) == {"score-first", "maj@4"}


def test_lm_eval_maj_at_k_verdict_is_kept_under_every_sample(tmp_path: Path) -> None:
    path = samples_file(tmp_path, "gsm8k_cot_self_consistency", self_consistency_lines())
    records = list(read_harness_files("lm-eval", [path], "maj@4").records)
    assert len(records) == 4
    assert all(r.previous["filter"] == "maj@4" and r.previous["tool_answer"] == "5" for r in records)
    assert all(r.previous["correct"] is True for r in records)


def test_lm_eval_repeats_of_a_multiple_choice_doc(tmp_path: Path) -> None:
    doc = {"question": "Pick.", "choices": ["5", "6", "7"], "answer": 1}
    responses = ["The answer is (B).", "The answer is (A).", "The answer is (B)."]
    lines = [lm_eval_line(3, doc, 1, responses, "maj@3", "(B)", 1.0)]
    path = samples_file(tmp_path, "mmlu_gen", lines)
    doc_out = rescore(tmp_path, "--from", "lm-eval", str(path))
    tasks = doc_out["tasks"]
    assert [(t["task_id"], t["sample"]) for t in tasks] == [("mmlu_gen/3", 0), ("mmlu_gen/3", 1), ("mmlu_gen/3", 2)]
    assert [t["raw_content"] for t in tasks] == responses
    assert [t["extracted_final_answer"] for t in tasks] == ["B", "A", "B"]  # each response decided on its own
    assert all(t["previous"]["extracted_final_answer"] == "B" and t["previous"]["verdict_of"] == "task"
               for t in tasks)  # fmt: skip


def test_lm_eval_one_response_reads_as_before(tmp_path: Path) -> None:
    lines = [lm_eval_line(0, GSM8K_DOC, "5", GSM8K_RESPONSES[:1], "none", GSM8K_RESPONSES[0], 1.0)]
    path = samples_file(tmp_path, "gsm8k_cot", lines)
    records, _ = read("lm-eval", [path])
    assert [(r.task.id, r.sample.sample) for r in records] == [("gsm8k_cot/0", 0)]
    assert "verdict_of" not in records[0].previous and "repeats" not in records[0].previous
    assert records[0].previous["extracted_final_answer"] is None  # filter none: the response, not an extraction


def test_lm_eval_filter_none_with_repeats_logs_no_extraction_for_any_sample(tmp_path: Path) -> None:
    # No filter_list: lm-eval's default filter `none` (take_first) keeps the first response whole.
    lines = [lm_eval_line(0, GSM8K_DOC, "5", GSM8K_RESPONSES, "none", GSM8K_RESPONSES[0], 1.0)]
    path = samples_file(tmp_path, "gsm8k_cot", lines)
    records, _ = read("lm-eval", [path])
    assert len(records) == 4
    assert all(r.previous["extracted_final_answer"] is None and r.previous["tool_answer"] is None for r in records)


def test_an_unscorable_repeat_names_its_response(tmp_path: Path) -> None:
    responses: list[Any] = ["The answer is (B).", None, "The answer is (A)."]
    good = {"question": "Pick.", "choices": ["5", "6", "7"], "answer": 1}
    single = {"question": "Pick.", "choices": ["5"], "answer": 0}
    lines = [lm_eval_line(0, good, 1, responses, "none", "The answer is (B).", 1.0),
             lm_eval_line(1, single, 0, ["(A)", "(A)"], "none", "(A)", 1.0)]  # fmt: skip
    path = samples_file(tmp_path, "mmlu_gen", lines)
    records, unscorable = read("lm-eval", [path])
    assert [(r.task.id, r.sample.sample) for r in records] == [("mmlu_gen/0", 0), ("mmlu_gen/0", 2)]
    assert [(u.task_id, u.where) for u in unscorable] == [
        ("mmlu_gen/0", "line 1 (doc 0, resps[0][1])"),
        ("mmlu_gen/1", "line 2 (doc 1, resps[0][0])"),
        ("mmlu_gen/1", "line 2 (doc 1, resps[0][1])"),
    ]


def test_a_rescored_document_of_epochs_is_read_back_sample_by_sample(tmp_path: Path) -> None:
    """The document `rescore --from` wrote holds several records of one task: a rescore of it, and its report,
    read them as the samples they are (the tool's verdicts kept), never as a task given twice."""
    log = eval_log(tmp_path / "log.eval", epoch_samples(), 3)
    first = rescore(tmp_path, "--from", "inspect", str(log))
    again = tmp_path / "again.json"
    assert main(["rescore", str(tmp_path / "out.json"), "-o", str(again)]) == 0
    tasks = json.loads(again.read_text())["tasks"]
    assert [(t["task_id"], t["sample"]) for t in tasks] == [(t["task_id"], t["sample"]) for t in first["tasks"]]
    assert [t["previous"] for t in tasks] == [t["previous"] for t in first["tasks"]]  # inspect's, per epoch
    assert main(["report", str(tmp_path / "out.json"), "-o", str(tmp_path / "report")]) == 0


def test_lm_eval_repeats_are_said_when_its_results_file_names_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = samples_file(tmp_path / "run", "gsm8k_cot_self_consistency", self_consistency_lines())
    results = {"configs": {"gsm8k_cot_self_consistency": {"task": "gsm8k_cot_self_consistency", "repeats": 4}},
               "model_name": "m"}  # fmt: skip
    (tmp_path / "run" / f"results_{STAMP}.json").write_text(json.dumps(results))
    capsys.readouterr()
    doc = rescore(tmp_path, "--from", "lm-eval", str(path))
    said = " ".join(capsys.readouterr().out.split())
    assert "lm-eval repeats" in said and "verdict_of" in said
    assert any("lm-eval repeats" in notice for notice in doc["notices"])
    assert doc["source"]["model"] == "m"


def test_a_doc_s_one_verdict_is_not_set_against_each_of_its_samples(tmp_path: Path) -> None:
    # lm-eval's filter judged the doc once (right: its first response says 5); this scorer judges each of the four
    # responses, one of which (6) is wrong. That sample is not a "changed" decision, nor a pair of the audit: the
    # doc's verdict is not a verdict on it.
    path = samples_file(tmp_path, "gsm8k_cot_self_consistency", self_consistency_lines())
    report = tmp_path / "audit.md"
    out = tmp_path / "out.json"
    assert main(["rescore", "--from", "lm-eval", str(path), "-o", str(out), "--report", str(report)]) == 0
    summary = json.loads(out.read_text())["summary"]
    assert summary["samples_per_task"] == 4 and summary["correct"] == 3
    assert summary["changed"] == 0
    assert "6" not in [line for line in report.read_text().splitlines() if line.startswith("| gsm8k")]
