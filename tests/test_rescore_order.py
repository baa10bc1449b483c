"""A rescore keeps each task's figures in compact rows and reduces a task's votes when the next task begins (issue
29, memory): samples that come in another order (round by round, as `run --samples k` writes them; a hand-made
file that interleaves them) must give the figures of samples that come together, and the suite read a line at a
time must say what the suite read whole said."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import legacy_record, write_json
from test_samples import AGREE, DESIGN, MAJORITY

from ocllm.cli import main
from ocllm.errors import InputError
from ocllm.suites import load_suite, stream_suite


def suite_line(task_id: str, category: str) -> str:
    task = {"id": task_id, "type": "mcq", "question": "Which?", "options": ["1", "2", "3", "4"], "answer": "B"}
    return json.dumps({**task, "category": category}) + "\n"


def sample_line(task_id: str, index: int, content: str | None) -> str:
    if content is None:
        return (
            json.dumps({"task_id": task_id, "sample": index, "error": "HTTP 500", "error_kind": "http_status"}) + "\n"
        )
    return json.dumps({"task_id": task_id, "sample": index, "content": content, "finish_reason": "stop"}) + "\n"


def run_directory(folder: Path, lines: list[str]) -> Path:
    folder.mkdir()
    (folder / "suite.jsonl").write_text("".join(suite_line(t, c) for t, (c, _) in DESIGN.items()))
    (folder / "samples.jsonl").write_text("".join(lines))
    return folder


def rescored(source: Path, out: Path) -> dict:
    assert main(["rescore", str(source), "-o", str(out)]) == 0
    doc = json.loads(out.read_text())
    del doc["source"]["path"]
    return doc


def test_samples_written_round_by_round_give_the_document_of_samples_written_together(tmp_path: Path) -> None:
    together = [sample_line(t, i, a) for t, (_, answers) in DESIGN.items() for i, a in enumerate(answers)]
    rounds = [sample_line(t, i, DESIGN[t][1][i]) for i in range(4) for t in DESIGN]
    # A sample written twice (an earlier line of t2's sample 0): the later line is the one decided.
    rounds.insert(0, sample_line("t2", 0, "FINAL: D"))
    a = rescored(run_directory(tmp_path / "together", together), tmp_path / "a.json")
    b = rescored(run_directory(tmp_path / "rounds", rounds), tmp_path / "b.json")
    assert a == b
    summary = b["summary"]
    assert [(t["task_id"], t["sample"]) for t in b["tasks"]][:5] == [
        ("t1", 0),
        ("t1", 1),
        ("t1", 2),
        ("t1", 3),
        ("t2", 0),
    ]
    assert (summary["total"], summary["tasks_scored"], summary["samples_per_task"]) == (28, 7, 4)
    assert {t: (v["majority"], v["agree"]) for t, v in summary["by_task"].items()} == {
        t: (MAJORITY[t], AGREE[t]) for t in DESIGN
    }


@pytest.mark.parametrize("order", ["rounds", "reversed"])
def test_a_metrics_file_whose_task_samples_come_apart_gives_the_figures_of_one_where_they_come_together(
    tmp_path: Path, order: str
) -> None:
    """Every reader of this project yields a task's samples together; a hand-made file need not. Each run of a
    task's samples starts a row of its own, and the rows are joined (votes included) before any figure is given."""
    records = []
    for task_id, (category, answers) in DESIGN.items():
        for index, content in enumerate(answers):
            record = legacy_record(task_id, content, expected="B", category=category, sample=index)
            if content is None:
                record["error"] = "HTTP 500 after 4 attempts"
            records.append(record)
    apart = sorted(records, key=lambda r: r["sample"])  # every task's sample 0, then every task's sample 1, ...
    if order == "reversed":
        apart.reverse()  # and t7 first
    a = rescored(write_json(tmp_path / "together.json", {"lane": "L", "tasks": records}), tmp_path / "a.json")
    b = rescored(write_json(tmp_path / "apart.json", {"lane": "L", "tasks": apart}), tmp_path / "b.json")
    # (The input's verdicts against ours pair a task's samples as they come, together: not asked of them here.)
    del a["summary"]["input_verdicts"], b["summary"]["input_verdicts"]
    assert a["summary"] == b["summary"]
    assert b["summary"]["tasks_scored"] == 7 and b["summary"]["samples_per_task"] == 4
    assert b["summary"]["majority_at_k"] == pytest.approx(sum(MAJORITY.values()) / 7)
    assert {t: v["agree"] for t, v in b["summary"]["by_task"].items()} == AGREE
    for name in ("c1", "c2", "c3"):
        assert a["summary"]["by_category"][name] == b["summary"]["by_category"][name]


