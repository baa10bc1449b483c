"""`ocllm import bfcl-multi-turn` (issue 43) on BFCL's files as published: the installed bfcl-eval's data folder
(requirements/bfcl.lock, installed without its dependencies by `make test`), and copies of its layout in a
temporary folder, each broken one way. The CLI is the real entry point; what is expected is read from BFCL's own
files (the docs, the entries), never written here."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from helpers import one_error, read_jsonl

from ocllm.cli import main
from ocllm.scoring.tool_use import bfcl_files, bfcl_tasks
from ocllm.scoring.tool_use.environments import bfcl_code

bfcl_eval = pytest.importorskip("bfcl_eval", reason="no bfcl-eval here (make test installs requirements/bfcl.lock)")

PACKAGE = Path(bfcl_eval.__file__).parent
DATA = PACKAGE / "data"
BACKENDS = PACKAGE / bfcl_code.INSIDE_PACKAGE


def _first(path: Path, number: int = 1) -> dict[str, Any]:
    with path.open(encoding="utf-8") as fh:
        for _ in range(number - 1):
            fh.readline()
        return json.loads(fh.readline())  # type: ignore[no-any-return]


def _docs(name: str) -> list[dict[str, Any]]:
    return read_jsonl(DATA / "multi_turn_func_doc" / bfcl_files.DOC_FILES[name])


def run_import(paths: list[Path], out: Path) -> int:
    return main(["import", "bfcl-multi-turn", *map(str, paths), "-o", str(out)])


@pytest.fixture(scope="module")
def miss_func(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    out = tmp_path_factory.mktemp("import") / "suite.jsonl"
    assert run_import([DATA / "BFCL_v4_multi_turn_miss_func.json"], out) == 0
    return {line["id"]: line for line in read_jsonl(out)}


def test_a_miss_func_entry_becomes_a_tool_use_task(miss_func: dict[str, dict[str, Any]]) -> None:
    entry = _first(DATA / "BFCL_v4_multi_turn_miss_func.json")
    line = miss_func["bfcl/multi_turn_miss_func_0"]
    assert (line["type"], line["category"], len(miss_func)) == ("tool_use", "miss_func", 200)
    state = line["environments"]["bfcl"]
    assert state["classes"] == entry["involved_classes"] == ["TwitterAPI", "GorillaFileSystem"]
    assert state["long_context"] is False
    assert state["backends"] == {"sha256": bfcl_code.folder_digest(BACKENDS), "from": "bfcl-eval 2026.3.23"}
    # The configs as JSON text keep the file's order (ls lists a folder in it); the suite's keys are sorted.
    assert state["initial_config"] == json.dumps({c: entry["initial_config"][c] for c in entry["involved_classes"]})
    # The tools: both classes' docs in that order, `sort` held out, each as BFCL's FC handlers convert it.
    docs = [*_docs("TwitterAPI"), *_docs("GorillaFileSystem")]
    names = [tool["function"]["name"] for tool in line["tools"]]
    assert entry["missed_function"] == {"3": ["sort"]}
    assert names == [doc["name"] for doc in docs if doc["name"] != "sort"]
    cd = next(tool["function"] for tool in line["tools"] if tool["function"]["name"] == "cd")
    doc = next(doc for doc in docs if doc["name"] == "cd")
    assert cd["description"] == (
        doc["description"] + " Note that the provided function is in Python 3 syntax."
        + " The response field has the following schema: " + json.dumps(doc["response"])
    )  # fmt: skip
    assert cd["parameters"] == {**doc["parameters"], "type": "object"}
    # The held-out turn: BFCL's sentence, and `sort` offered from it on, without the Python 3 note.
    turns = line["user_turns"]
    assert [bool(messages) for messages in entry["question"]] == [True, True, True, False, True]
    assert turns[3]["content"] == "I have updated some more functions you can choose from. What about now?"
    (added,) = turns[3]["tools_added"]
    assert added["function"]["name"] == "sort" and "Python 3" not in added["function"]["description"]
    assert [turn["content"] for turn in turns[:3]] == [m[0]["content"] for m in entry["question"][:3]]
    assert line["question"] == turns[0]["content"]


def test_the_ground_truth_becomes_each_turns_expected_calls(miss_func: dict[str, dict[str, Any]]) -> None:
    truth = _first(DATA / "possible_answer" / "BFCL_v4_multi_turn_miss_func.json")["ground_truth"]
    turns = miss_func["bfcl/multi_turn_miss_func_0"]["user_turns"]
    assert truth[2] == [] and turns[2]["expected_calls"] == []  # the turn that needs the held-out function
    assert truth[3] == ["sort('final_report.pdf')"]  # positional, named by the signature
    assert turns[3]["expected_calls"] == [{"name": "sort", "arguments": {"file_name": "final_report.pdf"}}]
    assert truth[0][2] == "mv(source='final_report.pdf', destination='temp')"
    assert turns[0]["expected_calls"][2] == {"name": "mv",
                                             "arguments": {"source": "final_report.pdf", "destination": "temp"}}


def test_a_float_parameter_is_a_number_with_bfcls_format_and_note(tmp_path: Path) -> None:
    out = tmp_path / "suite.jsonl"
    assert run_import([DATA / "BFCL_v4_multi_turn_base.json"], out) == 0
    tools = {t["function"]["name"]: t["function"] for line in read_jsonl(out) for t in line["tools"]}
    doc = next(doc for doc in _docs("MathAPI") if doc["name"] == "logarithm")
    assert doc["parameters"]["properties"]["value"]["type"] == "float"
    assert tools["logarithm"]["parameters"]["properties"]["value"] == {
        "type": "number", "format": "float",
        "description": doc["parameters"]["properties"]["value"]["description"] + " This is a float type value.",
    }  # fmt: skip


def test_positional_arguments_are_named_in_the_signatures_order() -> None:
    """TravelAPI.purchase_insurance's doc lists insurance_cost before booking_id; its signature the other way."""
    source = (BACKENDS / "travel_booking.py").read_bytes()
    methods = bfcl_files.signatures(source, "TravelAPI")
    doc = next(doc for doc in _docs("TravelAPI") if doc["name"] == "purchase_insurance")
    assert list(doc["parameters"]["properties"]) != methods["purchase_insurance"]
    call = bfcl_tasks.call_of("purchase_insurance('t', 'comprehensive', 'b1', 50.0, 'c1')", methods)
    assert call["arguments"] == {"access_token": "t", "insurance_type": "comprehensive", "booking_id": "b1",
                                 "insurance_cost": 50.0, "card_id": "c1"}  # fmt: skip


