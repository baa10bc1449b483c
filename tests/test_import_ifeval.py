"""`ocllm import ifeval` (issue 22): IFEval's own `input_data.jsonl` and Hugging Face's copies of it (google/IFEval,
JSONL and Parquet, whose kwargs objects carry every argument of every instruction, null where unused) become
suites of instructions tasks. The files are written here in those layouts; every expected task is written by hand;
the CLI is the real entry point.

Only `punctuation:no_comma` is registered while these tests are written, so every row that must import uses it;
refusals use an id IFEval never had, which stays unknown whatever checks land later."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from helpers import one_error, write_jsonl

from ocllm.cli import main
from ocllm.models import Task
from ocllm.scoring.instructions.fields import InstructionsTask
from ocllm.suites import load_suite

Row = dict[str, Any]

# Every argument of IFEval's 25 instructions, as the Parquet of google/IFEval types them (one struct per
# instruction, every field of it null where that instruction does not use it).
HF_KWARGS = pa.struct([
    ("num_highlights", pa.int64()), ("relation", pa.string()), ("num_words", pa.int64()),
    ("num_placeholders", pa.int64()), ("prompt_to_repeat", pa.string()), ("num_paragraphs", pa.int64()),
    ("nth_paragraph", pa.int64()), ("first_word", pa.string()), ("language", pa.string()),
    ("keywords", pa.list_(pa.string())), ("keyword", pa.string()), ("frequency", pa.int64()),
    ("num_sentences", pa.int64()), ("postscript_marker", pa.string()), ("letter", pa.string()),
    ("let_relation", pa.string()), ("let_frequency", pa.int64()), ("end_phrase", pa.string()),
    ("forbidden_words", pa.list_(pa.string())), ("num_bullets", pa.int64()), ("section_spliter", pa.string()),
    ("num_sections", pa.int64()), ("capital_relation", pa.string()), ("capital_frequency", pa.int64()),
])  # fmt: skip
HF_SCHEMA = pa.schema([
    ("key", pa.int64()), ("prompt", pa.string()), ("instruction_id_list", pa.list_(pa.string())),
    ("kwargs", pa.list_(HF_KWARGS)),
])  # fmt: skip
ALL_NULL = {name: None for name in HF_KWARGS.names}

PROMPTS = {
    1001: "Describe a walk along a river at dawn. Do not use any commas in your answer.",
    1162: "Write a short riddle about a lighthouse, and make sure it contains no commas.",
    1187: "Give two polite ways to decline an invitation without using a single comma.",
    2004: "List three uses of a paperclip. Avoid commas entirely.",
}


def ifeval_line(key: int, ids: list[str] | None = None, kwargs: list[Any] | None = None) -> Row:
    """A line of IFEval's input_data.jsonl: its four fields, in its order."""
    ids = ids if ids is not None else ["punctuation:no_comma"]
    return {"key": key, "prompt": PROMPTS.get(key, f"Prompt {key}: answer without commas."),
            "instruction_id_list": ids, "kwargs": kwargs if kwargs is not None else [{} for _ in ids]}  # fmt: skip


def hf_row(key: int) -> Row:
    """The same row as google/IFEval's copy holds it: each kwargs object with every argument, null where unused."""
    return {**ifeval_line(key), "kwargs": [dict(ALL_NULL)]}


def expected(key: int) -> Task:
    return InstructionsTask(id=f"ifeval/{key}", question=PROMPTS[key],
                instructions=[{"id": "punctuation:no_comma", "kwargs": {}}], category="ifeval")  # fmt: skip


def run_import(paths: list[Path], out: Path, *flags: str) -> int:
    return main(["import", "ifeval", *map(str, paths), "-o", str(out), *flags])


def suite(path: Path) -> list[Task]:
    return [msgspec.json.decode(line, type=InstructionsTask) for line in path.read_bytes().splitlines()]


KEYS = [1001, 1162, 1187, 2004]


def test_ifeval_input_data_becomes_a_suite_of_instructions_tasks(tmp_path: Path) -> None:
    source = write_jsonl(tmp_path / "input_data.jsonl", [ifeval_line(k) for k in KEYS])
    out = tmp_path / "ifeval.jsonl"
    assert run_import([source], out) == 0
    assert suite(out) == [expected(k) for k in KEYS]
    loaded = load_suite(str(out))  # what `ocllm run` reads: the instructions pass the room's own check
    assert [t.id for t in loaded.tasks] == ["ifeval/1001", "ifeval/1162", "ifeval/1187", "ifeval/2004"]
    assert loaded.tasks[0].instructions == [{"id": "punctuation:no_comma", "kwargs": {}}]


def test_a_prompt_is_kept_exactly_as_ifeval_wrote_it(tmp_path: Path) -> None:
    # The prompt is what is sent; IFEval's repeat_prompt compares an answer with it, so not even its ends change.
    prompt = "  Say hello without commas.\nThen stop.\n"
    source = write_jsonl(tmp_path / "input_data.jsonl", [{**ifeval_line(7), "prompt": prompt}])
    out = tmp_path / "s.jsonl"
    assert run_import([source], out) == 0
    assert suite(out)[0].question == prompt


