"""`ocllm import gsm8k | math | aime` (issue 20): the math datasets' files, written here in the layouts their
publishers ship (openai/gsm8k, hendrycks MATH and HuggingFaceH4/MATH-500, the AIME sets of AI-MO, Maxwell-Jia,
gneubig, opencompass and MathArena), become suites of math tasks. Every expected id, gold and category is
written by hand; the CLI is the real entry point."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec
import pytest
from helpers import one_error, write_jsonl
from test_import import write_csv, write_parquet

from ocllm.cli import main
from ocllm.models import Task
from ocllm.scoring.math.fields import MathTask
from ocllm.scoring.math.golds import aime_integer, gsm8k_gold, last_boxed, level_name, without_thousands_commas

Row = dict[str, Any]


def run_import(fmt: str, paths: list[Path], out: Path, *flags: str) -> int:
    return main(["import", fmt, *map(str, paths), "-o", str(out), *flags])


def suite(path: Path) -> list[Task]:
    return [msgspec.json.decode(line, type=MathTask) for line in path.read_bytes().splitlines()]


def imported(fmt: str, paths: list[Path], tmp: Path, *flags: str) -> list[Task]:
    out = tmp / "suite.jsonl"
    assert run_import(fmt, paths, out, *flags) == 0
    return suite(out)


def summary(tasks: list[Task]) -> list[tuple[str, str | None, str, str | None]]:
    return [(t.id, t.answer, t.category, t.subset) for t in tasks]


# --- the gold a row holds --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("solution", "gold"),
    [
        (r"So $x = \boxed{5}$.", "5"),
        (r"The sum is $\boxed{\frac{1}{2}}$.", r"\frac{1}{2}"),  # nested braces
        (r"$\boxed{\left( 3, \frac{\pi}{2} \right)}$", r"\left( 3, \frac{\pi}{2} \right)"),
        (r"First $\boxed{3}$, but checking again gives $\boxed{4}$.", "4"),  # several boxes: the last
        (r"$\boxed{\text{\boxed{2}}}$ then nothing", r"\text{\boxed{2}}"),  # a box inside a box is the outer one's
        (r"Thus $\fbox{12}$.", "12"),
        (r"Thus the answer is $\boxed 2$.", "2"),  # MATH writes a few boxes without braces
        (r"$\boxed{\{1, 2\}}$", r"\{1, 2\}"),  # escaped braces are text
        (r"$\boxed{3}$ and later $\boxed{4$", None),  # the last box never closes: no gold can be told
        ("no box at all", None),
        (r"$\boxed{}$", None),
    ],
)
def test_the_last_box_of_a_solution(solution: str, gold: str | None) -> None:
    assert last_boxed(solution) == gold


@pytest.mark.parametrize(
    ("answer", "gold"),
    [
        ("She sells 16 - 3 - 4 = <<16-3-4=9>>9 eggs.\n#### 18", "18"),
        ("1,000 + 234 = 1,234\n#### 1,234", "1234"),
        ("The total is #### 12 ... no, the total is\n#### 1,000,000", "1000000"),  # after the LAST ####
        ("#### -3", "-3"),
        ("####  3,5 ", "3,5"),  # not a thousands separator: kept as written
        ("no marker here: 18", None),
        ("#### ", None),
    ],
)
def test_the_gold_of_a_gsm8k_answer(answer: str, gold: str | None) -> None:
    assert gsm8k_gold(answer) == gold


def test_thousands_commas_and_aime_integers_and_levels() -> None:
    assert without_thousands_commas("12,345.5") == "12345.5"
    assert without_thousands_commas("1,2") == "1,2"
    assert [aime_integer(v) for v in ("033", 33, 33.0, "0", "000", " 7 ")] == ["33", "33", "33", "0", "0", "7"]
    assert [aime_integer(v) for v in ("3.5", 1000, -1, "12a", "", True, None, 2.5)] == [None] * 8
    assert [level_name(v) for v in (5, "5", "Level 3", "Level ?", None)] == [
        "Level 5", "Level 5", "Level 3", "Level ?", None,
    ]  # fmt: skip


# --- GSM8K -----------------------------------------------------------------------------------------------

SOLUTION = "Natalia sold 48/2 = <<48/2=24>>24 clips in May.\nNatalia sold 48+24 = <<48+24=72>>72 clips altogether."
GSM8K = [
    {"question": "Natalia sold clips to 48 of her friends in April... How many?", "answer": f"{SOLUTION}\n#### 72"},
    {"question": "A house costs $1,000 more than...?", "answer": "It costs 1,000 + 500 = 1,500.\n#### 1,500"},
    {"question": "How far?", "answer": "It went 5 km back.\n#### -5"},
]


@pytest.mark.parametrize("layout", ["parquet", "jsonl"])
def test_gsm8k_in_the_published_layouts(layout: str, tmp_path: Path) -> None:
    if layout == "parquet":
        path = write_parquet(tmp_path / "main" / "test-00000-of-00001.parquet", GSM8K)
    else:
        path = write_jsonl(tmp_path / "grade_school_math" / "data" / "test.jsonl", GSM8K)
    tasks = imported("gsm8k", [path], tmp_path)
    assert summary(tasks) == [
        ("gsm8k/0", "72", "gsm8k", None), ("gsm8k/1", "1500", "gsm8k", None), ("gsm8k/2", "-5", "gsm8k", None),
    ]  # fmt: skip
    assert [t.question for t in tasks] == [row["question"] for row in GSM8K]
    assert {t.type for t in tasks} == {"math"}
    # The worked solution is the answer key's working, not the question: it stays out of the suite.
    text = (tmp_path / "suite.jsonl").read_text()
    assert "clips in May" not in text and "####" not in text


def test_gsm8k_train_ids_name_their_split_and_test_ids_stay(tmp_path: Path) -> None:
    test = write_parquet(tmp_path / "main" / "test-00000-of-00001.parquet", GSM8K[:2])
    train = write_parquet(tmp_path / "main" / "train-00000-of-00001.parquet", GSM8K[2:])
    tasks = imported("gsm8k", [tmp_path / "main"], tmp_path)
    assert [t.id for t in tasks] == ["gsm8k/0", "gsm8k/1", "gsm8k/train/0"]
    assert [t.id for t in imported("gsm8k", [test], tmp_path, "--force")] == ["gsm8k/0", "gsm8k/1"]
    assert train.exists()


# --- MATH ------------------------------------------------------------------------------------------------

MATH500 = [
    {
        "problem": r"Convert the point $(0,3)$ in rectangular coordinates to polar coordinates.",
        "solution": r"... so the polar coordinates are $\boxed{\left( 3, \frac{\pi}{2} \right)}.$",
        "answer": r"\left( 3, \frac{\pi}{2} \right)",
        "subject": "Precalculus",
        "level": 2,
        "unique_id": "test/precalculus/807.json",
    },
    {
        "problem": "Find all primes below 8.",
        "solution": r"They are $\boxed{2, 3, 5, 7}$.",
        "answer": "2, 3, 5, 7",
        "subject": "Number Theory",
        "level": 1,
        "unique_id": "test/number_theory/1.json",
    },
]
HENDRYCKS = [
    {"problem": "What is $1+1$?", "level": "Level 1", "type": "Algebra", "solution": r"It is $\boxed{2}$."},
    {
        "problem": "How many ways?",
        "level": "Level 5",
        "type": "Counting & Probability",
        "solution": r"First $\boxed{10}$ ways, but we counted twice, so $\dfrac{10}{2} = \boxed{\dfrac{10}{2}}$.",
    },
    {"problem": "And $2+2$?", "level": "Level 2", "type": "Algebra", "solution": r"$\boxed{{4}}$"},
]


@pytest.mark.parametrize("layout", ["parquet", "jsonl"])
def test_math_500_keeps_its_answer_subject_level_and_unique_id(layout: str, tmp_path: Path) -> None:
    name = "test-00000-of-00001.parquet" if layout == "parquet" else "test.jsonl"
    path = (write_parquet if layout == "parquet" else write_jsonl)(tmp_path / name, MATH500)
    tasks = imported("math", [path], tmp_path)
    assert summary(tasks) == [
        ("math/test/precalculus/807.json", r"\left( 3, \frac{\pi}{2} \right)", "Precalculus", "Level 2"),
        ("math/test/number_theory/1.json", "2, 3, 5, 7", "Number Theory", "Level 1"),
    ]
    assert tasks[0].question == MATH500[0]["problem"]
    assert r"\boxed" not in (tmp_path / "suite.jsonl").read_text()  # no solution kept


@pytest.mark.parametrize("layout", ["parquet", "jsonl"])
def test_hendrycks_math_takes_the_last_box_of_the_solution(layout: str, tmp_path: Path) -> None:
    name = "test-00000-of-00001.parquet" if layout == "parquet" else "test.jsonl"
    path = (write_parquet if layout == "parquet" else write_jsonl)(tmp_path / name, HENDRYCKS)
    assert summary(imported("math", [path], tmp_path)) == [
        ("math/test/algebra/0", "2", "Algebra", "Level 1"),
        ("math/test/counting_and_probability/0", r"\dfrac{10}{2}", "Counting & Probability", "Level 5"),
        ("math/test/algebra/1", "{4}", "Algebra", "Level 2"),
    ]


def test_hendrycks_subject_folders_get_distinct_ids(tmp_path: Path) -> None:
    # EleutherAI/hendrycks_math: one folder per subject, each with files of the same names.
    data = tmp_path / "hendrycks_math"
    write_parquet(data / "algebra" / "test-00000-of-00001.parquet", [HENDRYCKS[0], HENDRYCKS[2]])
    write_parquet(data / "algebra" / "train-00000-of-00001.parquet", [HENDRYCKS[0]])
    write_parquet(data / "counting_and_probability" / "test-00000-of-00001.parquet", [HENDRYCKS[1]])
    assert [t.id for t in imported("math", [data], tmp_path)] == [
        "math/test/algebra/0", "math/test/algebra/1", "math/train/algebra/0", "math/test/counting_and_probability/0",
    ]  # fmt: skip


def test_math_per_category_samples_each_subject_and_nests(tmp_path: Path) -> None:
    rows = [{**HENDRYCKS[0], "problem": f"algebra {i}"} for i in range(6)]
    rows += [{**HENDRYCKS[1], "problem": f"counting {i}"} for i in range(3)]
    path = write_jsonl(tmp_path / "test.jsonl", rows)
    two = imported("math", [path], tmp_path, "--per-category", "2")
    assert sorted(t.category for t in two) == ["Algebra", "Algebra", "Counting & Probability", "Counting & Probability"]
    four = imported("math", [path], tmp_path, "--per-category", "4", "--force")
    assert {t.id for t in two} <= {t.id for t in four}
    assert len(four) == 4 + 3
    five = imported("math", [path], tmp_path, "--limit", "3", "--force")
    assert sorted(t.category for t in five) == ["Algebra", "Algebra", "Counting & Probability"]


# --- AIME ------------------------------------------------------------------------------------------------

AIMO = [  # AI-MO/aimo-validation-aime: a running id, the AoPS address, answers as text (some with a leading 0)
    {
        "id": 60,
        "problem": "Find the number...",
        "solution": "long",
        "answer": "033",
        "url": "https://artofproblemsolving.com/wiki/index.php/2022_AIME_I_Problems/Problem_1",
    },
    {
        "id": 61,
        "problem": "Let $x$...",
        "solution": "long",
        "answer": "204",
        "url": "https://artofproblemsolving.com/wiki/index.php/2024_AIME_II_Problems/Problem_4",
    },
]
MAXWELL = [  # Maxwell-Jia/AIME_2024: `ID` "2024-I-1", capitalised fields, integer answers
    {"ID": "2024-I-1", "Problem": "Every morning Aya...", "Solution": "long", "Answer": 204},
    {"ID": "2024-II-15", "Problem": "Find the number of rectangles...", "Solution": "long", "Answer": 315},
]
GNEUBIG = [  # gneubig/aime-1983-2024: a CSV with Year, Problem Number, Question, Answer, Part
    ["ID", "Year", "Problem Number", "Question", "Answer", "Part"],
    ["1983-1", "1983", "1", "Let $x$, $y$ and $z$ all exceed 1...", "60", ""],
    ["2024-II-4", "2024", "4", "Let $x,y$ and $z$ be positive reals...", "33", "II"],
]


def test_aime_in_each_published_layout(tmp_path: Path) -> None:
    assert summary(imported("aime", [write_jsonl(tmp_path / "aimo.jsonl", AIMO)], tmp_path)) == [
        ("aime/2022-I-1", "33", "2022", None), ("aime/2024-II-4", "204", "2024", None),
    ]  # fmt: skip
    path = write_parquet(tmp_path / "aime_2024_problems.parquet", MAXWELL)
    tasks = imported("aime", [path], tmp_path, "--force")
    assert summary(tasks) == [("aime/2024-I-1", "204", "2024", None), ("aime/2024-II-15", "315", "2024", None)]
    assert tasks[0].question == "Every morning Aya..."
    csv_path = write_csv(tmp_path / "AIME_Dataset_1983_2024.csv", GNEUBIG)
    assert summary(imported("aime", [csv_path], tmp_path, "--force")) == [
        ("aime/1983-1", "60", "1983", None), ("aime/2024-II-4", "33", "2024", None),
    ]  # fmt: skip
    # opencompass/AIME2025 (`question`, `answer`, no id) and MathArena (`problem_idx`): the file names the source.
    oc = write_jsonl(tmp_path / "aime2025-I.jsonl", [{"question": "Find the sum...", "answer": "70"}] * 2)
    assert summary(imported("aime", [oc], tmp_path, "--force")) == [
        ("aime/aime2025-I/1", "70", "aime", None), ("aime/aime2025-I/2", "70", "aime", None),
    ]  # fmt: skip
    arena = write_parquet(tmp_path / "arena" / "train-00000-of-00001.parquet", [
        {"problem_idx": 3, "problem": "The 9 members...", "answer": 16},
    ])  # fmt: skip
    assert summary(imported("aime", [arena], tmp_path, "--force")) == [
        ("aime/train-00000-of-00001/3", "16", "aime", None)
    ]
    assert "long" not in (tmp_path / "suite.jsonl").read_text()


def test_aime_year_part_and_number_fields_make_the_id(tmp_path: Path) -> None:
    rows = [{"year": "2025", "part": "I", "problem_number": 2, "problem": "p", "answer": 5}]
    assert summary(imported("aime", [write_jsonl(tmp_path / "a.jsonl", rows)], tmp_path)) == [
        ("aime/2025-I-2", "5", "2025", None)
    ]


# --- bad rows: one line naming the file and the row; --skip-bad leaves them out -------------------------

Bad = tuple[str, Callable[[Path], Path], int, int, str]  # FORMAT, file, bad row, good rows, words of the problem

BAD: dict[str, Bad] = {
    "gsm8k answer without ####": (
        "gsm8k", lambda t: write_jsonl(t / "test.jsonl", [GSM8K[0], {**GSM8K[1], "answer": "1,500"}]), 2, 1, "####",
    ),
    "gsm8k without question": (
        "gsm8k", lambda t: write_parquet(t / "test.parquet", [GSM8K[0], GSM8K[1], {"answer": "#### 3"}]), 3, 2,
        "question",
    ),
    "math solution without a box": (
        "math", lambda t: write_jsonl(t / "test.jsonl", [HENDRYCKS[0], {**HENDRYCKS[1], "solution": "It is 5."}]), 2,
        1, "boxed",
    ),
    "math box never closed": (
        "math", lambda t: write_jsonl(t / "test.jsonl", [{**HENDRYCKS[0], "solution": r"$\boxed{\frac{1}{2}$"}]), 1,
        0, "boxed",
    ),
    "math without subject or type": (
        "math", lambda t: write_jsonl(t / "test.jsonl", [MATH500[0], {"problem": "p", "answer": "1"}]), 2, 1, "type",
    ),
    "math duplicate unique_id": (
        "math", lambda t: write_jsonl(t / "test.jsonl", [MATH500[0], MATH500[1], MATH500[0]]), 3, 2, "807.json",
    ),
    "aime answer not an integer": (
        "aime", lambda t: write_parquet(t / "a.parquet", [MAXWELL[0], {**MAXWELL[1], "Answer": 2.5}]), 2, 1,
        "not an integer",
    ),
    "aime answer 1000": (
        "aime", lambda t: write_csv(t / "a.csv", [*GNEUBIG[:2], [*GNEUBIG[2][:4], "1000", "II"]]), 2, 1, "1000",
    ),
    "aime without problem": (
        "aime", lambda t: write_jsonl(t / "a.jsonl", [{"id": "x", "answer": "3"}, AIMO[0]]), 1, 1, "problem",
    ),
}  # fmt: skip


@pytest.mark.parametrize("case", list(BAD))
def test_a_bad_math_row_fails_the_import_and_writes_nothing(
    case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fmt, build, row, _, word = BAD[case]
    path = build(tmp_path)
    out = tmp_path / "suite.jsonl"
    assert run_import(fmt, [path], out) == 2
    line = one_error(capsys)
    assert path.name in line and re.search(rf"\brow {row}\b", line) and word in line, line
    assert not out.exists()


@pytest.mark.parametrize("case", [c for c in BAD if BAD[c][3] > 0])
def test_skip_bad_leaves_the_math_row_out(case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    fmt, build, _, good, _ = BAD[case]
    out = tmp_path / "suite.jsonl"
    assert run_import(fmt, [build(tmp_path)], out, "--skip-bad") == 0
    assert len(suite(out)) == good
    printed = capsys.readouterr().out
    assert "skipped 1 bad row" in printed and "gold letters" not in printed


def test_a_bad_row_keeps_its_place_so_later_ids_do_not_shift(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "test.jsonl", [GSM8K[0], {**GSM8K[1], "answer": "no gold"}, GSM8K[2]])
    assert [t.id for t in imported("gsm8k", [path], tmp_path, "--skip-bad")] == ["gsm8k/0", "gsm8k/2"]


def test_a_file_of_another_suffix_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "test.csv"
    path.write_text("question,answer\nq,#### 1\n")
    assert run_import("gsm8k", [path], tmp_path / "suite.jsonl") == 2
    assert "test.csv" in one_error(capsys)
