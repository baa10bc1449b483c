"""Words of notices that must fit the run they are said of (issue 30, item 6): an interrupted lane names the command
that ran it with --resume; the truncation note of a type whose text is the answer speaks of that type's passes; a Git
LFS pointer given where a data file was expected is said as one, in one line, exit 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_run_notices import scored

from ocllm.analysis.notices import run_notices
from ocllm.cli import main
from ocllm.files.file_kind import LFS_POINTER
from ocllm.sim import SimConfig, SimServer

MCQ = [{"id": f"m{n}", "type": "mcq", "question": f"{n}+{n}?", "options": [str(2 * n), "0"], "answer": "A",
        "category": "maths"} for n in range(1, 4)]  # fmt: skip
NO_COMMA = {"id": "punctuation:no_comma", "kwargs": {}}


def cut_short(run: Path) -> None:
    """What an interrupted run leaves: fewer sample lines than the suite has tasks."""
    samples = run / "samples.jsonl"
    samples.write_text(samples.read_text().splitlines(keepends=True)[0])


@pytest.mark.parametrize("command", ["run", "matrix"])
def test_an_interrupted_lane_names_the_command_that_ran_it(command: str, tmp_path: Path) -> None:
    suite = tmp_path / "maths.jsonl"
    suite.write_text("".join(json.dumps(line) + "\n" for line in MCQ))
    with SimServer(SimConfig(suites=(suite,))) as sim:
        if command == "run":
            run = tmp_path / "r"
            args = ["run", "--suite", str(suite), "--base-url", sim.base_url, "--model", "sim-baseline",
                    "--out", str(run)]  # fmt: skip
        else:
            run = tmp_path / "m" / "lane"
            config = tmp_path / "lanes.toml"
            config.write_text(f'[defaults]\nbase_url = "{sim.base_url}"\nmodel = "sim-baseline"\nsuite = '
                              f"{json.dumps(str(suite))}\n[lanes.lane]\n")  # fmt: skip
            args = ["matrix", str(config), "--out", str(tmp_path / "m")]
        assert main(args) == 0
    assert json.loads((run / "manifest.json").read_text())["command"] == command
    cut_short(run)
    assert main(["report", str(run), "-o", str(tmp_path / "page")]) == 0
    said = (tmp_path / "page" / "report.md").read_text()
    assert f"the same ocllm {command} command with --resume finishes it" in said
    other = "matrix" if command == "run" else "run"
    assert f"ocllm {other}" not in said


def test_a_run_that_did_not_record_its_command_names_both() -> None:
    (said,) = run_notices([scored(MCQ[0], "FINAL: A")], missing=2, in_suite=3)[:1]
    assert "the same ocllm run or matrix command with --resume finishes it" in said


def test_an_instructions_lane_s_truncation_note_speaks_of_its_own_passes() -> None:
    task = {"id": "i1", "type": "instructions", "question": "Write.", "instructions": [NO_COMMA]}
    substrings = {"id": "s1", "type": "required_substrings", "question": "Say alpha.", "required_substrings": ["alpha"]}
    done = [scored(task, "No commas here and it goes on", finish="length"),
            scored({**task, "id": "i2"}, "Done.", finish="stop"),
            scored(substrings, "alpha and", finish="length")]  # fmt: skip
    notices = run_notices(done)
    assert "1 of the 2 instruction-following passes (every instruction followed) came from truncated output" in (
        " ".join(notices)
    )
    (instructions,) = [n for n in notices if "instruction-following" in n]
    assert "substring" not in instructions and "followed every instruction" in instructions
    assert "1 of the 1 required-substring passes came from truncated output" in " ".join(notices)


POINTER = (LFS_POINTER + b"\noid sha256:4d7a2146\nsize 1207\n").decode()


@pytest.mark.parametrize(
    ("name", "args"),
    [
        ("test.jsonl", ["import", "bfcl"]),  # an importer (read_rows: JSONL, CSV, Parquet)
        ("train.parquet", ["import", "mmlu-pro"]),
        ("suite.jsonl", ["run", "--base-url", "http://127.0.0.1:9/v1", "--model", "m", "--suite"]),  # a suite
        ("metrics.json", ["rescore"]),  # a saved run
        ("results.jsonl", ["rescore", "--from", "lm-eval"]),  # another tool's results
    ],
)
def test_a_git_lfs_pointer_is_said_as_one_in_one_line(
    name: str, args: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pointer = tmp_path / name
    pointer.write_text(POINTER)
    out = ["-o", str(tmp_path / "out.json")] if args[0] == "rescore" else ["--out", str(tmp_path / "o")]
    if args[0] == "import":
        out = ["-o", str(tmp_path / "suite-out.jsonl")]
    assert main([*args, str(pointer), *out]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0, err
    assert "a Git LFS pointer, not the file itself" in err and "git lfs pull" in err and str(pointer) in err