@pytest.mark.parametrize("layout", ["jsonl", "parquet"])
def test_hugging_face_copies_with_null_arguments_import_alike(tmp_path: Path, layout: str) -> None:
    rows = [hf_row(k) for k in KEYS]
    if layout == "parquet":
        source = tmp_path / "train-00000-of-00001.parquet"
        pq.write_table(pa.Table.from_pylist(rows, schema=HF_SCHEMA), source)
    else:
        source = write_jsonl(tmp_path / "ifeval_input_data.jsonl", rows)
    out = tmp_path / "ifeval.jsonl"
    assert run_import([source], out) == 0
    # The nulls are gone: the same suite, byte for byte, as from IFEval's own file.
    own = tmp_path / "own.jsonl"
    assert run_import([write_jsonl(tmp_path / "input_data.jsonl", [ifeval_line(k) for k in KEYS])], own) == 0
    assert suite(out) == [expected(k) for k in KEYS]
    assert out.read_bytes() == own.read_bytes()


def test_an_unknown_instruction_id_is_refused_naming_the_file_and_row(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = [ifeval_line(1001), ifeval_line(1162, ["punctuation:no_comma", "punctuation:no_semicolon"])]
    source = write_jsonl(tmp_path / "input_data.jsonl", rows)
    out = tmp_path / "s.jsonl"
    assert run_import([source], out) == 2
    line = one_error(capsys)
    assert f"{source}: row 2" in line
    assert "instruction 2: unknown instruction id 'punctuation:no_semicolon'" in line
    assert not out.exists()


@pytest.mark.parametrize(
    ("row", "problem"),
    [
        (ifeval_line(5, kwargs=[{"num_words": 3}]), "punctuation:no_comma takes no argument 'num_words'"),
        (ifeval_line(5, kwargs=[{}, {}]), "2 kwargs objects for 1 instruction(s)"),
        (ifeval_line(5, kwargs=["none"]), "instruction 1 (punctuation:no_comma): kwargs is not an object"),
        (ifeval_line(5, ids=[]), "no instructions"),
        ({**ifeval_line(5), "instruction_id_list": "punctuation:no_comma"}, "'instruction_id_list' is not a list"),
        ({**ifeval_line(5), "kwargs": {}}, "'kwargs' is not a list"),
        ({k: v for k, v in ifeval_line(5).items() if k != "kwargs"}, "no 'kwargs'"),
        ({k: v for k, v in ifeval_line(5).items() if k != "key"}, "no 'key'"),
        ({**ifeval_line(5), "key": True}, "'key' is not a number or text"),
        ({**ifeval_line(5), "prompt": "   "}, "'prompt' is empty"),
    ],
)
def test_a_row_whose_instructions_do_not_check_is_refused_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], row: Row, problem: str
) -> None:
    source = write_jsonl(tmp_path / "input_data.jsonl", [ifeval_line(1001), row])
    assert run_import([source], tmp_path / "s.jsonl") == 2
    line = one_error(capsys)
    assert f"{source}: row 2: " in line and problem in line, line


def test_skip_bad_leaves_a_bad_row_out_and_counts_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows = [ifeval_line(1001), ifeval_line(9, ["detectable_format:no_such_thing"]), ifeval_line(1187)]
    source = write_jsonl(tmp_path / "input_data.jsonl", rows)
    out = tmp_path / "s.jsonl"
    assert run_import([source], out, "--skip-bad") == 0
    assert [t.id for t in suite(out)] == ["ifeval/1001", "ifeval/1187"]
    said = " ".join(capsys.readouterr().out.split())
    assert "skipped 1 bad rows, the first: " in said and "row 2: instruction 1: unknown instruction id" in said


def test_a_key_seen_twice_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = write_jsonl(tmp_path / "input_data.jsonl", [ifeval_line(1001), ifeval_line(1001)])
    assert run_import([source], tmp_path / "s.jsonl") == 2
    assert "row 2: duplicate id 'ifeval/1001' (first at" in one_error(capsys)


def test_limit_and_seed_take_a_nested_seeded_sample(tmp_path: Path) -> None:
    source = write_jsonl(tmp_path / "input_data.jsonl", [ifeval_line(k) for k in range(100, 130)])

    def ids(*flags: str) -> list[str]:
        out = tmp_path / f"s{'_'.join(flags)}.jsonl"
        assert run_import([source], out, *flags) == 0
        return [t.id for t in suite(out)]

    five, ten = ids("--limit", "5"), ids("--limit", "10")
    assert len(five) == 5 and len(ten) == 10 and set(five) <= set(ten)
    assert ids("--limit", "5") == five  # the same seed, the same sample
    assert ids("--limit", "5", "--seed", "1") != five
    # One category ("ifeval"): N per category is N in all.
    assert ids("--per-category", "5") == five
    assert ids("--category", "mine", "--limit", "3")[:3] == ids("--limit", "3")
    relabelled = suite(tmp_path / "s--category_mine_--limit_3.jsonl")
    assert {(t.category, t.subset) for t in relabelled} == {("mine", "ifeval")}
