"""`ocllm rescore --from lm-eval` on lm-eval's `ifeval` samples (issue 22).

The lines are written here as lm-eval writes them with --log_samples: its evaluator's keys (doc_id, doc, target,
arguments, resps, filtered_resps, filter, metrics, the hashes), then the four values ifeval's `process_results`
returns: `prompt_level_strict_acc` and `prompt_level_loose_acc` (one bool each), `inst_level_strict_acc` and
`inst_level_loose_acc` (a bool per instruction). The doc is the Hugging Face row lm-eval loaded, its kwargs objects
carrying every argument, null where unused. Only `punctuation:no_comma` is registered while these tests are
written: this scorer's verdict on each answer is computed here from the text (does it hold a comma?), by hand."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from helpers import lm_eval_samples

from ocllm.cli import main

METRICS = ("prompt_level_strict_acc", "inst_level_strict_acc", "prompt_level_loose_acc", "inst_level_loose_acc")
NULLS = {"num_highlights": None, "relation": None, "num_words": None, "keywords": None, "language": None,
         "end_phrase": None, "section_spliter": None, "num_sections": None}  # fmt: skip
NO_COMMA = "punctuation:no_comma"


def doc(key: int, prompt: str, ids: list[str] | None = None) -> dict[str, Any]:
    ids = ids or [NO_COMMA]
    return {"key": key, "prompt": prompt, "instruction_id_list": ids, "kwargs": [dict(NULLS) for _ in ids]}


def line(doc_id: int, the_doc: dict[str, Any], response: str, strict: list[bool], loose: list[bool]) -> dict[str, Any]:
    chat = json.dumps([{"role": "user", "content": the_doc["prompt"]}])
    gen = {"until": [], "do_sample": False, "temperature": 0.0, "max_gen_toks": 1280}
    return {
        "doc_id": doc_id,
        "doc": the_doc,
        "target": 0,  # ifeval.yaml: doc_to_target 0
        "arguments": {"gen_args_0": {"arg_0": chat, "arg_1": gen}},
        "resps": [[response]],
        "filtered_resps": [response],  # no filters: the response itself
        "filter": "none",
        "metrics": list(METRICS),
        "doc_hash": "0" * 64,
        "prompt_hash": "1" * 64,
        "target_hash": "2" * 64,
        "prompt_level_strict_acc": all(strict),
        "inst_level_strict_acc": strict,
        "prompt_level_loose_acc": all(loose),
        "inst_level_loose_acc": loose,
    }


def rescore(tmp: Path, path: Path) -> tuple[dict[str, Any], str]:
    out, audit = tmp / "out.json", tmp / "audit.md"
    assert main(["rescore", "--from", "lm-eval", str(path), "-o", str(out), "--report", str(audit)]) == 0
    return json.loads(out.read_text()), audit.read_text()


PLAIN = "The river wakes slowly. Mist lifts from the water and a heron stands still."
WITH_COMMA = "Light, then dark, then light again: the lighthouse keeps its rhythm."
THOUGHT = "<think>Hmm, no commas, so short sentences.</think>Thank you so much. I cannot come this time."
ANSWERS = {1001: PLAIN, 1162: WITH_COMMA, 1187: THOUGHT, 2004: ""}


def ifeval_lines() -> list[dict[str, Any]]:
    return [
        line(0, doc(1001, "Describe a river at dawn without commas."), PLAIN, [True], [True]),
        line(1, doc(1162, "Write a riddle with no commas."), WITH_COMMA, [False], [False]),
        # lm-eval checks the text it kept: a <think> block left in it holds commas, so it fails; the visible
        # answer this scorer checks holds none.
        line(2, doc(1187, "Decline an invitation without a comma."), THOUGHT, [False], [False]),
        line(3, doc(2004, "List three uses of a paperclip, avoiding commas."), "", [False], [False]),
    ]


def test_lm_eval_ifeval_samples_are_rescored_with_its_four_metrics_beside(tmp_path: Path) -> None:
    document, audit = rescore(tmp_path, lm_eval_samples(tmp_path / "lm", "ifeval", ifeval_lines()))
    tasks = {t["task_id"]: t for t in document["tasks"]}
    # Ids are IFEval's keys, as `ocllm import ifeval` names the same prompts: runs of both compare task by task.
    assert list(tasks) == ["ifeval/1001", "ifeval/1162", "ifeval/1187", "ifeval/2004"]
    visible = {1001: PLAIN, 1162: WITH_COMMA, 1187: "Thank you so much. I cannot come this time.", 2004: ""}
    for key, text in visible.items():
        record = tasks[f"ifeval/{key}"]
        ours = bool(text.strip()) and "," not in text  # an empty answer follows nothing
        assert record["task_type"] == "instructions"
        assert record["correct"] is ours, key
        assert record["instructions_followed"] == [ours]
        assert record["instructions"] == [{"id": NO_COMMA, "kwargs": {}}]  # the doc's nulls dropped
        assert record["raw_content"] == ANSWERS[key]
    assert tasks["ifeval/2004"]["rule"] == "empty_answer"
    # lm-eval's own verdicts, kept under previous: its four metrics as it wrote them.
    previous = tasks["ifeval/1187"]["previous"]
    assert previous["tool"] == "lm-eval"
    assert previous["correct"] is False  # prompt_level_strict_acc
    assert previous["correct_loose"] is False
    assert previous["instructions_followed"] == [False]
    assert previous["instructions_followed_loose"] == [False]
    assert previous["metrics"] == {"prompt_level_strict_acc": False, "inst_level_strict_acc": [False],
                                   "prompt_level_loose_acc": False, "inst_level_loose_acc": [False]}  # fmt: skip
    assert tasks["ifeval/1001"]["previous"]["correct"] is True
    assert tasks["ifeval/1001"]["previous"]["metrics"]["inst_level_loose_acc"] == [True]
    assert tasks["ifeval/1001"]["prompt"] == "Describe a river at dawn without commas."  # the chat's user message
    # One decision changed: the answer whose <think> block held the commas.
    assert document["summary"]["changed"] == 1
    assert "ifeval/1187" in audit
    # The changed decision reads in the type's words, on both sides (not as a letter that is "none").
    row = next(line for line in audit.splitlines() if "ifeval/1187" in line and "|" in line)
    assert "0 of 1 followed" in row and "1 of 1 followed" in row, row


def test_a_doc_with_an_unknown_instruction_is_left_out_with_why(tmp_path: Path) -> None:
    haiku = doc(77, "Answer in haiku.", ["detectable_format:haiku"])
    lines = [*ifeval_lines()[:2], line(2, haiku, "ok", [True], [True])]
    document, _ = rescore(tmp_path, lm_eval_samples(tmp_path / "lm", "ifeval", lines))
    assert [t["task_id"] for t in document["tasks"]] == ["ifeval/1001", "ifeval/1162"]
    (left_out,) = document["summary"]["unscorable_records"]
    assert left_out["task_id"] == "ifeval/77"
    assert "unknown instruction id 'detectable_format:haiku'" in left_out["reason"]


def test_a_file_none_of_whose_docs_can_be_checked_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = [line(0, doc(5, "Answer.", ["punctuation:no_semicolon"]), "ok", [True], [True])]
    path = lm_eval_samples(tmp_path / "lm", "ifeval", lines)
    assert main(["rescore", "--from", "lm-eval", str(path), "-o", str(tmp_path / "o.json")]) == 2
    err = [x for x in capsys.readouterr().err.splitlines() if x.strip()]
    assert len(err) == 1 and err[0].startswith("ocllm: error: "), err
    assert "no record this scorer can score" in err[0] and "punctuation:no_semicolon" in err[0]


def test_a_renamed_ifeval_task_is_read_by_the_shape_of_its_docs(tmp_path: Path) -> None:
    # A task of another name (a copy of ifeval.yaml under a user's name) whose docs are IFEval's rows.
    document, _ = rescore(tmp_path, lm_eval_samples(tmp_path / "lm", "my_instructions", ifeval_lines()[:2]))
    assert [t["task_id"] for t in document["tasks"]] == ["my_instructions/1001", "my_instructions/1162"]
    assert [t["correct"] for t in document["tasks"]] == [True, False]


def test_with_repeats_each_response_is_a_sample_and_lm_evals_verdict_is_the_docs(tmp_path: Path) -> None:
    # repeats: 2 -> resps [[r1, r2]]; ifeval's process_results scores the filter's first response only, once per doc.
    repeated = {**line(0, doc(1001, "Describe a river without commas."), PLAIN, [True], [True]),
                "resps": [[PLAIN, WITH_COMMA]]}  # fmt: skip
    document, _ = rescore(tmp_path, lm_eval_samples(tmp_path / "lm", "ifeval", [repeated]))
    samples = [(t["task_id"], t["sample"], t["correct"]) for t in document["tasks"]]
    assert samples == [("ifeval/1001", 0, True), ("ifeval/1001", 1, False)]  # the second response has commas
    for record in document["tasks"]:
        assert record["previous"]["correct"] is True
        assert record["previous"]["verdict_of"] == "task" and record["previous"]["repeats"] == 2


def test_a_response_holding_a_lone_surrogate_is_a_failed_sample_as_a_live_answer_is(tmp_path: Path) -> None:
    # "\udc00" is valid JSON but no text: a live server's answer with it is a malformed response, never a verdict.
    # It used to reach the output writer, which cannot encode it (UnicodeEncodeError).
    broken = "Fine words \udc00 then more."
    lines = [*ifeval_lines()[:1], line(1, doc(1162, "Write a riddle with no commas."), broken, [True], [True])]
    document, _ = rescore(tmp_path, lm_eval_samples(tmp_path / "lm", "ifeval", lines))
    tasks = {t["task_id"]: t for t in document["tasks"]}
    failed = tasks["ifeval/1162"]
    assert failed["correct"] is None and failed["error"].startswith("malformed response body: ")
    assert "lone UTF-16 surrogate (\\udc00 at character 11)" in failed["error"]
    assert tasks["ifeval/1001"]["correct"] is True  # the rest is scored as ever
    assert document["summary"]["errors"] == 1
