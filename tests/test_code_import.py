"""`ocllm import humaneval | mbpp | livecodebench`: the files people have (tests/data/code/datasets/, slices of the
published files, sources in its README) become suites of code tasks through the CLI; nothing is run at import, and
LiveCodeBench's pickled private tests are read opcode by opcode, a pickle that is not one string refused unloaded."""

from __future__ import annotations

import base64
import gzip
import json
import pickle
import subprocess
import sys
import zlib
from pathlib import Path

import msgspec
import pytest
from helpers import BACKSTOP_S, one_error

from ocllm.cli import main
from ocllm.scoring.code.datasets import LCB_IMPORTS, pickled_string
from ocllm.scoring.code.fields import CodeTask

DATA = Path(__file__).parent / "data" / "code" / "datasets"


def humaneval_lines() -> list[str]:
    return gzip.decompress((DATA / "HumanEval-4.jsonl.gz").read_bytes()).decode().splitlines()


def imported(fmt: str, paths: list[Path], tmp: Path, *flags: str) -> list[CodeTask]:
    out = tmp / "suite.jsonl"
    assert main(["import", fmt, *map(str, paths), "-o", str(out), *flags]) == 0
    return [msgspec.json.decode(line, type=CodeTask) for line in out.read_bytes().splitlines()]


def passes(program: str) -> bool:
    """Runs a test program in a child interpreter (the dataset's own canonical code against the test we built)."""
    done = subprocess.run([sys.executable, "-I", "-c", program], capture_output=True, text=True, timeout=BACKSTOP_S)
    return done.returncode == 0


# --- HumanEval ---------------------------------------------------------------------------------------------------


def test_humaneval_jsonl_gz(tmp_path: Path) -> None:
    tasks = imported("humaneval", [DATA / "HumanEval-4.jsonl.gz"], tmp_path)
    rows = {r["task_id"]: r for r in map(json.loads, humaneval_lines())}
    assert [t.id for t in tasks] == ["HumanEval/0", "HumanEval/2", "HumanEval/32", "HumanEval/53"]
    for task in tasks:
        row = rows[task.id]
        assert task.code_prefix == row["prompt"] and task.test == row["test"]
        assert task.entry_point == row["entry_point"] and task.category == "humaneval" and task.kind == "function"
        assert f"`{row['entry_point']}`" in task.question and row["prompt"] not in task.question
        # the test as imported passes the canonical solution (run here, in a child, by the test; never by import)
        program = row["prompt"] + row["canonical_solution"] + "\n" + task.test + f"\ncheck({task.entry_point})\n"
        assert passes(program), task.id


def test_a_folder_of_gz_and_plain_files(tmp_path: Path) -> None:
    folder = tmp_path / "he"
    folder.mkdir()
    lines = humaneval_lines()
    (folder / "a.jsonl").write_text(lines[0] + "\n")
    with gzip.open(folder / "b.jsonl.gz", "wt") as fh:
        fh.write(lines[1] + "\n")
    assert [t.id for t in imported("humaneval", [folder], tmp_path)] == ["HumanEval/0", "HumanEval/2"]


def test_a_damaged_gz_ends_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "HumanEval.jsonl.gz"
    bad.write_bytes((DATA / "HumanEval-4.jsonl.gz").read_bytes()[:300])
    assert main(["import", "humaneval", str(bad), "-o", str(tmp_path / "s.jsonl")]) == 2
    assert "not a whole gzip file" in one_error(capsys)