def copy_of(tmp: Path, name: str = "BFCL_v4_multi_turn_base.json", rows: int = 3) -> Path:
    """BFCL's layout with the first rows of one question file: bfcl_eval/data/<questions>, possible_answer/,
    multi_turn_func_doc/, and bfcl_eval/eval_checker/multi_turn_eval/func_source_code/."""
    data = tmp / "bfcl_eval" / "data"
    for folder in (data, data / "possible_answer"):
        folder.mkdir(parents=True, exist_ok=True)
        original = (DATA / folder.relative_to(data) / "BFCL_v4_multi_turn_base.json").read_text(encoding="utf-8")
        (folder / name).write_text("".join(original.splitlines(keepends=True)[:rows]), encoding="utf-8")
    shutil.copytree(DATA / "multi_turn_func_doc", data / "multi_turn_func_doc")
    shutil.copytree(BACKENDS, tmp / "bfcl_eval" / bfcl_code.INSIDE_PACKAGE)
    return data


def test_a_copy_and_v3_names_import_alike(tmp_path: Path) -> None:
    v4, v3 = copy_of(tmp_path / "v4"), copy_of(tmp_path / "v3", "BFCL_v3_multi_turn_base.json")
    assert run_import([v4.parent], tmp_path / "v4.jsonl") == 0  # the package's root: its data folder
    assert run_import([v3], tmp_path / "v3.jsonl") == 0
    mine, theirs = read_jsonl(tmp_path / "v4.jsonl"), read_jsonl(tmp_path / "v3.jsonl")
    assert [line["id"] for line in mine] == ["bfcl/multi_turn_base_0", "bfcl/multi_turn_base_1",
                                            "bfcl/multi_turn_base_2"]  # fmt: skip
    # A copy outside an installed package: the same code (digest), said as a copy.
    assert [line["environments"]["bfcl"]["backends"]["from"] for line in mine] == ["a copy of BFCL's code"] * 3
    assert mine == theirs


def _broken(tmp: Path, how: str) -> Path:
    data = copy_of(tmp)
    question = data / "BFCL_v4_multi_turn_base.json"
    answers = data / "possible_answer" / question.name
    if how == "no answers":
        answers.unlink()
    elif how == "not json":
        question.write_text(question.read_text(encoding="utf-8") + "{not json\n", encoding="utf-8")
    elif how == "ids":
        answers.write_text(answers.read_text(encoding="utf-8").replace("multi_turn_base_1", "multi_turn_base_9"))
    elif how == "turns":
        row = json.loads(answers.read_text(encoding="utf-8").splitlines()[0])
        row["ground_truth"].append([])
        rest = answers.read_text(encoding="utf-8").splitlines(keepends=True)[1:]
        answers.write_text(json.dumps(row) + "\n" + "".join(rest), encoding="utf-8")
    elif how == "eval":
        answers.write_text(answers.read_text(encoding="utf-8").replace("cd(folder='document')", "cd(folder=open('x'))"))
    elif how == "no backends":
        shutil.rmtree(tmp / "bfcl_eval" / "eval_checker")
    elif how == "no docs":
        (data / "multi_turn_func_doc" / "posting_api.json").unlink()
    return data


@pytest.mark.parametrize(
    ("how", "said"),
    [
        ("no answers", "its possible answers are not beside it ("),
        ("not json", "BFCL_v4_multi_turn_base.json: row 4: not a JSON line"),
        ("ids", "row 2: no possible answer for 'multi_turn_base_1'"),
        ("turns", "row 1: 4 turns, but its possible answer"),
        ("eval", "\"cd(folder=open('x'))\": an argument is not a literal"),
        ("no backends", "BFCL's backends (eval_checker/multi_turn_eval/func_source_code/) are not beside"),
        ("no docs", "row 1: no function docs for TwitterAPI"),
        ("nothing", "no BFCL multi-turn question files"),
    ],
)
def test_bad_inputs_are_refused_in_one_line(
    how: str, said: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = _broken(tmp_path, how) if how != "nothing" else DATA / "multi_turn_func_doc"
    assert run_import([data], tmp_path / "suite.jsonl") == 2
    assert said in one_error(capsys)
    assert not (tmp_path / "suite.jsonl").exists()
