"""What an output may replace (issue 19, item 2): its own kind of output, written earlier by the same command,
is replaced; a file of the user's only with --force; an input never (tests/test_bad_inputs.py holds the
refusals). Real files, the real CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import legacy_record, write_json

from ocllm.cli import main
from ocllm.files.output_guard import SUITE

PRO_ROWS = [
    {"question_id": n, "question": f"Pick {n}.", "options": ["x", "y", "z"], "answer": "B", "answer_index": 1,
     "cot_content": "", "category": "math", "src": "s"}
    for n in (1, 2, 3)
]  # fmt: skip
MINE = "my own notes, not ocllm's\n"


def dataset(tmp: Path) -> Path:
    path = tmp / "data" / "test.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(row) + "\n" for row in PRO_ROWS))
    return path


def metrics(tmp: Path) -> Path:
    return write_json(tmp / "m.json", {"tasks": [legacy_record("t1", "FINAL: B"), legacy_record("t2", "FINAL: A")]})


def test_import_replaces_a_suite_it_wrote_and_a_users_file_only_with_force(tmp_path: Path) -> None:
    source, out = dataset(tmp_path), tmp_path / "suite.jsonl"
    assert main(["import", "mmlu-pro", str(source), "-o", str(out)]) == 0
    first = out.read_bytes()
    assert main(["import", "mmlu-pro", str(source), "-o", str(out), "--limit", "1"]) == 0  # ocllm's own: replaced
    assert out.read_bytes() != first and len(out.read_bytes().splitlines()) == 1
    notes = tmp_path / "notes.jsonl"
    notes.write_text(MINE)
    assert main(["import", "mmlu-pro", str(source), "-o", str(notes)]) == 2
    assert notes.read_text() == MINE
    assert main(["import", "mmlu-pro", str(source), "-o", str(notes), "--force"]) == 0
    assert notes.read_bytes() == first


def test_a_suite_is_recognised_by_its_canonical_first_line(tmp_path: Path) -> None:
    """The suites ocllm writes (import, a run's suite.jsonl) are in one spelling; a suite written by hand, in
    json.dumps's spelling, is the user's."""
    task = {"id": "t1", "type": "mcq", "question": "q", "options": ["a", "b"], "answer": "A", "category": "c"}
    by_hand = tmp_path / "by_hand.jsonl"
    by_hand.write_text(json.dumps(task) + "\n")
    canonical = tmp_path / "canonical.jsonl"
    canonical.write_text(json.dumps(task, sort_keys=True, separators=(",", ":")) + "\n")
    assert not SUITE.recognise(by_hand)
    assert SUITE.recognise(canonical)
    assert not SUITE.recognise(write_json(tmp_path / "x.jsonl", {"id": "t1"}))


def test_rescore_replaces_its_own_output_and_audit(tmp_path: Path) -> None:
    source, out, audit = metrics(tmp_path), tmp_path / "o.json", tmp_path / "a.md"
    for _ in range(2):
        assert main(["rescore", str(source), "-o", str(out), "--report", str(audit)]) == 0
    assert json.loads(out.read_text())["summary"]["total"] == 2
    # A metrics file of a run is the same kind of document: a rescore may replace it.
    assert main(["rescore", str(out), "-o", str(tmp_path / "again.json")]) == 0
    assert main(["rescore", str(source), "-o", str(tmp_path / "again.json")]) == 0


def test_rescore_from_replaces_a_users_file_with_force(tmp_path: Path) -> None:
    record = {**PRO_ROWS[0], "pred": "B", "response": "The answer is (B)."}
    results = write_json(tmp_path / "math_result.json", [record])
    notes, audit = tmp_path / "notes.json", tmp_path / "notes.md"
    notes.write_text(MINE)
    audit.write_text(MINE)
    args = ["rescore", "--from", "mmlu-pro", str(results), "-o", str(notes), "--report", str(audit)]
    assert main(args) == 2 and notes.read_text() == MINE and audit.read_text() == MINE
    assert main([*args, "--force"]) == 0
    assert json.loads(notes.read_text())["format"] == "ocllm-metrics/1"
    assert audit.read_text().startswith("# Rescoring audit")
    assert main(args) == 0  # now both are ocllm's own


@pytest.mark.parametrize(
    ("command", "taken"),
    [("report", "report.html"), ("compare", "comparison.md"), ("matrix-report", "matrix.json")],
)
def test_report_folders_are_written_again_and_a_users_file_in_them_replaced_only_with_force(
    command: str, taken: str, tmp_path: Path
) -> None:
    source = metrics(tmp_path)
    runs = tmp_path / "runs"
    for lane in ("A", "B"):
        assert main(["rescore", str(source), "-o", str(tmp_path / f"{lane}.json")]) == 0
        (runs / lane).mkdir(parents=True)
        suite = [{"id": f"t{n}", "type": "mcq", "question": "q", "options": ["a", "b"], "answer": "B", "category": "c"}
                 for n in (1, 2)]  # fmt: skip
        (runs / lane / "suite.jsonl").write_text("".join(json.dumps(t) + "\n" for t in suite))
        samples = [{"task_id": f"t{n}", "content": "FINAL: B"} for n in (1, 2)]
        (runs / lane / "samples.jsonl").write_text("".join(json.dumps(s) + "\n" for s in samples))
    out = tmp_path / "out"
    args = {
        "report": ["report", str(source), "-o", str(out)],
        "compare": ["compare", str(tmp_path / "A.json"), str(tmp_path / "B.json"), "-o", str(out)],
        "matrix-report": ["matrix-report", str(runs), "-o", str(out)],
    }[command]
    assert main(args) == 0
    assert main(args) == 0  # its own files: written again
    (out / taken).write_text(MINE)
    assert main(args) == 2 and (out / taken).read_text() == MINE
    assert main([*args, "--force"]) == 0 and (out / taken).read_text() != MINE