def test_a_gz_of_blank_lines_is_bounded(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from ocllm.importers import Selection, import_tasks
    from ocllm.importers.bounds import Bounds

    bomb = tmp_path / "bomb.jsonl.gz"
    with gzip.open(bomb, "wb") as fh:
        fh.write(b"\n" * 5_000_000)
    with pytest.raises(Exception, match="the bound on all rows' values together"):
        import_tasks("humaneval", [bomb], Selection(), bounds=Bounds(max_total_bytes=1_000_000))


def test_a_humanevalplus_row_without_test_is_refused_with_why(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    row = json.loads(humaneval_lines()[0])
    del row["test"]
    row.update(base_input=[[[1.0, 2.0], 0.5]], plus_input=[[[1.0, 2.5], 0.1]], atol=0, contract="")
    path = tmp_path / "HumanEvalPlus.jsonl"
    path.write_text(json.dumps(row) + "\n")
    assert main(["import", "humaneval", str(path), "-o", str(tmp_path / "s.jsonl")]) == 2
    said = one_error(capsys)
    assert "row 1" in said and "running canonical_solution" in said and "runs no code" in said


# --- MBPP --------------------------------------------------------------------------------------------------------


def test_mbpp_full(tmp_path: Path) -> None:
    tasks = imported("mbpp", [DATA / "mbpp-4.jsonl"], tmp_path)
    rows = {f"mbpp/{r['task_id']}": r for r in map(json.loads, (DATA / "mbpp-4.jsonl").read_text().splitlines())}
    assert [(t.id, t.entry_point, t.category, t.subset) for t in tasks] == [
        ("mbpp/2", "similar_elements", "mbpp", "prompt"),
        ("mbpp/3", "is_not_prime", "mbpp", "prompt"),
        ("mbpp/11", "remove_Occ", "mbpp", "test"),
        ("mbpp/17", "square_perimeter", "mbpp", "test"),
    ]
    for task in tasks:
        row = rows[task.id]
        assert task.code_prefix is None and task.question.startswith(row["text"])
        assert all(a in task.question and a in task.test for a in row["test_list"])
        assert not any(a in task.test for a in row["challenge_test_list"])  # as MBPP and lm-eval score it
        assert task.test.startswith("def check(candidate):\n    globals()[")
        # the asserts call the function by name: check binds it to the candidate, so another name passes too
        renamed = row["code"].replace(f"def {task.entry_point}(", "def under_another_name(")
        assert passes(renamed + "\n" + task.test + "\ncheck(under_another_name)\n"), task.id
        assert not passes(
            "def under_another_name(*a):\n    return None\n" + task.test + "\ncheck(under_another_name)\n"
        )


def test_mbpp_setup_code_and_sanitized_imports(tmp_path: Path) -> None:
    full = {"text": "Add one.", "code": "def inc(x):\n    return x + 1", "task_id": 700,
            "test_setup_code": "import math", "test_list": ["assert inc(math.floor(1.5)) == 2"],
            "challenge_test_list": []}  # fmt: skip
    sanitized = {"prompt": "Add two.", "code": "def inc2(x):\n    return x + 2", "task_id": 12,
                 "test_imports": ["import math"], "test_list": ["assert inc2(math.floor(1.5)) == 3"],
                 "source_file": "x"}  # fmt: skip
    path = tmp_path / "mbpp.jsonl"
    path.write_text(json.dumps(full) + "\n" + json.dumps(sanitized) + "\n")
    tasks = imported("mbpp", [path], tmp_path)
    assert [(t.id, t.subset) for t in tasks] == [("mbpp/700", "train"), ("mbpp/12", "test")]
    for task, row in zip(tasks, (full, sanitized), strict=True):
        assert task.test.startswith("import math\n\ndef check(candidate):")
        assert passes(row["code"] + "\n" + task.test + f"\ncheck({task.entry_point})\n")


def test_mbpp_split_takes_one_of_mbpps_own_splits(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # MBPP's full file holds every split; an import took them all, train beside test (issue 41). MBPP's split is by
    # task id (1-10 prompt, 11-510 test, 511-600 validation, 601-974 train); MbppPlus keeps MBPP's numbers.
    rows = [{"text": f"Return {n}.", "code": f"def f{n}():\n    return {n}", "task_id": n, "test_setup_code": "",
             "test_list": [f"assert f{n}() == {n}"], "challenge_test_list": []}
            for n in (1, 10, 11, 510, 511, 600, 601, 974)]  # fmt: skip
    path = tmp_path / "mbpp.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    for split, numbers in {"prompt": (1, 10), "test": (11, 510), "validation": (511, 600), "train": (601, 974)}.items():
        tasks = imported("mbpp", [path], tmp_path, "--split", split)
        assert [(t.id, t.subset) for t in tasks] == [(f"mbpp/{n}", split) for n in numbers], split
    # Without --split: every row, as before (docs/importing.md says so); with a sample, the sample of the split.
    assert len(imported("mbpp", [path], tmp_path)) == 8
    assert [t.id for t in imported("mbpp", [path], tmp_path, "--split", "train", "--limit", "1")] in (
        ["mbpp/601"], ["mbpp/974"],
    )  # fmt: skip
    assert [t.id for t in imported("mbpp", [DATA / "MbppPlus-2.jsonl"], tmp_path, "--split", "prompt")] == [
        "Mbpp/3", "Mbpp/4",
    ]  # fmt: skip
    # Refused in one line, nothing written: a split MBPP has not, a dataset that has none, a split with no row.
    out = tmp_path / "refused.jsonl"
    full = DATA / "mbpp-4.jsonl"  # ids 2, 3, 11, 17: none of validation
    for fmt, source, split, said in (
        ("mbpp", path, "dev", "--split dev: mbpp's splits are test, train, validation, prompt"),
        ("humaneval", DATA / "HumanEval-4.jsonl.gz", "test",
         "--split is for mbpp, whose files mix its splits; humaneval files are read whole"),
        ("mbpp", full, "validation", f"{full}: none of the 4 mbpp tasks is of the split 'validation'"),
    ):  # fmt: skip
        capsys.readouterr()
        assert main(["import", fmt, str(source), "-o", str(out), "--split", split]) == 2
        assert one_error(capsys) == f"ocllm: error: {said}"
        assert not out.exists()


def test_mbpp_plus_rows_take_their_assertion(tmp_path: Path) -> None:
    tasks = imported("mbpp", [DATA / "MbppPlus-2.jsonl"], tmp_path)
    rows = [json.loads(line) for line in (DATA / "MbppPlus-2.jsonl").read_text().splitlines()]
    assert [(t.id, t.entry_point, t.category) for t in tasks] == [
        ("Mbpp/3", "is_not_prime", "mbpp+"),
        ("Mbpp/4", "heap_queue_largest", "mbpp+"),
    ]
    for task, row in zip(tasks, rows, strict=True):
        assert "'''" not in task.question and task.question.startswith("Write a")
        assert passes(row["canonical_solution"] + "\n" + task.test + f"\ncheck({task.entry_point})\n")


def test_mbpp_plus_test_field_is_run_by_check(tmp_path: Path) -> None:
    row = json.loads((DATA / "MbppPlus-2.jsonl").read_text().splitlines()[0])
    row["test"] = (
        "inputs = [[1], [2], [9]]\nresults = [True, False, True]\n"
        "for inp, exp in zip(inputs, results):\n    assert is_not_prime(*inp) == exp\n"
    )
    path = tmp_path / "MbppPlus.jsonl"
    path.write_text(json.dumps(row) + "\n")
    (task,) = imported("mbpp", [path], tmp_path)
    assert passes(row["canonical_solution"] + "\n" + task.test + "\ncheck(is_not_prime)\n")
    assert not passes("def is_not_prime(n):\n    return False\n" + task.test + "\ncheck(is_not_prime)\n")


def test_a_bad_mbpp_row_ends_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "mbpp.jsonl"
    path.write_text(json.dumps({"text": "x", "code": "", "task_id": 5, "test_list": []}) + "\n")
    assert main(["import", "mbpp", str(path), "-o", str(tmp_path / "s.jsonl")]) == 2
    assert "row 1: no 'test_list'" in one_error(capsys)


# --- LiveCodeBench -----------------------------------------------------------------------------------------------


def test_livecodebench_stdin_with_pickled_private_tests(tmp_path: Path) -> None:
    (task,) = imported("livecodebench", [DATA / "livecodebench-1.jsonl"], tmp_path)
    assert (task.id, task.category, task.subset, task.kind) == ("livecodebench/1873_A", "codeforces", "easy", "stdin")
    assert task.code_prefix == LCB_IMPORTS and task.entry_point is None and task.test is None
    assert task.io_tests is not None and len(task.io_tests) == 5  # 1 public + 4 private
    assert task.io_tests[0].input == "6\nabc\nacb\nbac\nbca\ncab\ncba\n"
    assert task.io_tests[1].input == "1\nabc\n" and task.io_tests[1].output == "YES\n"
    assert "Read the inputs from stdin" in task.question


def _lcb_row(private: str, **extra: object) -> dict[str, object]:
    row = json.loads((DATA / "livecodebench-1.jsonl").read_text())
    row["private_test_cases"] = private
    row.update(extra)
    return row


def test_livecodebench_functional(tmp_path: Path) -> None:
    # A LeetCode-shaped row written for this test (no public copy of one was found): the layout of
    # code_generation_lite, metadata's func_name, inputs one JSON value a line.
    tests = [{"input": "[2, 7, 11, 15]\n9", "output": "[0, 1]", "testtype": "functional"}]
    private = [{"input": "[3, 3]\n6", "output": "[0, 1]", "testtype": "functional"}]
    starter = "class Solution:\n    def twoSum(self, nums: List[int], target: int) -> List[int]:\n        "
    row = _lcb_row(json.dumps(private), question_id="0001", platform="leetcode", starter_code=starter,
                   public_test_cases=json.dumps(tests), metadata=json.dumps({"func_name": "twoSum"}))  # fmt: skip
    path = tmp_path / "lcb.jsonl"
    path.write_text(json.dumps(row) + "\n")
    (task,) = imported("livecodebench", [path], tmp_path)
    assert (task.kind, task.entry_point, task.category) == ("function", "Solution", "leetcode")
    assert "class Solution:" in task.question and "### Format:" in task.question
    right = "class Solution:\n    def twoSum(self, nums: List[int], target: int) -> List[int]:\n        return (0, 1)\n"
    wrong = right.replace("(0, 1)", "[1, 0]")
    assert task.test is not None
    assert passes(LCB_IMPORTS + right + task.test + "\ncheck(Solution)\n")  # a tuple counts as a list, as LCB says
    assert not passes(LCB_IMPORTS + wrong + task.test + "\ncheck(Solution)\n")


class _Hostile:
    """Unpickling this would create a file: the import must never get that far."""

    def __init__(self, path: str) -> None:
        self.path = path

    def __reduce__(self) -> tuple[object, tuple[str, str]]:
        return (open, (self.path, "w"))


def test_a_hostile_pickle_is_never_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    made = tmp_path / "pwned"
    packed = base64.b64encode(zlib.compress(pickle.dumps(_Hostile(str(made))))).decode()
    path = tmp_path / "lcb.jsonl"
    path.write_text(json.dumps(_lcb_row(packed)) + "\n")
    assert main(["import", "livecodebench", str(path), "-o", str(tmp_path / "s.jsonl")]) == 2
    said = one_error(capsys)
    assert "row 1" in said and "'private_test_cases' is a pickle that is not one string" in said
    assert "refused unloaded" in said
    assert not made.exists()


@pytest.mark.parametrize(
    ("value", "said"),
    [
        (pickle.dumps(["a list", "of strings"]), "EMPTY_LIST"),
        (pickle.dumps("one") + b"", None),
        (pickle.dumps(("a", "b")), "more than one string"),
        (b"\x80\x04\x95", "not a whole pickle"),
        (pickle.dumps(42), "BININT1"),
    ],
)
def test_only_a_pickle_of_one_string_is_read(value: bytes, said: str | None) -> None:
    from ocllm.scoring.code.datasets import NotOneString

    if said is None:
        assert pickled_string(value) == "one"
        for protocol in range(pickle.HIGHEST_PROTOCOL + 1):
            assert pickled_string(pickle.dumps("x" * 300, protocol=protocol)) == "x" * 300
        return
    with pytest.raises(NotOneString, match=said):
        pickled_string(value)


def test_private_tests_past_the_inflated_bound(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import ocllm.scoring.code.datasets as room

    packed = base64.b64encode(zlib.compress(pickle.dumps("[" + " " * 5000 + "]"))).decode()
    path = tmp_path / "lcb.jsonl"
    path.write_text(json.dumps(_lcb_row(packed)) + "\n")
    before = room.MAX_INFLATED_BYTES
    room.MAX_INFLATED_BYTES = 1000
    try:
        assert main(["import", "livecodebench", str(path), "-o", str(tmp_path / "s.jsonl")]) == 2
    finally:
        room.MAX_INFLATED_BYTES = before
    assert "inflates past" in one_error(capsys)


def test_private_tests_neither_json_nor_base64(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "lcb.jsonl"
    path.write_text(json.dumps(_lcb_row("not {json} nor base64!")) + "\n")
    assert main(["import", "livecodebench", str(path), "-o", str(tmp_path / "s.jsonl")]) == 2
    assert "neither JSON nor base64" in one_error(capsys)


def test_skip_bad_leaves_the_refused_row_out(tmp_path: Path) -> None:
    made = tmp_path / "pwned"
    good = (DATA / "livecodebench-1.jsonl").read_text()
    hostile = _lcb_row(base64.b64encode(zlib.compress(pickle.dumps(_Hostile(str(made))))).decode(), question_id="x")
    path = tmp_path / "lcb.jsonl"
    path.write_text(good + json.dumps(hostile) + "\n")
    assert [t.id for t in imported("livecodebench", [path], tmp_path, "--skip-bad")] == ["livecodebench/1873_A"]
    assert not made.exists()
