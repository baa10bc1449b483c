"""A lone UTF-16 surrogate (`"\\udc00"`: valid JSON, no character, nothing a UTF-8 file can hold) outside a response
(issue 29, section 5's leftover). One rule for every saved record (docs/lanes.md, "Inputs that are not
text"): in the response, a failed sample of kind `malformed`; in the task (question, options, answer...), the
record is unscorable, left out and counted apart with why; in what the saved file says besides (`previous`, the
fields carried through), each lone surrogate is replaced by U+FFFD. A suite line or a dataset row holding one is
refused in one line, exit 2. Real files, the real command line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ocllm.cli import main
from ocllm.files.surrogates import file_may_hold_surrogate, first_lone_surrogate, may_hold_surrogate

NO_SERVER = ["--base-url", "http://127.0.0.1:9/v1", "--model", "m"]


def one_line(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    """Run the CLI, expect exit 2 and one line on stderr; that line."""
    capsys.readouterr()
    assert main(list(args)) == 2
    err = [x for x in capsys.readouterr().err.splitlines() if x.strip()]
    assert len(err) == 1 and err[0].startswith("ocllm: error: "), err
    return err[0]


def mcq(task_id: str, **fields: Any) -> dict[str, Any]:
    record = {"task_id": task_id, "task_type": "mcq", "category": "c", "question": "Which?", "options": ["red", "blue"],
              "expected_answer": "A", "raw_content": "Answer: A", "raw_reasoning": None, "finish_reason": "stop",
              "correct": True, "extracted_final_answer": "A"}  # fmt: skip
    return {**record, **fields}


def rescored(tmp_path: Path, records: list[dict[str, Any]]) -> dict[str, Any]:
    # json.dumps escapes every non-ASCII character (ensure_ascii), as the old harness wrote its files: the
    # surrogate is the six characters \udc00 in the file, which is valid JSON.
    src = tmp_path / "old.json"
    src.write_text(json.dumps({"run_id": "r", "lane": "A", "summary": {}, "tasks": records}))
    out = tmp_path / "out.json"
    assert main(["rescore", str(src), "-o", str(out)]) == 0
    return json.loads(out.read_text(encoding="utf-8"))


def test_an_old_harness_record_whose_task_is_not_text_is_left_out_with_why(tmp_path: Path) -> None:
    document = rescored(tmp_path, [
        mcq("fine"),
        mcq("question", question="Which \udc00 one?"),
        mcq("option", options=["red", "bl\ud800ue"]),  # a lone high surrogate: yajl would have read it as "?"
        mcq("pair", question="Which \U0001f600 one?"),  # a valid pair, escaped: text, scored as ever
    ])  # fmt: skip
    assert sorted(t["task_id"] for t in document["tasks"]) == ["fine", "pair"]
    assert all(t["correct"] is True for t in document["tasks"])
    left = {r["task_id"]: r for r in document["summary"]["unscorable_records"]}
    assert sorted(left) == ["option", "question"]
    assert left["question"]["reason"] == (
        "its question holds a lone UTF-16 surrogate (\\udc00 at character 6), which is not text: the task cannot "
        "be scored as it was asked"
    )
    assert "its options[1] holds a lone UTF-16 surrogate (\\ud800 at character 2)" in left["option"]["reason"]
    assert document["summary"]["unscorable"] == 2


def test_a_response_that_is_not_text_fails_and_the_files_own_fields_are_repaired_visibly(tmp_path: Path) -> None:
    document = rescored(tmp_path, [
        mcq("content", raw_content="Answer: A \udc00", extracted_final_answer="A \udc00"),
        mcq("high", raw_content="Answer: A \ud83d"),  # a high surrogate with no low one after it
        mcq("previous", extracted_final_answer="\udc00A", usage={"n\udfff": 1}),
        mcq("prompt", prompt="Which \udfff?"),  # the prompt as it was sent is the task's: left out
    ])  # fmt: skip
    tasks = {t["task_id"]: t for t in document["tasks"]}
    for task_id, where in (("content", "\\udc00 at character 10"), ("high", "\\ud83d at character 10")):
        assert tasks[task_id]["correct"] is None, task_id
        assert tasks[task_id]["error"] == (
            f"malformed response body: its content holds a lone UTF-16 surrogate ({where}), which is not text"
        )
    assert tasks["content"]["previous"]["extracted_final_answer"] == "A \ufffd"  # the old harness's, repaired
    assert tasks["previous"]["correct"] is True  # the response is text: scored
    assert tasks["previous"]["previous"]["extracted_final_answer"] == "\ufffdA"
    assert tasks["previous"]["usage"] == {"n\ufffd": 1}
    assert document["summary"]["errors"] == 2
    (left,) = document["summary"]["unscorable_records"]
    assert left["task_id"] == "prompt" and left["reason"].startswith("its prompt holds a lone UTF-16 surrogate")


def lm_eval_line(doc_id: int, doc: dict[str, Any], response: str, filtered: str) -> dict[str, Any]:
    chat = json.dumps([{"role": "user", "content": doc["question"]}])
    return {"doc_id": doc_id, "doc": doc, "target": 0, "arguments": {"gen_args_0": {"arg_0": chat, "arg_1": {}}},
            "resps": [[response]], "filtered_resps": [filtered], "filter": "none", "metrics": ["exact_match"],
            "exact_match": 1.0}  # fmt: skip


def test_lm_eval_records_follow_the_same_rule(tmp_path: Path) -> None:
    lines = [
        lm_eval_line(0, {"question": "Which?", "choices": ["red", "blue"], "answer": 0}, "Answer: A", "A"),
        lm_eval_line(1, {"question": "Which?", "choices": ["r\udc00d", "blue"], "answer": 0}, "Answer: A", "A"),
        lm_eval_line(2, {"question": "Which?", "choices": ["red", "blue"], "answer": 0}, "Answer: A", "A\udc00"),
    ]
    folder = tmp_path / "lm"
    folder.mkdir()
    path = folder / "samples_colours_2026-12-01T10-00-00.000000.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    out = tmp_path / "out.json"
    assert main(["rescore", "--from", "lm-eval", str(path), "-o", str(out)]) == 0
    document = json.loads(out.read_text(encoding="utf-8"))
    tasks = {t["task_id"]: t for t in document["tasks"]}
    assert sorted(tasks) == ["colours/0", "colours/2"]
    assert tasks["colours/2"]["correct"] is True
    assert tasks["colours/2"]["previous"]["tool_answer"] == "A\ufffd"  # lm-eval's filtered answer, repaired
    (left,) = document["summary"]["unscorable_records"]
    assert left["task_id"] == "colours/1"
    assert "its options[0] holds a lone UTF-16 surrogate (\\udc00 at character 1)" in left["reason"]


def test_a_suite_line_that_is_not_text_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    line = {"id": "q1", "type": "mcq", "question": "Which?", "options": ["red", "bl\udc00e"], "answer": "A",
            "category": "c"}  # fmt: skip
    path = tmp_path / "suite.jsonl"
    path.write_text(json.dumps({**line, "id": "q0", "options": ["red", "blue"]}) + "\n" + json.dumps(line) + "\n")
    err = one_line(capsys, "run", "--suite", str(path), *NO_SERVER, "--out", str(tmp_path / "r"))
    assert err == (
        f"ocllm: error: {path}:2: field 'options[1]': holds a lone UTF-16 surrogate (\\udc00 at character 2), "
        "which is not text"
    )
    assert not (tmp_path / "r").exists()


def test_a_dataset_row_that_is_not_text_is_a_bad_row(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "test.jsonl"
    rows = [{"question": "What is 1 + 1?", "answer": "#### 2"}, {"question": "What \udc00?", "answer": "#### 3"}]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    out = tmp_path / "suite.jsonl"
    err = one_line(capsys, "import", "gsm8k", str(path), "-o", str(out))
    assert ": row 2: 'question' holds a lone UTF-16 surrogate (\\udc00 at character 5), which is not text" in err
    assert not out.exists()
    assert main(["import", "gsm8k", str(path), "-o", str(out), "--skip-bad"]) == 0
    assert "skipped 1 bad row" in capsys.readouterr().out
    assert len(out.read_text(encoding="utf-8").splitlines()) == 1


# Text with surrogates among other code points (hypothesis's own text strategies never draw one).
_CODE_POINTS = st.one_of(st.integers(0xD800, 0xDFFF), st.integers(0, 0x10FFFF), st.sampled_from([0x5C, 0x75, 0x64]))
_TEXT = st.lists(_CODE_POINTS, max_size=12).map(lambda points: "".join(map(chr, points)))


@given(st.lists(_TEXT, max_size=4), st.booleans())
def test_the_line_search_misses_no_surrogate_the_walk_would_find(texts: list[str], ascii_only: bool) -> None:
    # The search before the walk (suites.parse_task_line) must be sound: any JSON text whose value holds a lone
    # surrogate is one it says may hold one, however the text was written (escaped, or not).
    value = {"question": texts[0] if texts else "", "options": texts}
    line = json.dumps(value, ensure_ascii=ascii_only)
    if first_lone_surrogate(json.loads(line)) is not None:
        assert may_hold_surrogate(line)


def test_only_a_plain_json_file_that_escapes_no_surrogate_goes_unscreened(tmp_path: Path) -> None:
    import gzip

    plain, escaped, pair, packed = (tmp_path / name for name in ("plain.jsonl", "e.jsonl", "p.json", "z.jsonl.gz"))
    plain.write_text('{"q": "caf\\u00e9 \u00e9 \\\\udc00 is a backslash, then text"}\n', encoding="utf-8")
    escaped.write_text('\ufeff {"q": "\\uDC00"}\n', encoding="utf-8")
    pair.write_text('[{"q": "\\ud83d\\ude00"}]', encoding="utf-8")  # a valid pair: screened, found to be text
    packed.write_bytes(gzip.compress(b'{"q": "plain"}\n'))
    assert file_may_hold_surrogate(escaped) and file_may_hold_surrogate(pair) and file_may_hold_surrogate(packed)
    # The escaped backslash before "udc00" is taken for an escape: screened too (the walk then finds only text).
    assert file_may_hold_surrogate(plain)
    plain.write_text('{"q": "caf\\u00e9 \u00e9"}\n', encoding="utf-8")
    assert not file_may_hold_surrogate(plain)


def test_an_escape_across_two_pieces_of_the_search_is_found(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from ocllm.files import surrogates

    monkeypatch.setattr(surrogates, "_SCAN_BYTES", 7)  # every place an escape can stand against a piece's end
    path = tmp_path / "f.jsonl"
    for before in range(12):
        path.write_bytes(b'{"q": "' + b"a" * before + b'\\udc00"}')
        assert file_may_hold_surrogate(path), before