def refusal(read: object, path: Path) -> str:
    with pytest.raises(InputError) as caught:
        read(path)  # type: ignore[operator]
    return str(caught.value)


@pytest.mark.parametrize(
    ("content", "said"),
    [
        # An id used again, before a line that is not JSON: the id is what is said, as when read whole.
        (suite_line("a", "c") + suite_line("b", "c") + suite_line("a", "c") + "{not json\n",
         ":3: field 'id': 'a' already used on line 1"),
        # A line that is not JSON before a byte that is not UTF-8: the byte, with its offset in the file.
        (suite_line("a", "c") + "{not json\n" + suite_line("b", "c")[:-1] + "\udcff\n",
         "not UTF-8 text (byte 0xff at offset"),
        ("\n  \n", "the suite holds no tasks"),
    ],
)  # fmt: skip
def test_a_suite_read_a_line_at_a_time_is_refused_as_a_suite_read_whole(
    tmp_path: Path, content: str, said: str
) -> None:
    path = tmp_path / "suite.jsonl"
    path.write_bytes(content.encode("utf-8", "surrogateescape"))
    assert said in refusal(stream_suite, path)
    assert refusal(stream_suite, path) == refusal(load_suite, path)


def test_a_suite_read_a_line_at_a_time_holds_the_tasks_of_a_suite_read_whole(tmp_path: Path) -> None:
    """A byte-order mark, CRLF line ends and blank lines; a line separator (U+2028) inside a JSON string is part
    of the string, not a line end (suites are JSON Lines, split at "\\n" only), read alike both ways."""
    path = tmp_path / "suite.jsonl"
    lines = [suite_line(f"t{i}", "c").replace("\n", "\r\n") for i in range(3)]
    text = "\ufeff" + lines[0] + "\r\n" + lines[1] + lines[2]
    path.write_bytes(text.encode("utf-8"))
    streamed = stream_suite(path)
    assert streamed.count == 3 and list(streamed.tasks()) == load_suite(str(path)).tasks
    path.write_bytes((lines[0] + '{"id": "x\u2028y"}\n').encode("utf-8"))
    said = refusal(load_suite, path)
    assert said == f"{path}:2: missing field 'type'" and refusal(stream_suite, path) == said


def test_the_decisions_of_metrics_json_are_read_by_line_as_they_were_read_whole(tmp_path: Path) -> None:
    """A run directory's metrics.json (one task a line, as this project writes it) is indexed, not held: its
    decisions, a task's earlier verdict included, are those of the same document laid out otherwise (read whole),
    and a damaged one is nothing to compare against, as before."""
    together = [sample_line(t, i, a) for t, (_, answers) in DESIGN.items() for i, a in enumerate(answers)]
    folder = run_directory(tmp_path / "run", together)
    assert main(["rescore", str(folder), "-o", str(tmp_path / "first.json")]) == 0
    lines = (tmp_path / "first.json").read_text().split("\n")
    flipped = [
        line.replace('"correct":true', '"correct":false') if line.startswith('    {"task_id":"t5"') else line
        for line in lines
    ]
    assert flipped != lines
    documents = {}
    for layout, text in [
        ("by line", "\n".join(flipped)),
        ("indented", json.dumps(json.loads("\n".join(flipped)), indent=2)),
        ("cut off", "\n".join(flipped)[:-200]),
    ]:
        (folder / "metrics.json").write_text(text)
        documents[layout] = rescored(folder, tmp_path / f"{layout}.json")
    assert documents["by line"] == documents["indented"]
    assert documents["by line"]["summary"]["changed"] == 2  # t5's two right answers, marked wrong in metrics.json
    t5 = [t["previous"]["correct"] for t in documents["by line"]["tasks"] if t["task_id"] == "t5"]
    assert t5 == [False, False, False, False]
    assert documents["cut off"]["summary"]["changed"] == 0
    assert all(not t["previous"] for t in documents["cut off"]["tasks"])
