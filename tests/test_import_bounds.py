"""`ocllm import` within its bounds (issue 29, section 3): the hostile files are built here, the real CLI reads
them, and each is refused with exit 2 in one line naming the bound (docs/lanes.md, "Bounds on imported files").
The bounds are arguments of `import_tasks`; where the real default is cheap to reach it is the one tested."""

from __future__ import annotations

import hashlib
import json
import os
import random
from collections import defaultdict
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from helpers import write_jsonl

from ocllm.cli import main
from ocllm.errors import InputError
from ocllm.importers import Selection, import_tasks
from ocllm.importers.bounds import DEFAULT_BOUNDS, MB, Bounds
from ocllm.importers.sampling import SeededSample
from ocllm.models import Task
from ocllm.scoring.math.fields import MathTask

GSM8K = {"question": "What is 1 + 1?", "answer": "1 + 1 = 2\n#### 2"}


def refused(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    """Run the CLI, expect exit 2 and one line on stderr; that line."""
    capsys.readouterr()
    assert main(list(args)) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    assert "Traceback" not in err
    return err


# Parquet: values and rows that are small on disk and huge once read


def test_a_parquet_question_past_the_value_bound_is_refused_by_the_metadata(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # 2 MB of one letter, zstd: a few kilobytes on disk (the was 800 MB in 25 KB).
    path = tmp_path / "test.parquet"
    pq.write_table(pa.table({"question": ["x" * (2 * MB)], "answer": ["#### 1"]}), path, compression="zstd")
    assert path.stat().st_size < 64 * 1024
    out = tmp_path / "suite.jsonl"
    err = refused(capsys, "import", "gsm8k", str(path), "-o", str(out))
    assert "'question' holds at least 2 MB, more than the 1 MB an imported value may hold" in err
    assert "by the file's metadata" in err
    assert not out.exists()


def test_one_large_value_among_many_rows_is_found_in_its_batch(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # 200 rows of which row 137 holds 1.5 MB: the column averages far less than 1 MB a row, so only reading
    # the batch (measured on pyarrow's arrays, before any value becomes Python) finds it.
    questions = [f"question {i}" for i in range(200)]
    questions[136] = "y" * (3 * MB // 2)
    path = tmp_path / "test.parquet"
    pq.write_table(pa.table({"question": questions, "answer": ["#### 1"] * 200}), path, compression="zstd")
    err = refused(capsys, "import", "gsm8k", str(path), "-o", str(tmp_path / "suite.jsonl"))
    assert err.endswith(f"{path}: row 137: 'question' holds 1 MB, more than the 1 MB an imported value may hold")


def test_a_page_past_the_bound_on_a_page_is_refused_from_its_header(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # One 70 MB question among 1,000 short ones: the column averages 70 KB a row, under the bound on a value, so
    # the footer cannot tell; the page's header says what it inflates to, before pyarrow inflates it.
    questions = [f"question {i}" for i in range(1000)]
    questions[999] = "z" * (70 * MB)
    path = tmp_path / "test.parquet"
    pq.write_table(pa.table({"question": questions, "answer": ["#### 1"] * 1000}), path, compression="zstd")
    err = refused(capsys, "import", "gsm8k", str(path), "-o", str(tmp_path / "suite.jsonl"))
    assert err.endswith(
        f"{path}: row group 1, column 'question': a page that inflates to 70 MB, more than the 64 MB an import lets "
        "pyarrow inflate at once (the bound on a page)"
    )


def test_a_value_inside_a_list_counts_for_its_field(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # MMLU-Pro's options are a list: a field is all of its texts together (600 KB + 600 KB here).
    rows = [{"question_id": i, "question": "q", "options": ["a", "b", "c"], "answer": "A", "answer_index": 0,
             "category": "law", "src": "x"} for i in range(20)]  # fmt: skip
    rows[4]["options"] = ["a" * 600_000, "b" * 600_000, "c"]
    path = tmp_path / "test.parquet"
    pq.write_table(pa.Table.from_pylist(rows), path)
    err = refused(capsys, "import", "mmlu-pro", str(path), "-o", str(tmp_path / "suite.jsonl"))
    assert err.endswith("row 5: 'options' holds 1 MB, more than the 1 MB an imported value may hold")


@pytest.fixture(scope="module")
def five_million_rows(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """5,000,000 dictionary-encoded rows in a few tens of kilobytes: every field any of the four layouts asks."""
    n = 5_000_000
    row = {
        "question": "What is 1 + 1?", "answer": "#### 2", "problem": "What is 1 + 1?", "solution": "\\boxed{2}",
        "type": "Algebra", "level": "Level 1", "key": "1", "prompt": "Say hi.",
    }  # fmt: skip
    indices = pa.array([0] * n, pa.int32())
    columns = {name: pa.DictionaryArray.from_arrays(indices, pa.array([value])) for name, value in row.items()}
    path = tmp_path_factory.mktemp("rows") / "test-00000-of-00001.parquet"
    pq.write_table(pa.table(columns), path, compression="zstd")
    return path


@pytest.mark.parametrize("fmt", ["gsm8k", "math", "aime", "ifeval"])
def test_five_million_rows_are_refused_by_the_row_count_in_the_metadata(
    fmt: str, five_million_rows: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert five_million_rows.stat().st_size < 200 * 1024
    err = refused(capsys, "import", fmt, str(five_million_rows), "-o", str(tmp_path / "suite.jsonl"))
    assert err.endswith(
        f"{five_million_rows}: 5,000,000 rows by its metadata; an import reads at most 1,000,000 rows "
        "(the bound on rows read)"
    )


def test_the_bound_on_rows_counts_every_file_of_an_import(tmp_path: Path) -> None:
    first, second = tmp_path / "a" / "test.parquet", tmp_path / "b" / "test.parquet"
    for path, start in ((first, 0), (second, 3)):
        path.parent.mkdir()
        rows = [{"question": f"q {start + i}", "answer": f"#### {i}"} for i in range(3)]
        pq.write_table(pa.Table.from_pylist(rows), path)
    with pytest.raises(InputError) as caught:
        import_tasks("gsm8k", [first, second], Selection(), bounds=Bounds(max_rows=5))
    assert str(caught.value) == (
        f"{second}: 3 rows by its metadata after the 3 rows read before it; an import reads at most 5 rows "
        "(the bound on rows read)"
    )


# JSONL and CSV: lines read to a bound, fields measured


def test_jsonl_rows_past_the_bound_on_rows_are_refused_as_they_are_read(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "test.jsonl", [GSM8K] * 4)
    assert len(import_tasks("gsm8k", [path], Selection(), bounds=Bounds(max_rows=4)).tasks) == 4
    with pytest.raises(InputError, match=r"^.*test\.jsonl: row 4: more than 3 rows; an import reads at most 3 rows"):
        import_tasks("gsm8k", [path], Selection(), bounds=Bounds(max_rows=3))


def test_a_jsonl_line_past_the_bound_on_a_row_is_never_read_whole(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write_jsonl(tmp_path / "test.jsonl", [GSM8K, {**GSM8K, "question": "z" * (9 * MB)}])
    err = refused(capsys, "import", "gsm8k", str(path), "-o", str(tmp_path / "suite.jsonl"))
    assert err.endswith(f"{path}: line 2 is longer than 8 MB, more than an imported row may hold")


def test_a_jsonl_value_past_the_bound_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write_jsonl(tmp_path / "test.jsonl", [{**GSM8K, "question": "é" * (MB // 2 + 1)}])  # 2 bytes each
    err = refused(capsys, "import", "gsm8k", str(path), "-o", str(tmp_path / "suite.jsonl"))
    assert err.endswith(f"{path}: row 1: 'question' holds 1 MB, more than the 1 MB an imported value may hold")


def test_the_bounds_are_arguments_read_when_called(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "test.jsonl", [{**GSM8K, "question": "q" * 2000}])
    assert import_tasks("gsm8k", [path], Selection()).tasks  # within the defaults
    with pytest.raises(InputError, match="'question' holds 2,000 bytes, more than the 1,000 bytes"):
        import_tasks("gsm8k", [path], Selection(), bounds=Bounds(max_value_bytes=1000))
    with pytest.raises(InputError, match="hold more than 100 bytes, the most an import reads"):
        import_tasks("gsm8k", [path], Selection(), bounds=Bounds(max_total_bytes=100))
    assert Bounds(1_000_000, MB, 8 * MB, 64 * MB, 512, 2 << 30) == DEFAULT_BOUNDS


def aime_csv(path: Path, question: str) -> Path:
    path.write_text(f"ID,Question,Answer\n2024-I-1,{question},33\n", encoding="utf-8")
    return path


def test_a_csv_field_is_read_to_the_value_bound(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # 200,000 characters: past the csv module's own 131,072, within the bound on a value: imported.
    out = tmp_path / "suite.jsonl"
    assert main(["import", "aime", str(aime_csv(tmp_path / "ok.csv", "w" * 200_000)), "-o", str(out)]) == 0
    path = aime_csv(tmp_path / "big.csv", '"' + "v" * (MB + 10) + '"')
    err = refused(capsys, "import", "aime", str(path), "-o", str(tmp_path / "other.jsonl"))
    said = "a field of more than 1,048,576 characters, more than an imported value may hold"
    assert err.endswith(f"{path}: line 2: {said}")


# Files that are no regular files


def test_a_link_to_dev_zero_is_said_to_be_a_device(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    link = tmp_path / "test.jsonl"
    link.symlink_to("/dev/zero")
    err = refused(capsys, "import", "gsm8k", str(link), "-o", str(tmp_path / "suite.jsonl"))
    assert err.endswith(f"{link}: not a regular file (a link to /dev/zero, a character device)")
    questions = write_jsonl(tmp_path / "BFCL_v3_simple.json", [])
    err = refused(capsys, "import", "bfcl", str(questions), "--answers", str(link), "-o", str(tmp_path / "b.jsonl"))
    assert err.endswith(f"{link}: not a regular file (a link to /dev/zero, a character device)")


def test_a_fifo_is_refused_without_waiting_for_a_writer(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    fifo = tmp_path / "test.jsonl"
    os.mkfifo(fifo)
    err = refused(capsys, "import", "gsm8k", str(fifo), "-o", str(tmp_path / "suite.jsonl"))
    assert err.endswith(f"{fifo}: not a regular file (a FIFO (named pipe))")


def test_a_link_to_nothing_says_where_it_points(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    link = tmp_path / "test.jsonl"
    link.symlink_to(tmp_path / "gone.jsonl")
    err = refused(capsys, "import", "gsm8k", str(link), "-o", str(tmp_path / "suite.jsonl"))
    assert err.endswith(f"{link}: a link to {tmp_path / 'gone.jsonl'}, which does not exist")
    err = refused(capsys, "import", "gsm8k", str(tmp_path / "none.jsonl"), "-o", str(tmp_path / "suite.jsonl"))
    assert err.endswith("none.jsonl: no such file or folder")


# JSON nested deeply


def bfcl_row(default: Any, question: str = "What is 2 + 2?") -> dict[str, Any]:
    parameter = {"type": "any", "description": "x", "default": default}
    return {"id": "irrelevance_0", "question": [[{"role": "user", "content": question}]],
            "function": [{"name": "f", "description": "d", "parameters": {"type": "dict",
                                                                        "properties": {"a": parameter}}}]}  # fmt: skip


def nested(depth: int) -> Any:
    value: Any = []
    for _ in range(depth - 1):
        value = [value]
    return value


def test_a_bfcl_line_nested_600_deep_is_refused_naming_the_bound(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    line = json.dumps(bfcl_row(nested(600)))  # valid JSON, 606 levels in all
    path = tmp_path / "BFCL_v3_irrelevance.json"
    path.write_text(line + "\n", encoding="utf-8")
    err = refused(capsys, "import", "bfcl", str(path), "-o", str(tmp_path / "suite.jsonl"))
    assert err.endswith(f"{path}: row 1: nested 606 levels deep; a JSON line is read to 512 levels")


def test_brackets_inside_strings_are_text_and_a_line_within_the_bound_is_read(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "BFCL_v3_irrelevance.json", [bfcl_row(nested(400), "[{" * 2000 + '"\\"]')])
    (task,) = import_tasks("bfcl", [path], Selection()).tasks
    assert task.question.startswith("[{[{")


# The seeded sample, drawn while reading, is the sample drawn after reading everything


def _rank(seed: int, task_id: str) -> bytes:
    return hashlib.sha256(f"{seed}\0{task_id}".encode()).digest()


def reference_sample(tasks: list[Task], seed: int, per_category: int | None, limit: int | None) -> list[Task]:
    """The sample as it was drawn before, from every task at once (kept here as the reference)."""
    members: dict[str, list[int]] = defaultdict(list)
    for i, task in enumerate(tasks):
        members[task.category].append(i)
    orders = {name: sorted(idx, key=lambda i: _rank(seed, tasks[i].id)) for name, idx in members.items()}
    if per_category is not None:
        keep = {i for order in orders.values() for i in order[:per_category]}
    else:
        places = [((r + 0.5) / len(o), _rank(seed, tasks[i].id), i) for o in orders.values() for r, i in enumerate(o)]
        keep = {i for _, _, i in sorted(places)[:limit]}
    return [t for i, t in enumerate(tasks) if i in keep]


@pytest.mark.parametrize("seed", [0, 1, 7])
def test_the_streamed_sample_is_the_sample_of_every_task(seed: int) -> None:
    rng = random.Random(seed)
    sizes = {"algebra": 300, "geometry": 40, "number theory": 7, "one": 1}
    tasks = [MathTask(id=f"t/{name}/{i}", question="q", answer="1", category=name)
             for name, size in sizes.items() for i in range(size)]  # fmt: skip
    rng.shuffle(tasks)
    for per_category, limit in [(1, None), (5, None), (50, None), (None, 1), (None, 10), (None, 77), (None, 1000)]:
        sample = SeededSample(seed, per_category, limit)
        for task in tasks:
            sample.offer(task, task.category)
        assert sample.tasks() == reference_sample(tasks, seed, per_category, limit), (per_category, limit)


def test_docs_lanes_lists_every_bound_with_its_value() -> None:
    docs = (Path(__file__).parent.parent / "docs" / "lanes.md").read_text(encoding="utf-8")
    section = docs.split("## Bounds on imported files", 1)[1].split("\n## ", 1)[0]
    bounds = DEFAULT_BOUNDS
    said = {
        "max_rows": f"| rows read | {bounds.max_rows:,} |",
        "max_value_bytes": f"| a value | {bounds.max_value_bytes // MB} MB ({bounds.max_value_bytes:,} bytes) |",
        "max_row_bytes": f"| a row | {bounds.max_row_bytes // MB} MB |",
        "max_total_bytes": f"| all rows' values | {bounds.max_total_bytes >> 30} GB |",
        "max_depth": f"| nesting of a JSON line | {bounds.max_depth} levels |",
        "max_page_bytes": f"| a Parquet page | {bounds.max_page_bytes // MB} MB |",
    }
    assert set(said) == set(Bounds._fields)
    for name, row in said.items():
        assert row in section, name
