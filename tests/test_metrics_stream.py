"""Metrics files read a piece at a time (issue 11, item 8): the same records and errors as reading the file
whole, in memory that does not grow with the file. Files are real, written here; the CLI is the real one."""

from __future__ import annotations

import json
import os
import tracemalloc
from pathlib import Path
from typing import Any

import pytest
from conftest import legacy_record

from ocllm.cli import main
from ocllm.errors import InputError
from ocllm.files.reading import MAX_DEPTH
from ocllm.formats import load_saved_run, stream_saved_run
from ocllm.formats.metrics_file import _record, stream_metrics_file
from ocllm.formats.records import RunMeta

SCORER = {"version": "1.6.0", "conflict_policy": "strict", "allow_reasoning_fallback": True}
SOURCE = {"path": "runs/b", "lane": "B", "model": "served", "tasks_in_suite": 9, "notes": "kept"}


def rows() -> list[dict[str, Any]]:
    """Records of every JSON kind a reader must give back as `json.loads` does: floats that look like
    integers, exponents, a negative zero, escapes and characters outside the BMP, nested usage, nulls."""
    return [
        legacy_record("t1", "FINAL: B", correct=True, latency_s=1.0, usage={"prompt_tokens": 12, "x": [1, 2.5, None]}),
        legacy_record("t2", 'She said "FINAL: C"\n\tthen\\FINAL: A', reasoning="é ü 😀 \u2028", latency_s=2e-7),
        legacy_record("t3", None, reasoning="FINAL: A or FINAL: B", latency_s=1e20, usage={"n": -0.0, "big": 2**62}),
        {
            **legacy_record("t4", "green and orange", latency_s=3),
            "task_type": "required_substrings",
            "options": None,
            "expected_answer": None,
            "required_substrings": ["green", "orange"],
        },
    ]


def write(path: Path, document: Any, **dumps: Any) -> Path:
    path.write_text(json.dumps(document, **dumps), encoding="utf-8")
    return path


def expected_records(path: Path) -> list[Any]:
    """What the per-record rules make of the rows `json.loads` reads from the whole file."""
    document = json.loads(path.read_text(encoding="utf-8-sig"))
    tasks = document if isinstance(document, list) else document["tasks"]
    return [_record(path, index, row) for index, row in enumerate(tasks, start=1)]


SHAPES = {
    # The old harness's order: the run's facts, then the tasks.
    "tasks last": lambda t: {"run_id": "r1", "source": SOURCE, "summary": {"scorer": SCORER}, "tasks": t},
    # This project's order: the summary (with the policy) after the tasks.
    "tasks first": lambda t: {"run_id": "r1", "source": SOURCE, "tasks": t, "summary": {"scorer": SCORER}},
    "tasks between": lambda t: {"summary": {"scorer": SCORER}, "tasks": t, "run_id": "r1", "source": SOURCE},
}  # fmt: skip


@pytest.mark.parametrize("shape", list(SHAPES))
@pytest.mark.parametrize("dumps", [{}, {"indent": 2, "ensure_ascii": False}], ids=["compact", "pretty-utf8"])
def test_the_same_records_and_run_facts_wherever_the_tasks_stand(
    shape: str, dumps: dict[str, Any], tmp_path: Path
) -> None:
    path = write(tmp_path / "m.json", SHAPES[shape](rows()), **dumps)
    meta, records = stream_metrics_file(path)
    # Complete before the first record is asked for, though the summary may come after the tasks.
    assert meta == RunMeta(
        run_id="r1", lane="B", model="served", tasks_in_suite=9, scorer=SCORER, other={"source": SOURCE}
    )
    streamed = list(records)
    assert streamed == expected_records(path)
    assert [type(r.sample.latency_s) for r in streamed] == [float, float, float, int]
    assert streamed[2].sample.usage == {"n": -0.0, "big": 2**62}
    # The in-memory reader (reports, comparisons) is the same reader, its records collected.
    saved = load_saved_run(path)
    assert (saved.meta, saved.records) == (meta, streamed)


def test_a_bare_list_and_a_byte_order_mark(tmp_path: Path) -> None:
    plain = write(tmp_path / "list.json", rows())
    marked = tmp_path / "bom.json"
    marked.write_bytes(b"\xef\xbb\xbf" + plain.read_bytes())
    meta, records = stream_saved_run(marked)
    assert meta == RunMeta()
    assert list(records) == expected_records(marked)
    assert [r.task.id for r in stream_saved_run(plain)[1]] == ["t1", "t2", "t3", "t4"]
    assert main(["rescore", str(marked), "-o", str(tmp_path / "out.json")]) == 0


