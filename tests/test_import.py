"""`ocllm import` (issue 12): dataset files as their publishers ship them (MMLU CSVs and Parquet, MMLU-Pro
Parquet and JSONL, GPQA CSVs, ARC Parquet and JSONL) become a suite that loads. Every file is written here,
in its real layout; the CLI is the real entry point."""

from __future__ import annotations

import csv
import json
import re
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from helpers import one_error, write_jsonl

from ocllm.cli import main
from ocllm.models import Task
from ocllm.suites import load_suite

LETTERS = "ABCDEFGHIJ"
Row = dict[str, Any]
Expected = tuple[str, str, list[str], str, str]  # id, question, options, gold letter, category
Layout = tuple[str, list[Path], list[Expected]]  # FORMAT, PATHs, the tasks expected in order


# Writers


def write_parquet(path: Path, rows: list[Row]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(rows), path)
    return path


def write_csv(path: Path, rows: list[list[str]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="", encoding="utf-8") as f:
        csv.writer(f).writerows(rows)
    return path


# Rows in each dataset's layout


def mmlu_line(tag: str, letter: str = "B") -> list[str]:
    """A row of an original MMLU CSV: question, A, B, C, D, answer letter (no header)."""
    return [f"question {tag}, with a comma?", f"{tag} a", f"{tag} b", f"{tag} c", f"{tag} d", letter]


def mmlu_record(subject: str, i: int, answer: int = 1) -> Row:
    choices = [f"{subject} {i} {c}" for c in "abcd"]
    return {"question": f"{subject} question {i}?", "subject": subject, "choices": choices, "answer": answer}


def pro_record(qid: int, category: str, n_options: int = 10, answer_index: int = 0) -> Row:
    options = [f"q{qid} option {k}" for k in range(n_options)]
    row = {"question_id": qid, "question": f"pro question {qid}?", "options": options, "answer": LETTERS[answer_index]}
    return {**row, "answer_index": answer_index, "cot_content": "", "category": category, "src": f"ori-{category}"}


# "Correct Answer" comes last, so that a row cut short lacks it.
GPQA_HEADER = [
    "Pre-Revision Question", "Question", "Explanation", "Record ID", "High-level domain", "Subdomain",
    "Incorrect Answer 1", "Incorrect Answer 2", "Incorrect Answer 3", "Correct Answer",
]  # fmt: skip


def gpqa_record(i: int, domain: str = "Physics", subdomain: str = "Quantum Mechanics") -> Row:
    return {
        "Pre-Revision Question": "",
        "Question": f"GPQA question {i}?\nIt spans two lines.",
        "Explanation": "because",
        "Record ID": f"rec{i:05d}",
        "High-level domain": domain,
        "Subdomain": subdomain,
        **{f"Incorrect Answer {k}": f"wrong {i}.{k}" for k in (1, 2, 3)},
        "Correct Answer": f"right {i}",
    }


def write_gpqa(path: Path, records: list[Row]) -> Path:
    return write_csv(path, [GPQA_HEADER, *([r[c] for c in GPQA_HEADER if c in r] for r in records)])


def arc_record(i: int, labels: str = "ABCD", key: str = "B", *, jsonl: bool = False) -> Row:
    """ARC in the Parquet layout (`choices` a struct of lists) or the original JSONL one (`question.stem`)."""
    texts = [f"arc {i} choice {label}" for label in labels]
    if jsonl:
        choices = [{"text": t, "label": label} for t, label in zip(texts, labels, strict=True)]
        return {"id": f"Mercury_{i}", "question": {"stem": f"ARC question {i}?", "choices": choices}, "answerKey": key}
    choices_struct = {"text": texts, "label": list(labels)}
    return {"id": f"Mercury_{i}", "question": f"ARC question {i}?", "choices": choices_struct, "answerKey": key}


def pro_expected(r: Row) -> Expected:
    return f"mmlu-pro/{r['question_id']}", r["question"], r["options"], r["answer"], r["category"]


def arc_expected(i: int, labels: str, key: str) -> Expected:
    texts = [f"arc {i} choice {label}" for label in labels]
    return f"arc/Mercury_{i}", f"ARC question {i}?", texts, LETTERS[labels.index(key)], "arc"


# Running the command


def run_import(fmt: str, paths: list[Path], out: Path, *flags: str) -> int:
    return main(["import", fmt, *map(str, paths), "-o", str(out), *flags])


def tasks(path: Path) -> list[Task]:
    return load_suite(str(path)).tasks


def files_in(folder: Path) -> dict[Path, bytes]:
    return {p: p.read_bytes() for p in folder.rglob("*") if p.is_file()}


# Each layout, as a folder or a file, and the suite it must give


def mmlu_csv(tmp: Path) -> Layout:
    """The original tarball: data/{dev,test,val}/<subject>_<split>.csv, plus a file of another kind."""
    data, expected = tmp / "data", []
    files = {"dev/anatomy_dev.csv": "B", "test/high_school_biology_test.csv": "CA", "val/virology_val.csv": "D"}
    for name, letters in files.items():
        subject, split = Path(name).stem.rsplit("_", 1)
        lines = [mmlu_line(f"{subject} {n}", letter) for n, letter in enumerate(letters)]
        write_csv(data / name, lines)
        # The test split's ids are mmlu/<subject>/<n>; another split names itself, so ids never collide.
        key = subject if split == "test" else f"{subject}/{split}"
        expected += [(f"mmlu/{key}/{n}", q, [a, b, c, d], g, subject) for n, (q, a, b, c, d, g) in enumerate(lines)]
    (data / "README.md").write_text("not a dataset file\n")
    return "mmlu", [data], expected


def mmlu_parquet(tmp: Path) -> Layout:
    rows = [mmlu_record("anatomy", 0, 0), mmlu_record("virology", 0, 3), mmlu_record("anatomy", 1, 2)]
    path = write_parquet(tmp / "mmlu" / "all" / "test-00000-of-00001.parquet", rows)
    ids = ["mmlu/anatomy/0", "mmlu/virology/0", "mmlu/anatomy/1"]
    expected = [
        (i, r["question"], r["choices"], LETTERS[r["answer"]], r["subject"]) for i, r in zip(ids, rows, strict=True)
    ]
    return "mmlu", [path], expected


PRO_ROWS = [pro_record(70, "math", 10, 9), pro_record(71, "law", 3, 2), pro_record(5, "biology", 4, 0)]
ARC_LAYOUT = [(1000, "ABCD", "C"), (7, "12345", "5"), (12, "1234", "2"), (13, "ABC", "A")]


def pro_parquet(tmp: Path) -> Layout:
    path = write_parquet(tmp / "data" / "test-00000-of-00001.parquet", PRO_ROWS)
    return "mmlu-pro", [path], [pro_expected(r) for r in PRO_ROWS]


def pro_jsonl(tmp: Path) -> Layout:
    return "mmlu-pro", [write_jsonl(tmp / "mmlu_pro.jsonl", PRO_ROWS)], [pro_expected(r) for r in PRO_ROWS]


def arc_parquet(tmp: Path) -> Layout:
    rows = [arc_record(i, labels, key) for i, labels, key in ARC_LAYOUT]
    path = write_parquet(tmp / "ARC-Challenge" / "test-00000-of-00001.parquet", rows)
    return "arc", [path], [arc_expected(*row) for row in ARC_LAYOUT]


def arc_jsonl(tmp: Path) -> Layout:
    rows = [arc_record(i, labels, key, jsonl=True) for i, labels, key in ARC_LAYOUT]
    return "arc", [write_jsonl(tmp / "ARC-Challenge-Test.jsonl", rows)], [arc_expected(*row) for row in ARC_LAYOUT]


LAYOUTS: dict[str, Callable[[Path], Layout]] = {
    "mmlu csv folder": mmlu_csv,
    "mmlu parquet": mmlu_parquet,
    "mmlu-pro parquet": pro_parquet,
    "mmlu-pro jsonl": pro_jsonl,
    "arc parquet": arc_parquet,
    "arc jsonl": arc_jsonl,
}


def gpqa_layout(tmp: Path) -> Layout:
    records = [gpqa_record(1, "Physics", "Astrophysics"), gpqa_record(2, "Chemistry", "Organic Chemistry")]
    return "gpqa", [write_gpqa(tmp / "gpqa_diamond.csv", records)], []


EVERY_LAYOUT = {**LAYOUTS, "gpqa csv": gpqa_layout}


@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_each_layout_gives_the_tasks_in_file_order(layout: str, tmp_path: Path) -> None:
    fmt, paths, expected = LAYOUTS[layout](tmp_path)
    out = tmp_path / "suite.jsonl"
    assert run_import(fmt, paths, out) == 0
    got = [(t.id, t.question, t.options, t.answer, t.category) for t in tasks(out)]
    assert got == expected
    for line in out.read_text().splitlines():
        row = json.loads(line)
        assert row["type"] == "mcq" and {"id", "question", "options", "answer", "category"} <= row.keys()


def test_gpqa_shuffles_each_record_with_the_gold_letter_balanced(tmp_path: Path) -> None:
    records = [gpqa_record(i, "Physics" if i % 3 else "Biology", f"sub {i % 2}") for i in range(200)]
    out = tmp_path / "suite.jsonl"
    assert run_import("gpqa", [write_gpqa(tmp_path / "gpqa_main.csv", records)], out) == 0
    got = tasks(out)
    assert [t.id for t in got] == [f"gpqa/{r['Record ID']}" for r in records]
    for task, r in zip(got, records, strict=True):
        assert (task.question, task.category, task.subset) == (r["Question"], r["High-level domain"], r["Subdomain"])
        answers = [r["Correct Answer"], *(r[f"Incorrect Answer {k}"] for k in (1, 2, 3))]
        assert task.options is not None and sorted(task.options) == sorted(answers)
        assert task.answer is not None and task.options[LETTERS.index(task.answer)] == r["Correct Answer"]
    letters = Counter(t.answer for t in got)
    assert all(letters[letter] >= 0.15 * len(got) for letter in "ABCD"), letters


def test_gpqa_order_follows_the_seed(tmp_path: Path) -> None:
    src = write_gpqa(tmp_path / "gpqa_main.csv", [gpqa_record(i) for i in range(40)])
    orders = {}
    for seed in ("0", "1"):
        assert run_import("gpqa", [src], tmp_path / f"{seed}.jsonl", "--seed", seed) == 0
        orders[seed] = [t.options for t in tasks(tmp_path / f"{seed}.jsonl")]
    assert orders["0"] != orders["1"]


@pytest.mark.parametrize("layout", list(EVERY_LAYOUT))
def test_importing_twice_gives_identical_bytes(layout: str, tmp_path: Path) -> None:
    fmt, paths, _ = EVERY_LAYOUT[layout](tmp_path)
    first, second = tmp_path / "first.jsonl", tmp_path / "again" / "second.jsonl"
    second.parent.mkdir()
    assert run_import(fmt, paths, first) == 0 and run_import(fmt, paths, second) == 0
    assert first.read_bytes() == second.read_bytes()


@pytest.mark.parametrize("layout", list(EVERY_LAYOUT))
def test_category_relabels_and_moves_the_own_category_to_subset(layout: str, tmp_path: Path) -> None:
    fmt, paths, _ = EVERY_LAYOUT[layout](tmp_path)
    plain, relabelled = tmp_path / "plain.jsonl", tmp_path / "relabelled.jsonl"
    assert run_import(fmt, paths, plain) == 0
    assert run_import(fmt, paths, relabelled, "--category", "reasoning_x") == 0
    before, after = tasks(plain), tasks(relabelled)
    assert [(t.id, t.options, t.answer) for t in after] == [(t.id, t.options, t.answer) for t in before]
    assert [(t.category, t.subset) for t in after] == [("reasoning_x", t.category) for t in before]


@pytest.mark.parametrize("layout", list(EVERY_LAYOUT))
def test_the_console_names_every_category(layout: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    fmt, paths, _ = EVERY_LAYOUT[layout](tmp_path)
    assert run_import(fmt, paths, tmp_path / "suite.jsonl") == 0
    printed = capsys.readouterr().out
    assert all(t.category in printed for t in tasks(tmp_path / "suite.jsonl")), printed


def test_two_imports_concatenated_still_load(tmp_path: Path) -> None:
    _, pro, _ = pro_parquet(tmp_path)
    _, gpqa, _ = gpqa_layout(tmp_path)
    _, arc, _ = arc_jsonl(tmp_path)
    parts = [tmp_path / "pro.jsonl", tmp_path / "gpqa.jsonl", tmp_path / "arc.jsonl"]
    assert run_import("mmlu-pro", pro, parts[0], "--per-category", "15") == 0
    assert run_import("gpqa", gpqa, parts[1], "--category", "reasoning_gpqa") == 0
    assert run_import("arc", arc, parts[2]) == 0
    both = tmp_path / "both.jsonl"
    both.write_bytes(b"".join(p.read_bytes() for p in parts))
    assert len(tasks(both)) == len(PRO_ROWS) + 2 + len(ARC_LAYOUT)


# Sampling


def pro_file(tmp: Path, sizes: dict[str, int]) -> Path:
    """MMLU-Pro JSONL with categories of these sizes, interleaved; question_id is the row's position."""
    left = dict(sizes)
    rows: list[Row] = []
    while any(left.values()):
        for category in sizes:
            if left[category]:
                left[category] -= 1
                rows.append(pro_record(len(rows), category, 4, len(rows) % 4))
    return write_jsonl(tmp / "mmlu_pro.jsonl", rows)


def sample(src: Path, out: Path, *flags: str) -> list[Task]:
    assert run_import("mmlu-pro", [src], out, *flags) == 0
    return tasks(out)


def positions(got: list[Task]) -> list[int]:
    return [int(t.id.removeprefix("mmlu-pro/")) for t in got]


def test_per_category_takes_n_of_each_and_all_of_a_smaller_one(tmp_path: Path) -> None:
    src = pro_file(tmp_path, {"math": 40, "law": 20, "biology": 3})
    got = sample(src, tmp_path / "suite.jsonl", "--per-category", "5")
    assert Counter(t.category for t in got) == {"math": 5, "law": 5, "biology": 3}
    assert positions(got) == sorted(positions(got))  # in the order the rows were read


def test_a_sampled_mmlu_id_is_the_rows_place_in_its_subject(tmp_path: Path) -> None:
    rows = [mmlu_record(subject, i) for i in range(10) for subject in ("anatomy", "virology")]
    out = tmp_path / "suite.jsonl"
    assert run_import("mmlu", [write_parquet(tmp_path / "mmlu.parquet", rows)], out, "--per-category", "3") == 0
    got = tasks(out)
    assert len(got) == 6
    assert all(t.id == f"mmlu/{t.category}/{t.question.split()[-1].rstrip('?')}" for t in got)


@pytest.mark.parametrize("n", [20, 33, 60])
def test_limit_takes_n_in_all_in_proportion(n: int, tmp_path: Path) -> None:
    src = pro_file(tmp_path, {"math": 60, "law": 40, "biology": 20})
    got = sample(src, tmp_path / "suite.jsonl", "--limit", str(n))
    assert len(got) == n
    assert 0.4 * n <= Counter(t.category for t in got)["math"] <= 0.6 * n
    assert positions(got) == sorted(positions(got))


@pytest.mark.parametrize(("flag", "largest"), [("--per-category", 13), ("--limit", 23)])
def test_a_larger_n_keeps_every_task_of_a_smaller_n(flag: str, largest: int, tmp_path: Path) -> None:
    src = pro_file(tmp_path, {"math": 13, "law": 7, "biology": 3})
    previous: set[str] = set()
    for n in range(1, largest + 1):
        ids = {t.id for t in sample(src, tmp_path / f"{n}.jsonl", flag, str(n), "--seed", "7")}
        assert previous <= ids, f"{flag} {n} dropped {sorted(previous - ids)}"
        previous = ids
    assert len(previous) == 23


def test_the_seed_chooses_the_sample_and_defaults_to_0(tmp_path: Path) -> None:
    src = pro_file(tmp_path, {"math": 40, "law": 40})
    sample(src, tmp_path / "default.jsonl", "--per-category", "5")
    zero = sample(src, tmp_path / "zero.jsonl", "--per-category", "5", "--seed", "0")
    one = sample(src, tmp_path / "one.jsonl", "--per-category", "5", "--seed", "1")
    assert (tmp_path / "default.jsonl").read_bytes() == (tmp_path / "zero.jsonl").read_bytes()
    assert {t.id for t in zero} != {t.id for t in one}


def test_sampling_groups_by_the_own_category_when_relabelled(tmp_path: Path) -> None:
    domains = ["Physics"] * 10 + ["Chemistry"] * 6 + ["Biology"] * 2
    src = write_gpqa(tmp_path / "gpqa_diamond.csv", [gpqa_record(i, d) for i, d in enumerate(domains)])
    out = tmp_path / "suite.jsonl"
    assert run_import("gpqa", [src], out, "--category", "reasoning_gpqa", "--per-category", "3") == 0
    got = tasks(out)
    assert {t.category for t in got} == {"reasoning_gpqa"}
    assert Counter(t.subset for t in got) == {"Physics": 3, "Chemistry": 3, "Biology": 2}


# Bad rows: one line naming file, row (counted from 1 among data rows) and problem, nothing written;
# with --skip-bad they are left out and counted.

Bad = tuple[str, Callable[[Path], Path], int, int, str]  # FORMAT, file, bad row, good rows, a word of the problem


def csv_of(*lines: list[str]) -> Callable[[Path], Path]:
    return lambda tmp: write_csv(tmp / "anatomy_test.csv", list(lines))


def parquet_of(*rows: Row) -> Callable[[Path], Path]:
    return lambda tmp: write_parquet(tmp / "data.parquet", list(rows))


def jsonl_of(*rows: Row) -> Callable[[Path], Path]:
    return lambda tmp: write_jsonl(tmp / "data.jsonl", list(rows))


def gpqa_of(*records: Row) -> Callable[[Path], Path]:
    return lambda tmp: write_gpqa(tmp / "gpqa_diamond.csv", list(records))


def without(row: Row, key: str) -> Row:
    return {k: v for k, v in row.items() if k != key}


L = [mmlu_line(str(i)) for i in range(3)]
M = [mmlu_record("x", i) for i in range(3)]
P1, P2, P3 = pro_record(1, "math", 4, 1), pro_record(2, "law", 4, 2), pro_record(70417, "math", 4, 3)
G = [gpqa_record(i) for i in range(3)]
A = [arc_record(i, jsonl=True) for i in range(2)]
N = [arc_record(i, "1234", "1") for i in range(3)]

BAD: dict[str, Bad] = {
    "mmlu csv row without its answer": ("mmlu", csv_of(L[0], L[1], L[2][:5]), 3, 2, ""),
    "mmlu csv gold letter E": ("mmlu", csv_of(L[0], [*L[1][:5], "E"], L[2]), 2, 2, ""),
    "mmlu parquet answer 4": ("mmlu", parquet_of(M[0], {**M[1], "answer": 4}), 2, 1, ""),
    "mmlu parquet no choices": ("mmlu", parquet_of(M[0], M[1], {**M[2], "choices": []}), 3, 2, ""),
    "mmlu-pro jsonl without question": ("mmlu-pro", jsonl_of(P1, without(P3, "question"), P2), 2, 2, "question"),
    "mmlu-pro jsonl answer J of 4": ("mmlu-pro", jsonl_of({**P3, "answer": "J", "answer_index": 9}, P1, P2), 1, 2, ""),
    "mmlu-pro jsonl duplicate id": ("mmlu-pro", jsonl_of(P3, P1, P2, {**P3, "category": "law"}), 4, 3, "70417"),
    "mmlu-pro parquet no options": ("mmlu-pro", parquet_of(P1, {**P3, "options": []}, P2), 2, 2, ""),
    "mmlu-pro parquet null question": ("mmlu-pro", parquet_of({**P3, "question": None}, P1, P2), 1, 2, "question"),
    # Every GPQA question spans two lines: rows are data rows, not lines of the file.
    "gpqa row cut short": ("gpqa", gpqa_of(G[0], G[1], without(G[2], "Correct Answer")), 3, 2, "Correct Answer"),
    "gpqa duplicate Record ID": ("gpqa", gpqa_of(G[0], G[1], G[1]), 3, 2, "rec00001"),
    "arc jsonl without answerKey": ("arc", jsonl_of(A[0], without(A[1], "answerKey")), 2, 1, "answerKey"),
    "arc jsonl answerKey E of A-D": ("arc", jsonl_of({**A[0], "answerKey": "E"}, A[1]), 1, 1, ""),
    "arc jsonl no choices": ("arc", jsonl_of(A[0], arc_record(5, "", "A", jsonl=True)), 2, 1, ""),
    "arc parquet answerKey 5 of 1-4": ("arc", parquet_of(N[0], N[1], {**N[2], "answerKey": "5"}), 3, 2, ""),
}


@pytest.mark.parametrize("case", list(BAD))
def test_a_bad_row_fails_the_import_and_writes_nothing(
    case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fmt, build, row, _, word = BAD[case]
    path = build(tmp_path)
    before = files_in(tmp_path)
    assert run_import(fmt, [path], tmp_path / "suite.jsonl") == 2
    line = one_error(capsys)
    assert path.name in line and re.search(rf"\brow {row}\b", line) and word in line, line
    assert files_in(tmp_path) == before  # no suite, no temporary file left behind


@pytest.mark.parametrize("case", list(BAD))
def test_skip_bad_leaves_the_row_out_and_says_so(case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    fmt, build, _, good, _ = BAD[case]
    out = tmp_path / "suite.jsonl"
    assert run_import(fmt, [build(tmp_path)], out, "--skip-bad") == 0
    assert len(tasks(out)) == good
    assert "skipped 1 bad row" in capsys.readouterr().out


def test_skip_bad_counts_over_every_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_csv(tmp_path / "data" / "anatomy_test.csv", [mmlu_line("0"), mmlu_line("1", "F")])
    write_csv(tmp_path / "data" / "virology_test.csv", [mmlu_line("2")[:4], mmlu_line("3"), mmlu_line("4")])
    out = tmp_path / "suite.jsonl"
    assert run_import("mmlu", [tmp_path / "data"], out, "--skip-bad") == 0
    assert [t.id for t in tasks(out)] == ["mmlu/anatomy/0", "mmlu/virology/1", "mmlu/virology/2"]
    assert "skipped 2 bad rows" in capsys.readouterr().out


# Whole inputs that are wrong: one line, exit 2, nothing written


def args(fmt: str, path: Callable[[Path], Path], *flags: str) -> Callable[[Path], list[str]]:
    return lambda tmp: ["import", fmt, str(path(tmp)), "-o", str(tmp / "suite.jsonl"), *flags]


def folder(*names: str) -> Callable[[Path], Path]:
    def build(tmp: Path) -> Path:
        (tmp / "downloads").mkdir()
        for name in names:
            (tmp / "downloads" / name).write_text("# notes\n")
        return tmp / "downloads"

    return build


def no_rows(tmp: Path) -> Path:
    """MMLU-Pro Parquet with every column and no row."""
    pq.write_table(pa.Table.from_pylist([P1, P2]).slice(0, 0), tmp / "empty.parquet")
    return tmp / "empty.parquet"


WHOLE: dict[str, tuple[Callable[[Path], list[str]], str]] = {
    "unknown format": (args("hellaswag", jsonl_of(P1, P2)), "hellaswag"),
    "missing path": (args("mmlu", lambda tmp: tmp / "nothing_test.csv"), "nothing_test.csv"),
    "gpqa csv given as mmlu": (args("mmlu", gpqa_of(G[0], G[1])), "gpqa_diamond.csv"),
    "mmlu parquet given as mmlu-pro": (args("mmlu-pro", parquet_of(M[0], M[1])), "data.parquet"),
    "arc parquet without answerKey": (args("arc", parquet_of(*(without(r, "answerKey") for r in N))), "data.parquet"),
    "empty folder": (args("mmlu", folder()), "downloads"),
    "folder without a file of the format": (args("gpqa", folder("README.md")), "downloads"),
    "empty mmlu csv": (args("mmlu", lambda tmp: write_csv(tmp / "anatomy_test.csv", [])), "anatomy_test.csv"),
    "parquet of no rows": (args("mmlu-pro", no_rows), "empty.parquet"),
    "every row bad, skipped": (args("mmlu", csv_of(L[0][:5], [*L[1][:5], "Z"]), "--skip-bad"), ""),
    "--per-category with --limit": (args("mmlu-pro", jsonl_of(P1, P2), "--per-category", "1", "--limit", "2"), "limit"),
}


@pytest.mark.parametrize("case", list(WHOLE))
def test_a_wrong_input_is_one_line_and_exit_2(case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    build, word = WHOLE[case]
    argv = build(tmp_path)
    before = files_in(tmp_path)
    assert main(argv) == 2
    assert word in one_error(capsys)
    assert files_in(tmp_path) == before


def test_a_test_questions_id_does_not_depend_on_the_other_splits_imported(tmp_path: Path) -> None:
    # The whole tarball (dev, test and val of one subject) or its test folder alone: the test split's
    # questions keep one id, and the other splits' ids name their split.
    for split in ("dev", "test", "val"):
        write_csv(
            tmp_path / "data" / split / f"anatomy_{split}.csv", [mmlu_line(f"{split} q{n}", "A") for n in range(2)]
        )
    assert main(["import", "mmlu", str(tmp_path / "data"), "-o", str(tmp_path / "all.jsonl")]) == 0
    assert main(["import", "mmlu", str(tmp_path / "data" / "test"), "-o", str(tmp_path / "test.jsonl")]) == 0
    everything = {t.id: t.question for t in tasks(tmp_path / "all.jsonl")}
    alone = {t.id: t.question for t in tasks(tmp_path / "test.jsonl")}
    assert alone == {f"mmlu/anatomy/{n}": f"question test q{n}, with a comma?" for n in range(2)}
    assert alone.items() <= everything.items() and "mmlu/anatomy/dev/1" in everything and len(everything) == 6


# MMLU CSVs as people have them (issue 19, item 17): the public copies carry a header row
# (`question,A,B,C,D,answer`), some write the answer as an index 0-3 (as cais/mmlu's Parquet does).
# A header row is recognised by its content and is no data row: a question keeps its id, and a seeded
# sample picks the same questions, with or without one.

MMLU_HEADER = ["question", "A", "B", "C", "D", "answer"]


def mmlu_subject_rows(n: int) -> list[list[str]]:
    return [mmlu_line(f"q{i}", "ABCD"[i % 4]) for i in range(n)]


def as_index(line: list[str]) -> list[str]:
    return [*line[:5], str("ABCD".index(line[5]))]


def imported(tmp: Path, name: str, files: dict[str, list[list[str]]], *flags: str) -> list[Task]:
    folder = tmp / name
    for file_name, rows in files.items():
        write_csv(folder / file_name, rows)
    out = tmp / f"{name}.jsonl"
    assert run_import("mmlu", [folder], out, *flags) == 0
    return tasks(out)


@pytest.mark.parametrize("flags", [(), ("--per-category", "5", "--seed", "3"), ("--limit", "7", "--seed", "11")])
def test_an_mmlu_csv_header_row_is_no_question_and_shifts_no_id(flags: tuple[str, ...], tmp_path: Path) -> None:
    plain = {"anatomy_test.csv": mmlu_subject_rows(20), "virology_test.csv": mmlu_subject_rows(20)}
    headed = {name: [MMLU_HEADER, *rows] for name, rows in plain.items()}
    without = imported(tmp_path, "plain", plain, *flags)
    with_header = imported(tmp_path, "headed", headed, *flags)
    assert with_header == without  # the same ids, questions, options and gold letters
    assert all(t.question != "question" for t in with_header)
    if not flags:
        assert [t.id for t in without[:2]] == ["mmlu/anatomy/0", "mmlu/anatomy/1"]
        assert [t.answer for t in without[:4]] == list("ABCD")


@pytest.mark.parametrize(
    "header",
    [
        ["question", "a", "b", "c", "d", "answer"],
        ["Question", "A", "B", "C", "D", "Answer"],
        ["question", "A", "B", "C", "D", "target"],
        ["", "question", "A", "B", "C", "D", "answer"],  # pandas' index column first
    ],
    ids=["lower", "capitalised", "target", "index column"],
)
def test_the_header_spellings_of_public_copies(header: list[str], tmp_path: Path) -> None:
    rows = mmlu_subject_rows(4)
    if header[0] == "":
        rows = [[str(i), *row] for i, row in enumerate(rows)]
    got = imported(tmp_path, "copy", {"anatomy_test.csv": [header, *rows]})
    assert [(t.id, t.answer) for t in got] == [(f"mmlu/anatomy/{i}", "ABCD"[i]) for i in range(4)]


def test_mmlu_csv_answers_as_indices_0_to_3_are_the_letters(tmp_path: Path) -> None:
    plain = {"anatomy_test.csv": mmlu_subject_rows(12)}
    indexed = {"anatomy_test.csv": [MMLU_HEADER, *map(as_index, plain["anatomy_test.csv"])]}
    assert imported(tmp_path, "indexed", indexed) == imported(tmp_path, "plain", plain)


def test_an_mmlu_csv_answer_4_fails_even_with_skip_bad(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Answers counted from 1 would shift every answer by one letter: never read as such, nor skipped row by row.
    rows = [MMLU_HEADER, *([*line[:5], str("ABCD".index(line[5]) + 1)] for line in mmlu_subject_rows(8))]
    path = write_csv(tmp_path / "anatomy_test.csv", rows)
    assert run_import("mmlu", [path], tmp_path / "suite.jsonl", "--skip-bad") == 2
    line = one_error(capsys)
    assert "anatomy_test.csv: row 4" in line and "'4'" in line and "0-3" in line, line
    assert not (tmp_path / "suite.jsonl").exists()


def test_a_first_row_that_is_a_question_is_never_taken_for_a_header(tmp_path: Path) -> None:
    # A question that happens to read "question" with options named A-D... is still asked, since its answer
    # cell is a letter, not a column name.
    rows = [["question", "A", "B", "C", "D", "B"], *mmlu_subject_rows(2)]
    got = imported(tmp_path, "odd", {"anatomy_test.csv": rows})
    assert [t.id for t in got] == ["mmlu/anatomy/0", "mmlu/anatomy/1", "mmlu/anatomy/2"]
    assert got[0].question == "question" and got[0].answer == "B"