def one_error_line(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("ocllm: error: ") and "Traceback" not in err, err
    return lines[0]


def test_invalid_json_far_into_the_file_is_one_line_with_its_line_and_column(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Past the parser's first piece (64 KB), on a line with characters of two and four bytes before the
    fault: the line and column (in characters) are where `json.loads` puts them."""
    tasks = [legacy_record(f"t{i}", "é😀 FINAL: B " * 20) for i in range(300)]
    text = json.dumps({"run_id": "r", "tasks": tasks, "summary": {}}, indent=2, ensure_ascii=False)
    cut = text.index('{\n      "task_id": "t250"')
    text = text[:cut].rstrip().removesuffix(",") + " " + text[cut:]  # two records with no comma between
    path = tmp_path / "m.json"
    path.write_text(text, encoding="utf-8")
    assert len(text.encode()) > 2 * 64 * 1024
    with pytest.raises(json.JSONDecodeError) as whole:
        json.loads(text)
    out = tmp_path / "out.json"
    assert main(["rescore", str(path), "-o", str(out)]) == 2
    line = one_error_line(capsys)
    assert f"{path}: invalid JSON at line {whole.value.lineno} column {whole.value.colno}: " in line
    assert not out.exists() and sorted(p.name for p in tmp_path.iterdir()) == ["m.json"]


def test_a_file_cut_off_mid_record(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = json.dumps({"tasks": [legacy_record(f"t{i}", "FINAL: B") for i in range(50)]}, indent=2)
    path = tmp_path / "m.json"
    path.write_text(text[: len(text) * 2 // 3], encoding="utf-8")
    assert main(["rescore", str(path), "-o", str(tmp_path / "out.json")]) == 2
    assert "invalid JSON at line" in one_error_line(capsys)


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("only a byte-order mark and spaces", b"\xef\xbb\xbf \n\t ", "the file is empty"),
        ("a bad byte past the first piece", b'["' + b"a" * 70_000 + b'\xff"]', "(byte 0xff at offset 70002)"),
        ("a character cut off at the end", b'["caf\xc3', "not UTF-8 text (byte 0xc3 at offset 5)"),
        ("a byte-order mark, then a bad byte", b'\xef\xbb\xbf["caf\xe9"]', "not UTF-8 text (byte 0xe9 at offset 8)"),
        ("tasks given twice", b'{"tasks": [], "tasks": []}', "the key 'tasks' appears 2 times"),
        ("tasks not a list", b'{"tasks": {"t1": {}}}', "expected an object with a 'tasks' list"),
        ("a lone value", b'"tasks"', "expected an object with a 'tasks' list"),
        ("NaN, then not JSON", b'[{"task_id": "a", "latency_s": NaN}', "invalid JSON at line 1"),
        ("something after the object", b'{"tasks": []}\n]', "invalid JSON at line 2 column 1: trailing garbage"),
    ],
)  # fmt: skip
def test_bad_files_are_one_line_and_exit_2(
    name: str, content: bytes, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "m.json"
    path.write_bytes(content)
    assert main(["rescore", str(path), "-o", str(tmp_path / "out.json")]) == 2
    line = one_error_line(capsys)
    assert str(path) in line and message in line


def deep(levels: int) -> str:
    return "[" * levels + "]" * levels


@pytest.mark.parametrize(
    "where",
    [
        lambda d: '{"tasks": [' + deep(1500) + "]}",  # a record
        lambda d: "[" + json.dumps(legacy_record("t1", "FINAL: B"))[:-1] + ', "usage": {"x": ' + d + "}}]",
        lambda d: '{"tasks": [], "summary": ' + d + "}",  # a field after the tasks, built by the first pass
        lambda d: '{"tasks": [], "ignored": ' + d + "}",
        lambda d: d,  # the whole file
    ],
    ids=["a record", "inside a record", "the summary", "another field", "the whole file"],
)
def test_deep_nesting_anywhere_is_refused_in_one_line(
    where: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "m.json"
    path.write_text(where(deep(1500)))
    assert main(["rescore", str(path), "-o", str(tmp_path / "out.json")]) == 2
    assert "nested too deeply" in one_error_line(capsys)


def test_the_deepest_file_accepted_is_rescored_and_reported(tmp_path: Path) -> None:
    """MAX_DEPTH is shallow enough for everything that walks a value later: the output's writer, the audit,
    the report. The file's object, `tasks` and the record are three levels; `usage` takes the rest."""
    usage_levels = MAX_DEPTH - 3
    nested = '{"a": ' * usage_levels + "1" + "}" * usage_levels
    record = json.dumps(legacy_record("t1", "FINAL: B"))[:-1] + ', "usage": ' + nested + "}"
    path = tmp_path / "m.json"
    path.write_text('{"tasks": [' + record + "]}")
    out = tmp_path / "out.json"
    assert main(["rescore", str(path), "-o", str(out), "--report", str(tmp_path / "audit.md")]) == 0
    assert json.loads(out.read_text())["summary"]["total"] == 1
    assert main(["report", str(path), "-o", str(tmp_path / "report")]) == 0
    path.write_text('{"tasks": [' + record.replace('"usage": ', '"usage": [', 1) + "]]}")  # one level more
    with pytest.raises(InputError, match="nested too deeply"):
        stream_metrics_file(path)


def test_records_are_read_as_they_are_used(tmp_path: Path) -> None:
    """The second pass reads the file as records are asked for: a record changed on disk after the first one
    was handed out is read as changed. (The first pass has read the whole file by then: it checks the file
    is JSON, and collects the run's facts, which may come after the tasks.)"""
    tasks = [legacy_record(f"t{i:03d}", "FINAL: B " + "x" * 1000) for i in range(300)]
    path = write(tmp_path / "m.json", {"tasks": tasks, "summary": {}})
    _, records = stream_metrics_file(path)
    assert next(records).task.id == "t000"
    text = path.read_bytes()
    at = text.rindex(b"FINAL: B ")
    with open(path, "r+b") as fh:  # the same length, far past the pieces read so far
        fh.seek(at)
        fh.write(b"FINAL: C ")
    rest = list(records)
    assert len(rest) == 299 and rest[-1].sample.content.startswith("FINAL: C ")


def test_memory_does_not_follow_the_file(tmp_path: Path) -> None:
    """Reading every record of a 10 MB file holds about one record at a time; the file read whole would hold
    all of its text, and more."""
    tasks = [legacy_record(f"t{i:04d}", "FINAL: B " + "y" * 2500, reasoning="z" * 2500) for i in range(2000)]
    path = write(tmp_path / "m.json", {"tasks": tasks, "summary": {"total": 2000}})
    del tasks
    size = path.stat().st_size
    tracemalloc.start()
    try:
        _, records = stream_metrics_file(path)
        count = sum(1 for _ in records)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert count == 2000 and size > 10_000_000
    assert peak < size / 10, (peak, size)


def test_a_pipe_is_refused_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    fifo = tmp_path / "m.json"
    os.mkfifo(fifo)  # nobody writes to it: opening it would wait forever
    assert main(["rescore", str(fifo), "-o", str(tmp_path / "out.json")]) == 2
    assert "not a regular file" in one_error_line(capsys)


def test_nan_and_infinity_as_pythons_json_writes_them_are_read(tmp_path: Path) -> None:
    # Python's json.dump writes a float that is not a number as NaN or Infinity; JSON has no such words,
    # the incremental parser refuses them, and a file the old harness wrote this way is still read.
    records = [legacy_record("t1", "FINAL: B"), legacy_record("t2", "FINAL: A")]
    records[0]["latency_s"] = float("nan")
    records[1]["latency_s"] = float("inf")
    path = tmp_path / "nan.json"
    path.write_text(json.dumps({"run_id": "r", "tasks": records}))
    assert "NaN" in path.read_text() and "Infinity" in path.read_text()
    meta, streamed = stream_metrics_file(path)
    got = list(streamed)
    assert [r.task.id for r in got] == ["t1", "t2"] and meta.source(path)["path"] == str(path)
    assert main(["rescore", str(path), "-o", str(tmp_path / "out.json")]) == 0
    # A word NaN inside a string is no reason to read a broken file whole: it stays one line, exit 2.
    broken = tmp_path / "broken.json"
    broken.write_text('{"tasks": [{"task_id": "NaN", ')
    assert main(["rescore", str(broken), "-o", str(tmp_path / "out2.json")]) == 2
